"""The token colours of each painted line, kept as shapes and painted again where the line moves.

A newline, a deleted line or a scroll moves lines on the screen without changing them: their text,
their layout and their tokens (counted from the line's start) are those of a paint before. The
token view keys each line on what decides its pixels (`line_key`) and paints the shapes kept for
that key (`token_paint.LineShapes`) at the line's new top, instead of asking Qt's layout for every
token's x again and building the rectangles in Python: a newline in the middle of the 1 MB book
repaints the half screen below it.

What it does not do: decide what a line shows (`line_tokens`) or how it is drawn (`token_paint`).
The shapes hold the palette, font and text options they were made with: the view says what those
are at each paint, and every shape is forgotten when they change (`PaintedLines.follow`).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Hashable

# Lines kept: a tall window's screenful several times over. An entry holds the paragraph's text,
# the token ranges and their rectangles: a few KB for a line of the book.
CAPACITY = 512


def line_key(paragraph: str, line, x: float, lo: int, ranges: list) -> tuple:
    """What decides a line's pixels besides the settings (`PaintedLines.follow`): its paragraph's
    text (shaping reads across a wrap), its number in it, its width, its left edge on screen, and
    its token ranges (`line_tokens.Range`) counted from `lo`, the line's start in the document."""
    return (paragraph, line.lineNumber(), line.width(), x,
            tuple((s - lo, t - lo, c, f, None if cut is None else cut - lo) for s, t, c, f, cut in ranges))


class PaintedLines:
    """A bounded map from `line_key` to a line's shapes, the least recently painted dropped first."""

    def __init__(self, capacity: int = CAPACITY):
        self.capacity = capacity
        self._shapes: OrderedDict[Hashable, object] = OrderedDict()
        self._settings: Hashable = None
        self.reused = 0  # lines painted from kept shapes so far (the tests read it)

    def __len__(self) -> int:
        return len(self._shapes)

    def follow(self, settings: Hashable) -> None:
        """Forget every line if `settings` (what every line is drawn with: palette, font, text
        options) differ from those of the last call."""
        if settings != self._settings:
            self._settings = settings
            self.clear()

    def clear(self) -> None:
        self._shapes.clear()

    def get(self, key: Hashable):
        found = self._shapes.get(key)
        if found is not None:
            self._shapes.move_to_end(key)
            self.reused += 1
        return found

    def put(self, key: Hashable, shapes) -> None:
        self._shapes[key] = shapes
        if len(self._shapes) > self.capacity:
            self._shapes.popitem(last=False)
