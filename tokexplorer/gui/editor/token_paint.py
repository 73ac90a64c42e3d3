"""Painting tokens around laid-out text: backgrounds beneath it, flag markers over it.

The editor works out where each token sits on screen (`Piece`, from Qt's layout of the text) and
hands the pieces here; this module only draws them with a `TokenPalette`. It never touches the
text's formats, so what is painted cannot change how the text is shaped.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QPainter, QPainterPath, QPen

from tokexplorer.core.encoding import TokenFlag
from tokexplorer.core.token_colours import drawn_colour
from tokexplorer.gui.widgets.colours import CLUSTER_SPLIT, TokenPalette
from tokexplorer.server.tokenized import DROPPED, REFUSED

# Characters that make a line bidirectional: Hebrew, Arabic, Syriac, Thaana, N'Ko and their
# presentation forms, the right-to-left scripts beyond the BMP, and the explicit RTL controls.
RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefe\u200f\u202b\u202e\u2067"
                 "\U00010800-\U00010fff\U0001e800-\U0001efff]")


class Piece(NamedTuple):
    """One token's part of one visual line, in viewport coordinates."""

    x0: float  # where the token starts (right of x1 in a right-to-left run)
    x1: float
    top: float  # the line's top
    height: float  # the line's height
    baseline: float
    colour: int  # colour index (colours.colour_indices)
    flags: int  # TokenFlag bits, and CLUSTER_SPLIT
    cut: float | None  # where a boundary inside a cluster really falls, when it does

    def rect(self) -> QRectF:
        return QRectF(min(self.x0, self.x1), self.top, abs(self.x1 - self.x0), self.height)


def paint_backgrounds(painter: QPainter, pieces: list[Piece], palette: TokenPalette) -> None:
    """Fill each piece with its token's colour (special tokens with theirs), and draw the
    palette's boundary line at each piece's left edge (every boundary is one, in either
    direction)."""
    # One call per colour: a screenful is a few hundred rectangles, each a few microseconds of
    # Python (plain ints for the flags: an enum's & alone costs about one).
    # subtle: tokens that share a character (byte-level tokens cutting its UTF-8 bytes) have
    # pieces that overlap there; the first token keeps what it covers and the next fills only the
    # rest. Drawing each whole would let the colour drawn last win, and that order (by colour,
    # over the lines repainted) changes with the part of the screen repainted: a partial repaint
    # would colour such characters differently from a whole one.
    by_colour: dict[int, list[QRectF]] = {}
    hidden, special = DROPPED, int(TokenFlag.SPECIAL)
    cover = (None, 0.0, 0.0)  # (line top, left, right) of the run of pieces filled last
    for x0, x1, top, height, _, colour, flags, _ in pieces:
        if x1 == x0 or flags & hidden:  # text no token covers stays uncoloured
            continue
        left, right = (x0, x1) if x0 < x1 else (x1, x0)
        line, c0, c1 = cover
        if top == line and left < c1 and right > c0:
            if right > c1:  # reaches past the run on the right (left to right text)
                left = c1
            elif left < c0:  # on the left (right to left)
                right = c0
            else:  # within it
                continue
            cover = (top, min(c0, left), max(c1, right))
        else:
            cover = (top, left, right)
        by_colour.setdefault(-1 if flags & special else drawn_colour(colour), []).append(
            QRectF(left, top, right - left, height))
    painter.setPen(Qt.PenStyle.NoPen)
    for colour, rects in by_colour.items():
        fill = palette.special()[0] if colour < 0 else palette.background(colour)
        if fill is not None:
            painter.setBrush(fill)
            painter.drawRects(rects)
    if palette.boundary is not None:
        painter.setPen(QPen(palette.boundary, 1.0))
        painter.drawLines([QLineF(x, p.top, x, p.top + p.height - 1) for p in pieces
                           for x in (round(min(p.x0, p.x1)) + 0.5,)])  # crisp one-pixel lines


def paint_markers(painter: QPainter, pieces: list[Piece], palette: TokenPalette) -> None:
    """Draw the flag markers over the text: an outline round a special token, red bars over and
    under text that spells a refused special token, a blue overline where the tokenizer normalised
    the text (NFC, lowercase, <unk>), a line through text that no token covers (dropped), and
    under a token a
    wavy line (it cuts a character's UTF-8 bytes), a dotted one (a token boundary inside a
    cluster, with a short tick down from it where the boundary falls) or a dashed one (a
    byte-fallback piece)."""
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    for p in pieces:
        if not p.flags:
            continue
        left, right = min(p.x0, p.x1), max(p.x0, p.x1)
        y = min(p.baseline + 3.0, p.top + p.height - 2.0)
        if p.flags & TokenFlag.SPECIAL:
            painter.setPen(QPen(palette.special()[1], 1.5))
            painter.drawRect(p.rect().adjusted(0.75, 0.75, -0.75, -0.75))
        if p.flags & DROPPED:  # struck through: the split pattern left this text out, no token has it
            painter.setPen(QPen(palette.marker(CLUSTER_SPLIT), 1.2))
            mid = p.top + p.height / 2
            painter.drawLine(QPointF(left, mid), QPointF(right, mid))
        if p.flags & REFUSED:  # a red bar above and below: joined, they bracket the refused text
            painter.setPen(QPen(palette.refused(), 2.0))
            painter.drawLine(QPointF(left, p.top + 1), QPointF(right, p.top + 1))
            painter.drawLine(QPointF(left, p.top + p.height - 1), QPointF(right, p.top + p.height - 1))
        if p.flags & TokenFlag.PARTIAL:
            painter.setPen(QPen(palette.marker(TokenFlag.PARTIAL), 1.2))
            painter.drawPath(_wave(left, right, y))
        elif p.flags & CLUSTER_SPLIT:
            painter.setPen(QPen(palette.marker(CLUSTER_SPLIT), 1.2, Qt.PenStyle.DotLine))
            painter.drawLine(QPointF(left, y), QPointF(right, y))
        elif p.flags & TokenFlag.BYTE_FALLBACK:
            painter.setPen(QPen(palette.marker(TokenFlag.BYTE_FALLBACK), 1.2, Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(left, y), QPointF(right, y))
        if p.flags & TokenFlag.NORMALIZED:  # an overline: the tokenizer read other text here
            painter.setPen(QPen(palette.marker(TokenFlag.NORMALIZED), 1.2))
            painter.drawLine(QPointF(left, p.top + 1.5), QPointF(right, p.top + 1.5))
        if p.cut is not None:
            # A short tick down from the dotted underline: one the line's height hid the vowel
            # signs above and below Devanagari and Myanmar letters it pointed between.
            painter.setPen(QPen(palette.marker(CLUSTER_SPLIT), 1.2))
            painter.drawLine(QPointF(p.cut, y - 2.5), QPointF(p.cut, p.top + p.height - 0.5))


def _wave(left: float, right: float, y: float, period: float = 4.0, amplitude: float = 1.5) -> QPainterPath:
    path = QPainterPath(QPointF(left, y))
    x, up = left, True
    while x < right:
        step = min(period / 2, right - x)
        path.quadTo(QPointF(x + step / 2, y - amplitude if up else y + amplitude), QPointF(x + step, y))
        x += step
        up = not up
    return path
