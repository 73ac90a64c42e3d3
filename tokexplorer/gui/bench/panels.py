"""Drives the real main window for `tokexplorer bench --panels` (tokexplorer/bench/panels.py makes
the table): on a book, how long a selected token takes to reach the explorer panels. Measures only.

Two ways to select: moving the caret onto a token on the page (the merge tree and the encode trace
follow), and picking a row in the vocabulary (the merge tree follows, the editor jumps to the
token's next occurrence, colouring lines it has not shown before, and the trace follows the caret). Each is timed from the action to the moment every
panel is up to date and Qt has painted what changed, with the three docks floating so that all are open at once; a
5 ms timer measures the longest stall of the UI loop meanwhile.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PySide6.QtWidgets import QApplication

from tokexplorer.gui.app import settled
from tokexplorer.gui.main_window import MainWindow
from tokexplorer.gui.bench.typing import EventLoop


@dataclass
class SelectionRun:
    name: str
    caret_s: list[float] = field(default_factory=list)  # caret onto a token -> panels repainted
    vocab_s: list[float] = field(default_factory=list)  # vocabulary row picked -> panels repainted
    stall_s: float = 0.0


def measure_selection(path: Path, n: int, names: list[str]) -> tuple[str, int, list[SelectionRun]]:
    """(Qt platform, the text's characters, one run per tokenizer of `n` selections each way)."""
    app = QApplication.instance() or QApplication(["tokexplorer-bench"])
    app.setStyle("Fusion")
    window = MainWindow()
    window.resize(1400, 900)
    window.show()
    panels = [window.merge_tree, window.trace, window.vocab]
    for dock in (window.merge_dock, window.trace_dock, window.vocab_dock):
        dock.setFloating(True)
        dock.resize(700, 400)
        dock.show()
    loop = EventLoop()
    window.documents.open_text(Path(path))
    if not loop.run(300, lambda: window.state.path is not None and settled(window)):
        raise RuntimeError(f"{path} did not open within 300 s")

    def ready() -> bool:
        return all(p.up_to_date for p in panels) and window.service.idle

    def finish(t0: float) -> float:
        loop.run(10, ready)
        app.processEvents()  # the paints Qt has pending for what changed
        return time.perf_counter() - t0

    rng = random.Random(1)
    runs = []
    for name in names:
        window.state.set_tokenizer(name)
        loop.run(300, lambda: settled(window) and window.vocab.vocab_name == name and ready())
        run = SelectionRun(name)
        result = window.state.result
        loop.start_meter()
        for _ in range(n):
            tokens = result.range16(*window.editor.visible_range())  # a caret move stays on the page
            i = rng.randrange(tokens.start, tokens.stop)
            loop.run(0.05)
            t0 = time.perf_counter()
            cursor = window.editor.textCursor()
            cursor.setPosition(int(result.starts16[i]))
            window.editor.setTextCursor(cursor)
            run.caret_s.append(finish(t0))
        ids = window.vocab.model.ids
        for _ in range(n):
            token_id = result.encoding.ids[rng.randrange(len(result))]
            row = int(np.searchsorted(ids, token_id))  # the list is every token, by id
            loop.run(0.05)
            t0 = time.perf_counter()
            window.vocab.table.selectRow(row)
            run.vocab_s.append(finish(t0))
        run.stall_s = loop.stop_meter()
        runs.append(run)
    chars = len(window.state.result.encoding.text)
    window.editor.document().setModified(False)
    window.close()
    return app.platformName(), chars, runs
