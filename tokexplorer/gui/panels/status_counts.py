"""The status bar's text counts and the worker's state: tokens, characters, bytes and the ratios of
the current result (as many as fit, the tokens always; the whole line and how it was encoded in
the tooltip), and what the worker is doing or whether the tokenizing server has loaded the current
tokenizer (as the catalog knows it). Widgets that observe the `AppState`; nothing is computed
here beyond formatting the result's stats.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from tokexplorer.gui.widgets.fitting_label import FittingLabel
from tokexplorer.gui.state import AppState


class CountsLabel(FittingLabel):
    """"1,234 tokens · 5,678 characters · 6,789 bytes · 5.50 bytes/token · 4.60 chars/token", or as
    much of it as the status bar has room for (the tokens always)."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.setObjectName("counts")
        state.tokenized.connect(self.show_result)

    def show_result(self, result) -> None:
        if result is None:
            self.set_forms([])
            return
        st = result.stats
        tokens, sizes = f"{st['tokens']:,} tokens", f"{st['chars']:,} characters · {st['bytes']:,} bytes"
        forms = [f"{tokens} · {sizes}", f"{tokens} · {st['chars']:,} characters", tokens]
        if st["tokens"]:  # no ratio of nothing
            forms[:0] = [f"{tokens} · {sizes} · {st['bytes_per_token']:.2f} bytes/token · "
                         f"{st['chars_per_token']:.2f} chars/token",
                         f"{tokens} · {sizes} · {st['bytes_per_token']:.2f} bytes/token"]
        where = ("the whole text" if result.changed is None
                 else f"characters {result.changed[0]:,}–{result.changed[1]:,} again")
        self.set_forms(forms, tip=f"{forms[0]}\n{result.tokenizer}: encoded {where} in {result.seconds * 1000:.0f} ms")


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
