"""The status bar's text counts and the worker's state: tokens, characters, bytes and the ratios of
the current result (with how it was encoded in the tooltip), and what the worker is doing or
whether the current tokenizer is loaded. Widgets that observe the `AppState`; nothing is computed
here beyond formatting the result's stats.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from ..state import AppState


class CountsLabel(QLabel):
    """"1,234 tokens · 5,678 characters · 6,789 bytes · 5.50 bytes/token · 4.60 chars/token"."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.setObjectName("counts")
        state.tokenized.connect(self.show_result)

    def show_result(self, result) -> None:
        if result is None:
            self.setText("")
            return
        st = result.stats
        ratios = (f" · {st['bytes_per_token']:.2f} bytes/token · {st['chars_per_token']:.2f} chars/token"
                  if st["tokens"] else "")  # no ratio of nothing
        self.setText(f"{st['tokens']:,} tokens · {st['chars']:,} characters · {st['bytes']:,} bytes{ratios}")
        where = ("the whole text" if result.changed is None
                 else f"characters {result.changed[0]:,}–{result.changed[1]:,} again")
        self.setToolTip(f"{result.tokenizer}: encoded {where} in {result.seconds * 1000:.0f} ms")


class BusyLabel(QLabel):
    """What the worker does, or whether the current tokenizer is ready."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.setObjectName("busy")
        for signal in (state.tokenized, state.tokenizer_changed, state.busy_changed):
            signal.connect(self.refresh)

    def refresh(self, *_) -> None:
        name = self.state.tokenizer
        ready = self.state.catalog.is_loaded(name)
        self.setText(self.state.busy or (f"{name} ✓" if ready else f"{name} (not loaded yet)"))
