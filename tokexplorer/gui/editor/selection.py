"""The editor's selection as the core counts it: code points of the tokenized text, and what it
costs in words (`selection_forms`, for the status bar and the compare panes). `code_point_at16`
turns an editor position into the core's code points, `utf16_at` turns one back.

`SelectionTracker` follows the editor's selection and caret and sets `AppState.selection`, but only
while the tokens on screen are those of the editor's text (the result's `mark` is the editor's
edit count), so the range always indexes `state.result`'s text; a new result updates it again.

subtle: Qt's positions are UTF-16 code units, and a long line holds soft breaks that the text
has not. The conversion walks from the token that starts at or before the position, so it costs
the length of one token, not of the text.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QObject

from tokexplorer.core.analysis.selection import SelectionCounts
from tokexplorer.core.positions import utf16_len
from tokexplorer.gui.state import AppState
from tokexplorer.server.tokenized import Tokenized


def code_point_at16(result: Tokenized, position16: int) -> int:
    """The code-point offset in the result's text of UTF-16 position `position16`."""
    text = result.encoding.text
    i = int(np.searchsorted(result.starts16, position16, side="right")) - 1
    cp, u = (int(result.encoding.starts[i]), int(result.starts16[i])) if i >= 0 else (0, 0)
    if len(result.soft16):  # walk in units without the soft breaks (those before a position)
        position16 -= int(np.searchsorted(result.soft16, position16))
        u -= int(np.searchsorted(result.soft16, u))
    while u < position16 and cp < len(text):
        u += 2 if ord(text[cp]) > 0xFFFF else 1
        cp += 1
    return cp


def editor_len(text: str) -> int:
    """How many UTF-16 positions of the editor a piece of the tokenized (source) text takes: an
    astral character two, a "\\r\\n" one (one line break there).

    >>> editor_len("a😀\\r\\n")
    4
    """
    return utf16_len(text) - text.count("\r\n")


def utf16_at(result: Tokenized, position: int) -> int:
    """The editor's UTF-16 position of code point `position` of the result's text (the inverse
    of `code_point_at16`), walking from the token that starts at or before it."""
    starts = result.encoding.starts
    i = int(np.searchsorted(starts, position, side="right")) - 1
    start, start16 = (int(starts[i]), int(result.starts16[i])) if i >= 0 else (0, 0)
    # The soft breaks in (start, position]: one unit each (the token's start has its own).
    soft = int(np.searchsorted(result.soft, position, side="right") - np.searchsorted(result.soft, start, side="right"))
    return start16 + editor_len(result.encoding.text[start:position]) + soft


def selection_forms(c: SelectionCounts) -> list[str]:
    """What a selection costs, from the fullest to the shortest (for a `FittingLabel`); every
    form keeps the tokens it touches.

    >>> selection_forms(SelectionCounts(0, 30, 1234, 1200, 30, 88, 0))[2:]
    ['selection: 1,234 tokens (1,200 whole)', 'selection: 1,234 tokens', 'sel.: 1,234 tokens', 'sel.: 1,234']
    >>> selection_forms(SelectionCounts(0, 1, 1, 1, 1, 1, 0))[0]
    'selection: 1 token (1 whole) · 1 char · 1 byte'
    """
    t = f"selection: {_n(c.tokens, 'token')} ({c.whole:,} whole)"
    return [f"{t} · {_n(c.chars, 'char')} · {_n(c.bytes, 'byte')}", f"{t} · {_n(c.chars, 'char')}", t,
            f"selection: {_n(c.tokens, 'token')}", f"sel.: {_n(c.tokens, 'token')}", f"sel.: {c.tokens:,}"]


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


class SelectionTracker(QObject):
    """Keeps `state.selection` in step with the editor's selection or caret."""

    def __init__(self, editor, state: AppState, parent: QObject | None = None):
        super().__init__(parent)
        self.editor, self.state = editor, state
        editor.cursorPositionChanged.connect(self.update)
        editor.selectionChanged.connect(self.update)
        state.tokenized.connect(self.update)

    def update(self, *_) -> None:
        result = self.state.result
        if result is None or result.mark != self.editor.edit_count:
            return  # the next result brings the text the selection is in
        cursor = self.editor.textCursor()
        self.state.set_selection(code_point_at16(result, cursor.selectionStart()),
                                 code_point_at16(result, cursor.selectionEnd()))
