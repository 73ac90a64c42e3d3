"""Measures what autosave costs on a big text, for `tokexplorer bench --gui` (tokexplorer/bench/
gui.py prints it): in the real main window holding the text, after each one-character edit, the
time autosave spends on the UI thread (reading the text out of the editor and queuing the write)
and the time from the edit to the recovery file written (encoding, atomic write, fsync; the
debounce, DEBOUNCE_MS, comes before it). Measures only; it asserts nothing.

    python -m tokexplorer.gui.bench.autosave FILE [RUNS]   prints one JSON line
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from tokexplorer.gui.app import settled
from tokexplorer.gui.services.autosave import DEBOUNCE_MS, ENV_DEBOUNCE


class _NoDialogs:
    def ask_unsaved(self, name: str) -> str:
        return "discard"


def _wait(condition, timeout_s: float = 120.0) -> None:
    loop, deadline = QEventLoop(), time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out")
        QTimer.singleShot(5, loop.quit)
        loop.exec()


def measure_autosave(path: Path, runs: int = 9) -> dict:
    """{"chars", "ui_ms": [...], "written_ms": [...], "file_bytes"} over `runs` edits."""
    import os

    os.environ.setdefault("TOKEXPLORER_SETTINGS_DIR", tempfile.mkdtemp(prefix="tokexplorer-bench-"))
    os.environ[ENV_DEBOUNCE] = str(24 * 3600 * 1000)  # only the writes asked for here
    from tokexplorer.gui.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    window = MainWindow(dialogs=_NoDialogs())
    window.show()
    window.documents.open_text(path, asked=True)
    _wait(lambda: window.state.path == path and settled(window))
    done: list[float] = []
    window.autosave.written.connect(lambda p: p and done.append(time.perf_counter()))
    spent: list[float] = []  # seconds inside save_now, per call: all autosave does on the UI thread
    save_now = window.autosave.save_now

    def timed() -> None:
        t = time.perf_counter()
        save_now()
        spent.append(time.perf_counter() - t)

    window.autosave.save_now = timed
    ui_ms, written_ms = [], []
    for i in range(runs):
        cursor = window.editor.textCursor()
        cursor.setPosition(window.editor.document().characterCount() // 2 + i)
        cursor.insertText("x")  # the edit: the document is modified
        _wait(lambda: settled(window))  # tokenized, as it is by the end of the debounce
        spent.clear()
        before = len(done)
        t0 = time.perf_counter()
        window.autosave.save_now()  # as the debounce timer does
        _wait(lambda: len(done) > before)
        ui_ms.append(sum(spent) * 1000)
        written_ms.append((done[before] - t0) * 1000)
    size = window.autosave.session.recovery_path.stat().st_size
    window.close()
    app.processEvents()
    return {"chars": len(window.editor.user_text()), "file_bytes": size, "ui_ms": ui_ms, "written_ms": written_ms}


def note(path: Path, runs: int = 9) -> str:
    """One line for the benchmark's notes."""
    r = measure_autosave(path, runs)

    def spread(ms: list[float]) -> str:
        return f"median {statistics.median(ms):.1f} ms (range {min(ms):.1f}–{max(ms):.1f})"

    return (f"autosave of {path.name} ({r['file_bytes'] / 1e6:.1f} MB recovery file), {runs} edits: "
            f"UI thread {spread(r['ui_ms'])}; debounce end → file written {spread(r['written_ms'])}; "
            f"the debounce is {DEBOUNCE_MS / 1000:g} s after the last edit")

if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(measure_autosave(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 9)))
