"""Drives the real main window's compare view for `tokexplorer bench --gui --compare` (the table is
made by tokexplorer/bench/compare.py): opens a text, shows it in N panes, types into the last pane
at a human pace, and measures what the user would feel in every pane. Measures only; it asserts
nothing.

A keystroke's latency in a pane runs from posting its key event to the end of that pane's first
paint showing the tokens of a text that includes it (`TokenEditor.painted_mark`, and the compare
view's marks drawn in the same paint). A 5 ms timer runs meanwhile; its lateness is the stall of
the UI event loop (`gui.bench.typing.EventLoop`).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtWidgets import QApplication

from tokexplorer.gui.app import settled
from tokexplorer.gui.main_window import MainWindow
from tokexplorer.gui.bench.typing import EventLoop, press, typed_key


@dataclass
class CompareRun:
    names: list[str]
    open_s: float  # reading, inserting, tokenizing and colouring the file in the first pane
    show_s: float  # from turning the compare view on to every pane coloured and compared
    show_stall_s: float
    latencies_s: list[list[float]] = field(default_factory=list)  # per pane, per keystroke
    typing_stall_s: float = 0.0
    keys: int = 0
    cpu_s: float = 0.0  # process CPU time (all threads) while typing: what a keystroke costs, load aside


def measure_compare_typing(path: Path, n_keys: int, names: list[str]) -> CompareRun:
    """Open `path`, compare it in `names` (2 to 4 tokenizers), type `n_keys` keys into the last pane."""
    app = QApplication.instance() or QApplication(["tokexplorer-bench"])
    app.setStyle("Fusion")
    window = MainWindow()
    window.compare.set_active(False)  # as a run before this one may have left it in the settings
    window.state.set_tokenizer(names[0])
    window.resize(1600, 900)
    window.show()
    loop = EventLoop()
    t0 = time.perf_counter()
    window.documents.open_text(Path(path))
    if not loop.run(300, lambda: window.state.path is not None and settled(window)):
        raise RuntimeError(f"{path} did not open within 300 s")
    open_s = time.perf_counter() - t0
    view = window.compare
    t0 = time.perf_counter()
    loop.start_meter()
    view.set_tokenizers(names)
    view.set_active(True)
    if not loop.run(300, lambda: settled(window) and view.up_to_date):
        raise RuntimeError("the compare panes did not finish within 300 s")
    run = CompareRun(names, open_s, time.perf_counter() - t0, loop.stop_meter(), keys=n_keys)
    run.latencies_s = [[] for _ in view.panes]
    target = view.panes[-1]
    # Type in the middle of the document, where a keystroke shifts half of the text.
    doc = target.document()
    cursor = target.textCursor()
    cursor.setPosition(doc.findBlockByNumber(doc.blockCount() // 2).position())
    target.setTextCursor(cursor)
    target.centerCursor()
    target.setFocus()
    loop.run(0.5)
    rng = random.Random(1)
    loop.start_meter()
    cpu0 = time.process_time()
    for k in range(n_keys):
        loop.run(rng.uniform(0.03, 0.08))  # a human pace: 12 to 30 keys a second
        key, text = typed_key(rng, k)
        t_key = time.perf_counter()
        marks = [p.edit_count + 1 for p in view.panes]  # this keystroke's edit, in each pane
        press(app, target, key, text)
        if loop.run(10, lambda: all(p.painted_mark >= m for p, m in zip(view.panes, marks))):
            for i, p in enumerate(view.panes):
                run.latencies_s[i].append(p.painted_at - t_key)
    loop.run(0.1)
    run.cpu_s = time.process_time() - cpu0
    run.typing_stall_s = loop.stop_meter()
    window.editor.document().setModified(False)
    window.close()
    return run
