"""Invisible characters made visible in a token view, with room of their own in the text's layout,
and the bidi controls of the editor's text counted for the status bar.

`InvisibleRoom` gives each marked character (`core.analysis.invisibles.marks`: a bidi control, a
zero-width or format character, a run of tag characters) room in the layout of the document it
watches: one format range on that character alone, with absolute letter spacing the width of its
label's box, set on the block's layout as a syntax highlighter's would be (never in the document:
the text, its undo steps and its tokens do not change). The next letter is then laid out after
the box, in the editor and in every compare pane (they share the document and its layout), and a
click after the box puts the caret after the character. A soft hyphen is the exception: Qt lays
one out with no advance inside a line, whatever its format, so its room is the letter before it.
Only the blocks an edit touches are looked at (the edited line on a keystroke; the lines holding
such characters, found by one regular expression, after a paste or a load), and a block is laid out
again only when its room changed. A format boundary splits shaping there, so a joiner (ZWJ, ZWNJ)
inside an Arabic or Indic word shows the letters around it unjoined: its box stands between them.

`invisible_marks` (or `marks_on_lines`) lays out the boxes of the lines on screen at the room
Qt gave each character (its glyphs' place in the line, so in a right-to-left or overridden run
too), and `paint_invisibles` draws them: a small box with a short label such as RLO, ZWSP, SHY,
BOM; a view answers a tooltip over a box with `mark_at`. Only the painted lines are searched, so a
keystroke's paint costs what is on screen, whatever the text's length.

What the user sees with an override: Qt lays the text out as Unicode says, so
"RLO\\u202eevil\\u202c" reads "RLO[RLO]live[PDF]": each control's red box stands where Qt puts
the control in the line (the override's before the reversed run, the PDF's after it), and a dashed
red line runs under the text an override or embedding governs. The box's tooltip names the control
and quotes that text in its stored order ("“evil” after it, up to U+202C, is displayed right to
left"), and the status bar warns that the text holds bidi controls (`BidiTally`,
`status_counts.CountsLabel`).

`BidiTally` keeps the UTF-16 positions of the document's bidi controls through every edit (the
inserted text is searched, the removed range dropped), so the count never needs a pass over the
whole text after a keystroke; a loaded text is searched slice by slice as it goes in.
"""

from __future__ import annotations

import bisect
import math
import unicodedata
from typing import NamedTuple

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import (QColor, QFont, QFontMetricsF, QPainter, QPen, QTextBlock,
                           QTextCharFormat, QTextCursor, QTextDocument, QTextLayout)

from tokexplorer.core.analysis.invisibles import (ASTRAL_PATTERN, BIDI, BIDI_PATTERN, PATTERN, Mark, bidi_scope,
                                                  marks)
from tokexplorer.core.positions import astral_prefix, has_astral, to_utf16

SHY = "\u00ad"  # the soft hyphen: Qt lays it out with no width inside a line
PAD = 3  # pixels of room beside a label's box (half each side)


class Drawn(NamedTuple):
    """One marker as laid out in a view's viewport."""

    box: QRectF  # the label's box
    x: float  # where the character's room starts in the line (the box's left, less the padding)
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


def box_width(metrics: QFontMetricsF, label: str) -> float:
    """The width of a label's box in the markers' font (`marker_font`)."""
    return metrics.horizontalAdvance(label) + 5


def room(metrics: QFontMetricsF, label: str) -> int:
    """The room (pixels) a character with this label is given in the line: its box and padding."""
    return math.ceil(box_width(metrics, label) + PAD)


def _holder(text: str, mark: Mark) -> tuple[int, int] | None:
    """(index, length) in code points of `text` of what carries a mark's room: the character
    itself (a tag run's first), or the letter before a soft hyphen with its combining marks (see
    the module's docstring; a format boundary between a letter and its accent would part them);
    None for a soft hyphen that starts the text (nothing can carry its room)."""
    if text[mark.index] != SHY:
        return mark.index, 1
    if mark.index == 0:
        return None
    k = mark.index - 1
    while k > 0 and unicodedata.category(text[k]) in ("Mn", "Mc", "Me"):
        k -= 1
    return k, mark.index - k


def _units(prefix, i: int) -> int:
    """Code point `i` of a line as a UTF-16 offset (`prefix`: its astral prefix, or None)."""
    return i if prefix is None else i + int(prefix[i])


def invisible_marks(view, rect) -> list[Drawn]:
    """The markers of the invisible characters on the lines of `view` (a TokenView) that meet
    `rect` (viewport coordinates)."""
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
    paint half a millisecond on a screenful of short lines).

    Each box stands in its character's room: the right end of the glyphs of what carries the
    room (`InvisibleRoom`), where Qt put them, so in a right-to-left run too. A character without
    its room (a soft hyphen starting a line) gets its box hanging from the line's top at its place."""
    out: list[Drawn] = []
    metrics = None
    for block, line, origin, text in lines:
        found = marks(text)
        if not found:
            continue
        metrics = metrics or QFontMetricsF(marker_font(font))
        lo = line.textStart()  # in its block
        prefix = astral_prefix(text) if has_astral(text) else None  # code points -> UTF-16 units
        top, height, x0 = origin.y() + line.y(), line.height(), origin.x()
        box_h = min(height - 2, metrics.height() + 2)
        holders = [_holder(text, m) or (m.index, 0) for m in found]
        total: dict[int, int] = {}  # what a character's room holds: its boxes, side by side
        for m, (i, _) in zip(found, holders):
            total[i] = total.get(i, 0) + room(metrics, m.label)
        used: dict[int, int] = {}
        for m, (i, n) in zip(found, holders):
            width, space = box_width(metrics, m.label), room(metrics, m.label)
            at = lo + _units(prefix, i)
            runs = [r.boundingRect() for r in line.glyphRuns(at, _units(prefix, i + n) - _units(prefix, i))] if n else []
            right = max((r.right() for r in runs), default=None)
            if right is not None and right - min(r.left() for r in runs) >= total[i] - 0.5:
                left = x0 + right - total[i] + used.get(i, 0)
                used[i] = used.get(i, 0) + space
                box = QRectF(left + PAD / 2, top + (height - box_h) / 2, width, box_h)
            else:  # no room of its own: hang the box at its place, over the top of what follows
                left = x0 + line.cursorToX(lo + _units(prefix, m.index))[0]
                box = QRectF(left + 1, top, width, min(height * 0.55, metrics.height() + 1))
            reach = None
            if m.kind == BIDI:
                a, b = bidi_scope(text, m.index)
                if b > a:
                    ends = [x0 + line.cursorToX(lo + _units(prefix, p))[0] for p in (a, b)]
                    reach = (min(ends), max(ends))
            out.append(Drawn(box, left, top, height, m.label, m.tip, m.kind == BIDI, reach))
    return out


def paint_invisibles(painter: QPainter, drawn: list[Drawn], font: QFont, dark: bool) -> None:
    """Draw the markers: a small box with the label in each character's room (red for bidi
    controls, with a dashed red line under the text they govern)."""
    if not drawn:
        return
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setFont(marker_font(font))
    red = QColor("#ff5252") if dark else QColor("#c62828")
    grey = QColor("#b0bec5") if dark else QColor("#455a64")
    fill = QColor(38, 50, 56, 215) if dark else QColor(255, 253, 231, 215)
    for d in drawn:
        colour = red if d.bidi else grey
        if d.reach is not None:
            y = d.top + d.height - 1.5
            painter.setPen(QPen(colour, 1.5, Qt.PenStyle.DashLine))
            painter.drawLine(d.reach[0], y, d.reach[1], y)
        painter.setPen(QPen(colour, 1.0))
        painter.setBrush(fill)
        painter.drawRoundedRect(d.box, 2, 2)
        painter.drawText(d.box, Qt.AlignmentFlag.AlignCenter, d.label)


def mark_at(drawn: list[Drawn], point) -> Drawn | None:
    """The marker whose box is under `point` (a QPointF), if any."""
    for d in drawn:
        if d.box.adjusted(-1, -1, 1, 1).contains(point):
            return d
    return None


class InvisibleRoom:
    """Room in a document's layout for the box of each marked invisible character (see the
    module's docstring), kept through its edits and its font's changes (`refresh_all`)."""

    def __init__(self, document: QTextDocument):
        self._doc = document
        self._metrics: tuple[str, QFontMetricsF] | None = None  # (font key, the markers' metrics)
        document.contentsChange.connect(self._on_change)

    def _on_change(self, position: int, removed: int, added: int) -> None:
        doc = self._doc
        first = doc.findBlock(position)
        if not first.isValid():
            return
        last = doc.findBlock(min(position + added, doc.characterCount() - 1))
        self.refresh(first)
        if last.isValid() and last.blockNumber() > first.blockNumber():
            self.refresh(last)
            self._refresh_found(first.position(), last.position() + last.length())

    def refresh_all(self) -> None:
        """Measure every room again (the document's font changed): only the blocks holding such
        characters are laid out again."""
        self._refresh_found(0, self._doc.characterCount())

    def _refresh_found(self, lo: int, hi: int) -> None:
        """Refresh the blocks in UTF-16 range [lo, hi) that hold a character that may be marked
        (one regular expression over the range's text: 1 MB without any in a few milliseconds)."""
        doc = self._doc
        hi = min(hi, doc.characterCount() - 1)
        if hi <= lo:
            return
        if lo == 0 and hi == doc.characterCount() - 1:  # a new text, a new font: all of it
            text = doc.toRawText()  # (a third of the time a selection's text takes)
        else:
            cursor = QTextCursor(doc)
            cursor.setPosition(lo)
            cursor.setPosition(hi, QTextCursor.MoveMode.KeepAnchor)
            text = cursor.selectedText()
        if text.isascii():
            return
        found = [m.start() for m in PATTERN.finditer(text)]
        if has_astral(text):
            found = sorted(found + [m.start() for m in ASTRAL_PATTERN.finditer(text)])
        done = -1  # where the last block refreshed ends
        for p in (lo + to_utf16(text, np.array(found, dtype=np.int64))).tolist() if found else ():
            if p >= done:
                block = doc.findBlock(p)
                self.refresh(block)
                done = block.position() + block.length()

    def refresh(self, block: QTextBlock) -> None:
        """Give the marked characters of `block` their room (none left where none are)."""
        layout = block.layout()
        text = block.text()
        wanted = [] if text.isascii() else self.rooms(text)
        have = [(r.start, r.length, r.format.fontLetterSpacing()) for r in layout.formats()]
        if wanted == have:
            return
        ranges = []
        for start, length, spacing in wanted:
            fmt = QTextCharFormat()
            fmt.setFontLetterSpacingType(QFont.SpacingType.AbsoluteSpacing)
            fmt.setFontLetterSpacing(spacing)
            r = QTextLayout.FormatRange()
            r.start, r.length, r.format = start, length, fmt
            ranges.append(r)
        layout.setFormats(ranges)
        # subtle: lays the block out again without a contentsChange (inside one, it joins it).
        self._doc.markContentsDirty(block.position(), block.length())

    def rooms(self, text: str) -> list[tuple[int, int, float]]:
        """(UTF-16 start, length, letter spacing) of each format a block holding `text` needs."""
        found = marks(text)
        if not found:
            return []
        font = marker_font(self._doc.defaultFont())
        if self._metrics is None or self._metrics[0] != font.key():
            self._metrics = (font.key(), QFontMetricsF(font))
        metrics = self._metrics[1]
        prefix = astral_prefix(text) if has_astral(text) else None
        spacing: dict[int, list] = {}
        for m in found:
            held_by = _holder(text, m)
            if held_by is None:
                continue
            i, n = held_by
            start = _units(prefix, i)
            held = spacing.setdefault(start, [_units(prefix, i + n) - start, 0.0])
            held[1] += room(metrics, m.label)
        return [(start, length, float(space)) for start, (length, space) in sorted(spacing.items())]


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
