"""The status bar's selection counts: the tokens the selected text touches (and how many lie
wholly inside it), its characters and its UTF-8 bytes, from `core.selection.selection_counts`.

Select the JSON, then the YAML, to see which costs more; select a trailing space to see its
token. Empty when nothing is selected. A squeezed status bar (a narrow window, long counts beside
it) shows a shorter line that keeps the tokens ("sel.: 1,121 tokens"); the full line is in the
tooltip.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer

from tokexplorer.core.analysis.selection import selection_counts
from tokexplorer.gui.widgets.fitting_label import FittingLabel
from tokexplorer.gui.editor.selection import selection_forms
from tokexplorer.gui.state import AppState


class SelectionCountsLabel(FittingLabel):
    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.setObjectName("selection_counts")
        self._timer = QTimer(self)  # one update per event-loop turn, however many signals
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.refresh)
        state.selection_changed.connect(self._schedule)
        state.tokenized.connect(self._schedule)

    def _schedule(self, *_) -> None:
        # subtle: not `signal.connect(timer.start)`: a signal's arguments would reach
        # QTimer.start(msec) and become the interval.
        self._timer.start()

    def refresh(self) -> None:
        result = self.state.result
        start, end = self.state.selection
        if result is None or end <= start:
            self.set_forms([])
            return
        c = selection_counts(result.encoding, start, end)
        forms = selection_forms(c)
        self.set_forms(forms, tip=f"{forms[0]}\n{result.tokenizer}: characters {c.start:,}–{c.end:,} touch "
                                  f"{c.tokens:,} tokens, {c.whole:,} of them wholly inside the selection; "
                                  f"{c.bytes / max(c.tokens, 1):.2f} bytes per token")
