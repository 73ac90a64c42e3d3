"""Drives the real main window for `tokexplorer bench --gui` (tokexplorer/bench/gui.py formats
the table): opens a text, switches tokenizers, types at a human pace, and measures what the user
would feel. Measures only; it asserts nothing.

A keystroke's latency runs from posting its key event to the end of the first editor paint that
shows the tokens of a text including it (`TokenEditor.painted_mark`). A 5 ms timer runs meanwhile;
its lateness is the stall of the UI event loop.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QEvent, QEventLoop, Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication

from tokexplorer.core.registry import builtin_names
from tokexplorer.gui.app import settled
from tokexplorer.gui.main_window import MainWindow

KEYS = "etaoin shrdlu\n"  # typed text: letters, spaces, newlines; every 7th key is a backspace


def typed_key(rng: random.Random, k: int) -> tuple[Qt.Key, str]:
    """The k-th key the benchmarks type: a letter, space or newline, a Backspace every 7th."""
    if k % 7 == 6:
        return Qt.Key.Key_Backspace, ""
    text = rng.choice(KEYS)
    return (Qt.Key.Key_Return if text == "\n" else Qt.Key.Key_unknown), text


def press(app: QApplication, target, key: Qt.Key, text: str) -> None:
    """Post a key's press and release to a widget, with its text (works for any Unicode)."""
    for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
        app.postEvent(target, QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier, text))
STALL_TICK_MS = 5
POLL_MS = 4


@dataclass
class TokenizerRun:
    name: str
    switch_s: float  # from picking the tokenizer to the visible text coloured (loading included)
    switch_stall_s: float
    latencies_s: list[float] = field(default_factory=list)
    typing_stall_s: float = 0.0
    keys: int = 0
    reswitch_s: float = 0.0  # switching back to it once every tokenizer is loaded
    reswitch_stall_s: float = 0.0


@dataclass
class TypingReport:
    platform: str  # Qt's platform plugin: offscreen, xcb, wayland...
    open_s: float  # reading, inserting, tokenizing and colouring the file
    open_stall_s: float
    runs: list[TokenizerRun]
    server_peak_mb: float | None = None  # the tokenizing server's peak resident memory


class EventLoop:
    """Runs the Qt event loop until a condition holds or for a while, with a stall meter."""

    def __init__(self):
        self._loop = QEventLoop()
        self.lateness: list[float] = []
        self._last = time.perf_counter()
        self._meter = QTimer()
        self._meter.setTimerType(Qt.TimerType.PreciseTimer)
        self._meter.setInterval(STALL_TICK_MS)
        self._meter.timeout.connect(self._tick)
        self._poll = QTimer()
        # subtle: the poll is the benchmark's own Python; every tick takes the interpreter lock
        # from the worker, which a user's session does not. Latencies come from the editor's
        # paint times, so a slower poll only delays noticing them.
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self._check)
        self._until = None
        self._deadline = 0.0

    def _tick(self) -> None:
        now = time.perf_counter()
        self.lateness.append(max(0.0, now - self._last - STALL_TICK_MS / 1000))
        self._last = now

    def start_meter(self) -> None:
        self.lateness = []
        self._last = time.perf_counter()
        self._meter.start()

    def stop_meter(self) -> float:
        """Stop measuring; the longest stall since start_meter, in seconds."""
        self._meter.stop()
        return max(self.lateness, default=0.0)

    def _check(self) -> None:
        if (self._until is not None and self._until()) or time.perf_counter() > self._deadline:
            self._poll.stop()
            self._loop.quit()

    def run(self, seconds: float, until=None) -> bool:
        """Process events for `seconds`, or until `until()` is true; returns whether it became true."""
        self._until, self._deadline = until, time.perf_counter() + seconds
        self._poll.start()
        self._loop.exec()
        return until is not None and until()


def ready_window(tokenizer: str, settle_s: float) -> tuple[MainWindow, EventLoop]:
    """A main window at the benchmarks' size, shown, with `tokenizer` loaded and the window
    settled (its first paint alone stalls the loop for 0.6 s: no measurement starts before it)."""
    window = MainWindow()
    window.state.set_tokenizer(tokenizer)
    window.resize(1100, 720)
    window.show()
    loop = EventLoop()
    loop.run(settle_s, lambda: settled(window))
    return window, loop


def open_metered(window: MainWindow, loop: EventLoop, path: Path, within_s: float) -> tuple[float, float]:
    """Open `path` in `window`: the seconds until it is open and coloured, and the longest stall."""
    t0 = time.perf_counter()
    loop.start_meter()
    window.documents.open_text(path)
    if not loop.run(within_s, lambda: window.state.path is not None and settled(window)):
        raise RuntimeError(f"{path} did not open within {within_s:g} s")
    return time.perf_counter() - t0, loop.stop_meter()


def measure_typing(path: Path, n_keys: int, names: list[str] | None = None) -> TypingReport:
    """Open `path` in a new main window and type `n_keys` keys with each tokenizer in `names`."""
    app = QApplication.instance() or QApplication(["tokexplorer-bench"])
    app.setStyle("Fusion")
    names = names or builtin_names()
    # the last tokenizer first, so that switching to the first is a real switch; the open starts
    # in a ready window, as the baseline's tokenizer is loaded beforehand too
    window, loop = ready_window(names[-1], 300)
    report = TypingReport(app.platformName(), *open_metered(window, loop, Path(path), 300), [])
    editor = window.editor
    # Type in the middle of the document, where a keystroke shifts half of the text.
    cursor = editor.textCursor()
    cursor.setPosition(editor.document().findBlockByNumber(editor.document().blockCount() // 2).position())
    editor.setTextCursor(cursor)
    editor.centerCursor()
    rng = random.Random(1)
    for name in names:
        t0 = time.perf_counter()
        loop.start_meter()
        window.state.set_tokenizer(name)
        loop.run(300, lambda: settled(window))
        run = TokenizerRun(name, time.perf_counter() - t0, loop.stop_meter(), keys=n_keys)
        loop.start_meter()
        for k in range(n_keys):
            loop.run(rng.uniform(0.03, 0.08))  # a human pace: 12 to 30 keys a second
            key, text = typed_key(rng, k)
            t_key = time.perf_counter()
            mark = editor.edit_count + 1  # this keystroke's edit
            press(app, editor, key, text)
            if loop.run(10, lambda: editor.painted_mark >= mark):
                run.latencies_s.append(editor.painted_at - t_key)
        loop.run(0.1)
        run.typing_stall_s = loop.stop_meter()
        report.runs.append(run)
    for run in report.runs:  # every tokenizer is loaded now: what a switch costs by itself
        t0 = time.perf_counter()
        loop.start_meter()
        window.state.set_tokenizer(run.name)
        loop.run(300, lambda: settled(window))
        run.reswitch_s, run.reswitch_stall_s = time.perf_counter() - t0, loop.stop_meter()
    report.server_peak_mb = server_peak_mb(window.state.server.pid)
    editor.document().setModified(False)
    window.close()
    return report


def peak_mb() -> float:
    """This process's peak resident memory so far, in MB (Linux reports kilobytes)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def server_peak_mb(pid: int | None) -> float | None:
    """The tokenizing server's peak resident memory so far, in MB, where the system tells (Linux)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, TypeError):
        pass
    return None


def open_huge(path: Path, tokenizer: str) -> dict:
    """Seconds to open `path` coloured in the window, the longest stall, and the peak memory of the
    window's process and of its tokenizing server: run alone in a fresh process
    (`python -m tokexplorer.gui.bench.typing app PATH NAME`)."""
    report = measure_typing(path, 0, [tokenizer])
    return {"seconds": report.open_s, "stall_s": report.open_stall_s, "peak_mb": peak_mb(),
            "server_peak_mb": report.server_peak_mb}


def open_plain(path: Path, tokenizer: str) -> dict:
    """The baseline: a plain QPlainTextEdit taking the text in and painting it, plus tiktoken's own
    encode of the text (no spans, colours or views); also in a fresh process."""
    from tokexplorer.core.registry import get_builtin

    app = QApplication.instance() or QApplication(["tokexplorer-bench"])
    from PySide6.QtWidgets import QPlainTextEdit

    enc = get_builtin(tokenizer).tiktoken_encoding
    t0 = time.perf_counter()
    text = path.read_text(encoding="utf-8")
    edit = QPlainTextEdit()
    edit.resize(1100, 720)
    edit.setPlainText(text)
    edit.show()
    edit.viewport().repaint()
    app.processEvents()
    enc.encode(text, disallowed_special=())
    return {"seconds": time.perf_counter() - t0, "peak_mb": peak_mb()}


if __name__ == "__main__":
    import json
    import sys

    kind, file, name = sys.argv[1:4]
    print(json.dumps((open_huge if kind == "app" else open_plain)(Path(file), name)))
