"""Drives the real main window for `tokexplorer bench --gui`: how fast the inspector follows the
caret and the selection on a book-length text. Measures only; it asserts nothing.

A selection's latency runs from moving the editor's cursor to a random point of the visible text
(as a click does) to the end of the inspector's refresh plus one synchronous repaint of the whole
panel: what the user waits for before the panel shows the new token. The view is scrolled to a
random place of the text between clicks, untimed. A 5 ms timer meanwhile measures the UI loop's
longest stall.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication

from tokexplorer.core.registry import builtin_names
from tokexplorer.gui.app import settled
from tokexplorer.gui.main_window import MainWindow
from tokexplorer.core.positions import utf16_len
from tokexplorer.gui.bench.typing import EventLoop


@dataclass
class SelectionRun:
    name: str
    token_s: list[float] = field(default_factory=list)  # caret put into a random token
    select_all_s: list[float] = field(default_factory=list)  # the whole text selected
    stall_s: float = 0.0


def measure_selection(path: Path, n_tokens: int, names: list[str] | None = None,
                      select_all: int = 3) -> list[SelectionRun]:
    """Open `path`, then per tokenizer put the caret into `n_tokens` random tokens and select the
    whole text `select_all` times, timing the inspector each time."""
    app = QApplication.instance() or QApplication(["tokexplorer-bench"])
    app.setStyle("Fusion")
    window = MainWindow()
    window.resize(1100, 720)
    window.show()
    window.show_view("inspector")
    loop = EventLoop()
    window.documents.open_text(Path(path))
    if not loop.run(300, lambda: window.state.path is not None and settled(window)):
        raise RuntimeError(f"{path} did not open within 300 s")
    editor, panel = window.editor, window.inspector
    text = editor.display_text()  # document positions: the text as Qt holds it
    rng = random.Random(3)
    runs = []

    def timed(move) -> float | None:
        t0 = time.perf_counter()
        move()
        if not loop.run(5, lambda: panel.up_to_date and panel.refreshed_at > t0):
            return None
        refreshed = panel.refreshed_at
        t1 = time.perf_counter()
        panel.repaint()
        return refreshed - t0 + time.perf_counter() - t1

    for name in names or builtin_names():
        window.state.set_tokenizer(name)
        loop.run(300, lambda: settled(window))
        run = SelectionRun(name)
        loop.start_meter()
        for _ in range(n_tokens):
            cursor = editor.textCursor()
            cursor.setPosition(utf16_len(text[:rng.randrange(len(text))]))
            editor.setTextCursor(cursor)
            loop.run(rng.uniform(0.05, 0.1))
            vp = editor.viewport()
            point = QPoint(rng.randrange(vp.width() // 2), rng.randrange(vp.height()))
            cursor = editor.cursorForPosition(point)
            latency = timed(lambda: editor.setTextCursor(cursor))
            if latency is not None:
                run.token_s.append(latency)
        for _ in range(select_all):
            loop.run(0.05)
            editor.moveCursor(editor.textCursor().MoveOperation.Start)
            loop.run(0.05)
            latency = timed(editor.selectAll)
            if latency is not None:
                run.select_all_s.append(latency)
        run.stall_s = loop.stop_meter()
        runs.append(run)
    editor.document().setModified(False)
    window.close()
    return runs
