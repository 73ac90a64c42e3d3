"""A training run's progress: a bar and a line of text (the phase; merges done, the rate and the
time left; at the end the corpus's compression), and the live compression curve the Plots dock
draws (the corpus's tokens after each merge, announced on the state).

It shows what the training service reports; it does not start or stop anything.
"""

from __future__ import annotations

import time

from PySide6.QtWidgets import QLabel, QProgressBar, QVBoxLayout, QWidget

from tokexplorer.core.analysis.sweep import CompressionCurve
from tokexplorer.core.training.bpe import MergeRecord
from tokexplorer.gui.state import AppState

IDLE = "no training run yet"  # the bar's text before a run (an empty bar reads as an empty field)


class TrainingProgress(QWidget):
    """The bar (`progress`) and the line below it (`rate_label`) for one run at a time."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.total = 0  # merges asked for
        self.corpus_bytes = 0  # as training sees it
        self._curve: CompressionCurve | None = None  # tokens after each merge, for the Plots dock
        self._merge_t0 = 0.0
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.progress = QProgressBar()
        self.progress.setObjectName("training_progress")
        self.progress.setTextVisible(True)
        self.progress.setFormat(IDLE)
        self.progress.setValue(0)
        self.progress.setToolTip("The training run's progress: its phase, then the merges learned")
        self.rate_label = QLabel()
        self.rate_label.setObjectName("training_rate")
        self.rate_label.setWordWrap(True)  # a long rate line wraps in a narrow dock
        layout.addWidget(self.progress)
        layout.addWidget(self.rate_label)

    def clear(self) -> None:
        """A new run: nothing asked for yet."""
        self.total = 0
        self.rate_label.setText("")

    def show_phase(self, what: str, done: int, total: int) -> None:
        if what == "merging":
            return  # the merges' own progress follows
        if total < 0:
            self.progress.setRange(0, 0)  # busy: the bar moves though nothing can be counted
        else:
            self.progress.setRange(0, max(total, 1))
            self.progress.setValue(done)
        self.progress.setFormat(what)
        self.rate_label.setText(what + ("…" if what not in ("done", "stopped") else ""))

    def start_merging(self, total: int, corpus_bytes: int) -> None:
        self.total = total
        self._merge_t0 = time.perf_counter()
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(0)
        self.progress.setFormat(f"0 of {total:,} merges")
        self.corpus_bytes = corpus_bytes
        self._curve = CompressionCurve(corpus_bytes)  # the Plots dock draws it as it grows
        self.state.training_curve.emit(self._curve.snapshot())
        self.rate_label.setText(f"merging: the corpus is {corpus_bytes:,} bytes")

    def show_records(self, batch: list[MergeRecord]) -> None:
        if self._curve is not None:
            self._curve.tokens.extend(r.tokens for r in batch)
            self.state.training_curve.emit(self._curve.snapshot())
        done = batch[-1].rank - 255
        set_progress(self.progress, done, f"{done:,} of {self.total:,} merges")
        seconds = time.perf_counter() - self._merge_t0
        rate = done / seconds if seconds > 0 else 0.0
        left = (self.total - done) / rate if rate > 0 else 0.0
        last = batch[-1]
        self.rate_label.setText(
            f"{done:,} of {self.total:,} merges · {rate:,.0f} merges/s · about {left:,.0f} s left "
            f"· {last.tokens:,} tokens")

    def show_finished(self, stopped: bool, merges: int, tokens: int | None) -> None:
        """The run is over: `merges` learned (BPE), the corpus `tokens` long after them."""
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self.progress.setFormat("stopped" if stopped else "done")
        if merges and self.total:
            self.progress.setRange(0, self.total)
            self.progress.setValue(merges)
            self.progress.setFormat(f"{merges:,} of {self.total:,} merges: " + ("stopped" if stopped else "done"))
        if merges and tokens is not None:
            self.rate_label.setText(f"the corpus: {self.corpus_bytes:,} bytes → {tokens:,} tokens, "
                                    f"{self.corpus_bytes / max(tokens, 1):.2f} bytes/token")

    def show_failed(self) -> None:
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("failed")
        self.rate_label.setText("")


def set_progress(bar: QProgressBar, value: int, text: str | None = None) -> None:
    """Move a progress bar without painting it now. subtle: QProgressBar.setValue repaints at once
    (synchronously) when its text changes: ~20 ms a call measured offscreen, every batch of
    merges; with updates off it only schedules a paint, which joins the window's next one."""
    bar.setUpdatesEnabled(False)
    bar.setValue(value)
    if text is not None:
        bar.setFormat(text)
    bar.setUpdatesEnabled(True)  # schedules the paint
