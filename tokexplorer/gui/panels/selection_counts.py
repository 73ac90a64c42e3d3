"""The status bar's selection counts: the tokens the selected text touches (and how many lie
wholly inside it), its characters and its UTF-8 bytes, from `core.selection.selection_counts`.

Select the JSON, then the YAML, to see which costs more; select a trailing space to see its
token. Empty when nothing is selected.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel

from ...core.selection import selection_counts
from ..state import AppState


class SelectionCountsLabel(QLabel):
    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.setObjectName("selection_counts")
        self._timer = QTimer(self)  # one update per event-loop turn, however many signals
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.refresh)
        state.selection_changed.connect(self._timer.start)
        state.tokenized.connect(self._timer.start)

    def refresh(self) -> None:
        result = self.state.result
        start, end = self.state.selection
        if result is None or end <= start:
            self.setText("")
            self.setToolTip("")
            return
        c = selection_counts(result.encoding, start, end)
        self.setText(f"selection: {_n(c.tokens, 'token')} ({c.whole:,} whole) · {_n(c.chars, 'char')} · "
                     f"{_n(c.bytes, 'byte')}")
        self.setToolTip(f"{result.tokenizer}: characters {c.start:,}–{c.end:,} touch {c.tokens:,} "
                        f"tokens, {c.whole:,} of them wholly inside the selection; "
                        f"{c.bytes / max(c.tokens, 1):.2f} bytes per token")


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"
