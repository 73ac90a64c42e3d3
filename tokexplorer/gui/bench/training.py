"""Drives the training workbench for `tokexplorer bench --gui`: trains a corpus in the real window
while a 5 ms timer measures how late the UI event loop runs. Measures only; it asserts nothing.

The lateness of each tick (how much later than 5 ms after the previous one it fired) is what a
user feels as a stutter: the table reports its median, 95th percentile and maximum (the longest
stall), while training and, for comparison, while the same window is idle.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtWidgets import QApplication

from tokexplorer.gui.main_window import MainWindow

TICK_MS = 5


@dataclass
class Lateness:
    median_ms: float
    p95_ms: float
    max_ms: float
    ticks: int

    @classmethod
    def of(cls, lateness_s: list[float]) -> "Lateness":
        ms = sorted(x * 1000 for x in lateness_s) or [float("nan")]
        return cls(statistics.median(ms), ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))],
                   ms[-1], len(lateness_s))


@dataclass
class TrainingLatency:
    corpus: str
    vocab_size: int
    idle: Lateness
    training: Lateness
    seconds: float  # from Train to the tokenizer in the picker
    merges: int
    message: str  # what the workbench said at the end


class _Meter:
    """A 5 ms precise timer recording how late each tick is, and an event loop to run meanwhile."""

    def __init__(self):
        self.lateness: list[float] = []
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._last = 0.0

    def _tick(self) -> None:
        now = time.perf_counter()
        self.lateness.append(max(0.0, now - self._last - TICK_MS / 1000))
        self._last = now

    def run(self, seconds: float, until=None) -> list[float]:
        """Run the event loop for `seconds` or until `until()`; the ticks' lateness meanwhile."""
        self.lateness = []
        self._last = time.perf_counter()
        loop = QEventLoop()
        deadline = time.perf_counter() + seconds

        def check() -> None:
            if (until is not None and until()) or time.perf_counter() > deadline:
                loop.quit()

        # subtle: the stop condition is checked by the meter's own ticks, so the benchmark adds
        # no second timer of Python work to the loop it measures.
        self._timer.timeout.connect(check)
        self._timer.start()
        loop.exec()
        self._timer.stop()
        self._timer.timeout.disconnect(check)
        return self.lateness[1:]  # the first tick measures the start, not the loop


def measure_training(path: Path, vocab_size: int = 32768, idle_s: float = 2.0) -> TrainingLatency:
    """Open the workbench on `path` and train BPE (GPT-4 split) to `vocab_size` in the window."""
    app = QApplication.instance() or QApplication(["tokexplorer-bench"])
    window = MainWindow()
    window.resize(1400, 900)
    window.show()
    window.training_dock.show()
    window.training_dock.raise_()
    panel = window.training_panel
    panel.set_paths([Path(path)])
    panel.vocab_spin.setValue(vocab_size)
    meter = _Meter()
    idle = Lateness.of(meter.run(idle_s))
    t0 = time.perf_counter()
    panel.train()
    training = Lateness.of(meter.run(600, lambda: not panel.service.running))
    report = TrainingLatency(Path(path).name, vocab_size, idle, training, time.perf_counter() - t0,
                             len(panel.log_model.records), panel.message.text())
    window.training_service.shutdown()
    panel.unsaved.clear()  # the benchmark's tokenizer is not kept: closing asks nothing
    window.close()
    app.processEvents()
    return report
