"""The status bar's text counts and the worker's state: tokens, characters, bytes and the ratios of
the current result (as many as fit, the tokens always; the whole line and how it was encoded in
the tooltip), a warning after them when the text holds bidi controls (it may display in another
order than it is stored), and what the worker is doing or whether the tokenizing server has
loaded the current tokenizer (as the catalog knows it). Widgets that observe the `AppState`;
nothing is computed here beyond formatting the result's stats.

While a new text loads or is tokenized, the counts say "counting…", never the previous text's.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from tokexplorer.core.analysis.invisibles import warning
from tokexplorer.gui.widgets.fitting_label import FittingLabel
from tokexplorer.gui.state import AppState


class CountsLabel(FittingLabel):
    """"1,234 tokens · 5,678 characters · 6,789 bytes · 5.50 bytes/token · 4.60 chars/token", or as
    much of it as the status bar has room for (the tokens always); "counting…" while a new text
    is on its way (`counting`); " · ⚠ 2 bidi controls" after it when the text holds some (the
    whole warning in the fullest form and the tooltip)."""

    COUNTING = "counting…"

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.setObjectName("counts")
        self.state = state
        self._forms: list[str] = []
        self._tip = ""
        self._said: tuple[tuple[int, ...], str] = ((), "")  # the last warning, and of which controls
        state.tokenized.connect(self.show_result)
        state.text_replaced.connect(self.counting)
        state.bidi_controls_changed.connect(lambda _: self._show())

    def counting(self) -> None:
        """A new text is loading or being tokenized: no counts until its result comes."""
        self._forms, self._tip = [self.COUNTING], ""
        self._show()

    def show_result(self, result) -> None:
        if result is None:
            self._forms, self._tip = [], ""
            self._show()
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
        self._forms = forms
        self._tip = f"{forms[0]}\n{result.tokenizer}: encoded {where} in {result.seconds * 1000:.0f} ms"
        self._show()

    def _show(self) -> None:
        forms, tip = self._forms, self._tip
        codes = self.state.bidi_controls
        if codes:  # after the counts, which always come first
            n = len(codes)
            if self._said[0] is not codes:  # said once per change, not once per keystroke
                self._said = (codes, warning(list(codes)))
            said = self._said[1]
            short = f"⚠ {n:,} bidi control{'s' if n != 1 else ''}"
            rest = forms or [""]
            forms = ([f"{rest[0]} · ⚠ {said}", f"{rest[0]} · {short} (U+{codes[0]:04X}…)"]
                     + [f"{f} · {short}" for f in rest])
            forms = [f.removeprefix(" · ") for f in forms]
            tip = f"{tip or rest[0]}\n⚠ {said}".lstrip()
        self.set_forms(forms, tip=tip or None)


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
