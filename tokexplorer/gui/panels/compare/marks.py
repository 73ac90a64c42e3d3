"""The boundary marks of the compare view: where a pane's tokenizer ends a token and another
pane's does not, as document positions, and their drawing over a pane.

Holds the conversion of `core.analysis.compare.boundary_marks` (code points, and how far into a
character's UTF-8 bytes a boundary falls) into UTF-16 positions of the shared document (soft breaks
and astral characters counted), moving them through edits made since, and painting them as short
ticks on each line's bottom edge, below the glyphs. Does not decide when they are computed or which panes repaint (`view`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QLineF, QPointF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen, QPolygonF

from tokexplorer.core.analysis.compare import boundary_marks
from tokexplorer.core.positions import Edit, astral_prefix, editor_prefix
from tokexplorer.gui.editor.selection import code_point_at16, utf16_at
from tokexplorer.gui.editor.token_view import TokenView
from tokexplorer.server.tokenized import Tokenized

MARK_MARGIN = 4000  # UTF-16 units beyond the visible text whose marks are computed with it


@dataclass
class Marks16:
    """One pane's marks as document positions: the character each boundary is before or inside
    (UTF-16), that character's length in UTF-16 units, and how far into its bytes it falls."""

    positions: np.ndarray  # int64
    lengths: np.ndarray  # int64, 1 or 2
    fractions: np.ndarray  # float64; 0.0: at the character's start


def same_marks(a: Marks16 | None, b: Marks16 | None, lo: int, hi: int) -> bool:
    """Whether two sets of marks agree within UTF-16 positions [lo, hi]."""
    if a is None or b is None:
        return a is b
    ka = (a.positions >= lo) & (a.positions <= hi)
    kb = (b.positions >= lo) & (b.positions <= hi)
    return (np.array_equal(a.positions[ka], b.positions[kb])
            and np.array_equal(a.fractions[ka], b.fractions[kb]))


def shifted(m: Marks16 | None, edits: list[Edit]) -> Marks16 | None:
    """Marks moved through the edits made since they were computed."""
    if m is None or not edits:
        return m
    positions = m.positions
    for e in edits:  # Edit.start, on an array
        p = e.position
        positions = np.where(positions < p, positions, np.where(
            positions >= p + e.removed, positions + e.added - e.removed, p + e.added))
    return Marks16(positions, m.lengths, m.fractions)


def compute_marks(results: list[Tokenized], lo16: int, hi16: int) -> tuple[int, int, list[Marks16]]:
    """(UTF-16 window start, its end, each result's Marks16) for the visible text [lo16, hi16]
    and a margin; the results are of one text, the first's positions are the document's."""
    first = results[0]
    text = first.encoding.text
    c0 = code_point_at16(first, max(lo16 - MARK_MARGIN, 0))
    c1 = code_point_at16(first, hi16 + MARK_MARGIN)
    w16 = utf16_at(first, c0)
    window = text[c0:c1]
    soft = first.soft[(first.soft > c0) & (first.soft <= c1)] - c0  # w16 counts one at c0
    prefix = editor_prefix(window, soft)
    if prefix is None:
        prefix = np.zeros(len(window) + 1, dtype=np.int64)
    astral = astral_prefix(window)
    out = []
    for m in boundary_marks([r.encoding for r in results], c0, c1):
        local = m.chars - c0
        out.append(Marks16(w16 + local + prefix[local], 1 + astral[local + 1] - astral[local], m.fraction))
    return w16, utf16_at(first, c1), out


def paint_marks(view: TokenView, painter: QPainter, rect, marks: Marks16, dark: bool) -> None:
    """Draw a pane's marks in `rect` of its viewport: at each boundary a short tick standing on the
    line's bottom edge, topped by a small triangle pointing up at the boundary.

    subtle: nothing is drawn through the glyphs. Myanmar and Devanagari put vowel signs and marks
    above and below the letters, up to the line's top and down into its descent, and a byte-level
    tokenizer cuts nearly every character there: ticks over the text (as before) hid the marks
    they pointed at. The line's last few pixels are below every glyph but the deepest stacks."""
    ticks: dict[bool, list[QLineF]] = {False: [], True: []}  # inside a character -> ticks
    heads: dict[bool, QPainterPath] = {False: QPainterPath(), True: QPainterPath()}
    positions = marks.positions
    for block, line, origin in view.visible_lines(rect):
        start = block.position()
        lo = start + line.textStart()
        a, b = np.searchsorted(positions, [lo, lo + line.textLength()])
        if a == b:
            continue
        top, h, x0 = origin.y() + line.y(), line.height(), origin.x()
        bottom = top + h - 0.5
        size = max(2.5, min(4.0, h * 0.1))  # the triangle's half width and height
        tip = bottom - size - 1.5
        for p, f, n in zip(positions[a:b].tolist(), marks.fractions[a:b].tolist(), marks.lengths[a:b].tolist()):
            rel = p - start
            x = line.cursorToX(rel)[0]
            if f > 0:
                x += f * (line.cursorToX(rel + n)[0] - x)
            x += x0
            ticks[f > 0].append(QLineF(x, tip + size, x, bottom))
            heads[f > 0].addPolygon(QPolygonF([QPointF(x, tip), QPointF(x - size, tip + size),
                                               QPointF(x + size, tip + size)]))
    # One call per colour: a pen change and a call per tick cost more than the drawing.
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    for inside, colour in ((False, "#64b5f6" if dark else "#1565c0"), (True, "#ff8a80" if dark else "#d50000")):
        if ticks[inside]:
            painter.setPen(QPen(QColor(colour), 1.5))
            painter.drawLines(ticks[inside])
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(colour))
            painter.drawPath(heads[inside])
