"""Invisible characters made visible in a token view, and the bidi controls of the editor's text
counted for the status bar.

`invisible_marks` (or `marks_on_lines`) lays out the markers of the lines on screen (`core.analysis.invisibles.marks`:
a small box with a short label such as RLO, ZWSP, SHY, BOM, at the character's place in the
line) and `paint_invisibles` draws them over the text; a view answers a tooltip over a box with
`mark_at`. The markers are painted, never inserted: the text, its shaping and its tokens do not
change, with Show Whitespace on or off. Only the painted lines are searched, so a keystroke costs
what is on screen, whatever the text's length.

What the user sees with an override: Qt lays the text out as Unicode says, so
"RLO\\u202eevil\\u202c" still reads "RLOlive", now as "RLO│[RLO]live│[PDF]" with "live"
underlined: each control's red bar stands where Qt puts its place in the line (the caret's x
there: the override's before the reversed run, the PDF's after it), its box hangs right from the
line's top over the upper half of the letters after it (side by side with a neighbour's at the
same place), and a dashed red line runs under the text an override or embedding governs. The box's tooltip names the control and quotes that
text in its stored order ("“evil” after it, up to U+202C, is displayed right to left"), and the
status bar warns that the text holds bidi controls (`BidiTally`, `status_counts.CountsLabel`).

`BidiTally` keeps the UTF-16 positions of the document's bidi controls through every edit (the
inserted text is searched, the removed range dropped), so the count never needs a pass over the
whole text after a keystroke; a loaded text is searched slice by slice as it goes in.
"""

from __future__ import annotations

import bisect
from typing import NamedTuple

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen

from tokexplorer.core.analysis.invisibles import BIDI, BIDI_PATTERN, bidi_scope, marks
from tokexplorer.core.positions import astral_prefix, has_astral, to_utf16


class Drawn(NamedTuple):
    """One marker as laid out in a view's viewport."""

    box: QRectF  # the label's box
    x: float  # where the character's place in the line is
    top: float  # the line's top and height
    height: float
    label: str
    tip: str
    bidi: bool
    reach: tuple[float, float] | None  # x range of the text a bidi embedding or override governs


def marker_font(font: QFont) -> QFont:
    """The markers' font: the view's, smaller."""
    small = QFont(font)
    small.setPointSizeF(max(5.0, font.pointSizeF() * 0.5))
    return small


def invisible_marks(view, rect) -> list[Drawn]:
    """The markers of the invisible characters on the lines of `view` (a TokenView) that meet
    `rect` (viewport coordinates), laid out left to right so that the boxes of characters at one
    place (a run of zero-width characters) sit side by side."""
    lines = []
    for block, line, origin in view.visible_lines(rect):
        lo = block.position() + line.textStart()
        text = view.line_text(block, lo, lo + line.textLength())
        if not text.isascii():
            lines.append((block, line, origin, text))
    return marks_on_lines(view.font(), lines)


def marks_on_lines(font: QFont, lines) -> list[Drawn]:
    """`invisible_marks` of these laid-out lines, (block, QTextLine, origin, the line's text) each:
    a view painting its tokens has walked its lines already (walking them twice cost a keystroke's
    paint half a millisecond on a screenful of short lines)."""
    out: list[Drawn] = []
    metrics = None
    for block, line, origin, text in lines:
        base = block.position()
        lo = base + line.textStart()
        found = marks(text)
        if not found:
            continue
        metrics = metrics or QFontMetricsF(marker_font(font))
        prefix = astral_prefix(text) if has_astral(text) else None  # code points -> UTF-16 units
        top, height, x0 = origin.y() + line.y(), line.height(), origin.x()
        right = -1e9  # where the previous box on this line ended
        box_h = min(height * 0.55, metrics.height() + 1)  # the ascenders' part of the line, mostly
        for m in found:
            at = lo - base + (m.index if prefix is None else m.index + int(prefix[m.index]))
            x = x0 + line.cursorToX(at)[0]
            width = metrics.horizontalAdvance(m.label) + 5
            # A flag on the bar at the character's place: the box hangs to its right, from the
            # line's top, so the lower part of the letters after it stays in view.
            left = max(x + 1, right + 1)
            box = QRectF(left, top, width, box_h)
            right = box.right()
            reach = None
            if m.kind == BIDI:
                a, b = bidi_scope(text, m.index)
                if b > a:
                    ends = [x0 + line.cursorToX(lo - base + (p if prefix is None else p + int(prefix[p])))[0]
                            for p in (a, b)]
                    reach = (min(ends), max(ends))
            out.append(Drawn(box, x, top, height, m.label, m.tip, m.kind == BIDI, reach))
    return out


def paint_invisibles(painter: QPainter, drawn: list[Drawn], font: QFont, dark: bool) -> None:
    """Draw the markers: at each character's place a thin bar the line's height, on it a small box
    with the label, hanging right from the line's top (red for bidi controls, with a dashed red
    line under the text they govern)."""
    if not drawn:
        return
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setFont(marker_font(font))
    red = QColor("#ff5252") if dark else QColor("#c62828")
    grey = QColor("#b0bec5") if dark else QColor("#455a64")
    fill = QColor(38, 50, 56, 215) if dark else QColor(255, 253, 231, 215)
    for d in drawn:
        colour = red if d.bidi else grey
        painter.setPen(QPen(colour, 1.5))
        painter.drawLine(QPointF(d.x, d.top + 1), QPointF(d.x, d.top + d.height - 1))
        if d.reach is not None:
            y = d.top + d.height - 1.5
            painter.setPen(QPen(colour, 1.5, Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(d.reach[0], y), QPointF(d.reach[1], y))
        painter.setPen(QPen(colour, 1.0))
        painter.setBrush(fill)
        painter.drawRoundedRect(d.box, 2, 2)
        painter.drawText(d.box, Qt.AlignmentFlag.AlignCenter, d.label)


def mark_at(drawn: list[Drawn], point: QPointF) -> Drawn | None:
    """The marker whose box (or bar) is under `point`, if any."""
    for d in drawn:
        if d.box.adjusted(-1, -1, 1, 1).contains(point) or (
                abs(point.x() - d.x) <= 2 and d.top <= point.y() <= d.top + d.height):
            return d
    return None


class BidiTally:
    """The UTF-16 positions and code points of the bidi controls in a document, kept through
    its edits."""

    def __init__(self):
        self.positions: list[int] = []  # sorted
        self.codes: list[int] = []  # the control at each position

    def reset(self) -> None:
        """An empty document: a new text goes in (`extend`)."""
        self.positions, self.codes = [], []

    def extend(self, text: str, at16: int) -> None:
        """`text` went in at the document's end, UTF-16 position `at16` (a load puts a big text
        in slices: each is searched as it goes in, never the whole text in one event)."""
        found = [m.start() for m in BIDI_PATTERN.finditer(text)] if not text.isascii() else []
        if found:
            self.codes += [ord(text[i]) for i in found]
            self.positions += (at16 + to_utf16(text, np.array(found, dtype=np.int64))).tolist()

    def edit(self, position: int, removed: int, added: int, inserted: str) -> bool:
        """The document's units [position, position + removed) were replaced by `inserted`
        (`added` units); True when the tally changed."""
        a = bisect.bisect_left(self.positions, position)
        b = bisect.bisect_left(self.positions, position + removed)
        new = [m.start() for m in BIDI_PATTERN.finditer(inserted)] if not inserted.isascii() else []
        if a == b == len(self.positions) and not new:
            return False  # nothing after the edit to move
        shift = added - removed
        changed = a != b or bool(new)
        new16 = (to_utf16(inserted, np.array(new, dtype=np.int64)) + position).tolist() if new else []
        self.positions[a:] = new16 + [p + shift for p in self.positions[b:]]
        self.codes[a:b] = [ord(inserted[i]) for i in new]
        return changed

    def controls(self) -> tuple[int, ...]:
        return tuple(self.codes)
