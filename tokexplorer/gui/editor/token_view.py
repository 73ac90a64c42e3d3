"""The token view: a QPlainTextEdit that shows a document with one tokenizer's tokens painted under it.

Both the window's editor (`editor.TokenEditor`, a token view that also owns the text) and each
compare pane (`panels.compare.pane`, which wraps one) are token views; several may share one
QTextDocument, each painting its own result (`set_result`), never the document's blocks.

The text is laid out once, with one format: shaping never depends on tokens, so a token boundary
inside a Myanmar syllable, an Indic conjunct, an Arabic word or an emoji sequence cannot break how
it is drawn. (The one other format is the room an invisible character's box is given, on that
character alone: `invisibles.InvisibleRoom`, set by the editor on the document all views share.) Token backgrounds are painted beneath the text and the flag markers over it, from the
positions Qt's layout gives (`token_paint`), for the visible lines only, on every paint; a new
result or palette repaints, it never lays text out again. A line of any length costs only what is
on screen.

A long line is held as pieces with soft breaks between them (the editor makes them; what each line
break stands for is the `SourceMap` given as `source_map`): each piece's end is marked by a small
arrow, Home and End go on across them, and a copy leaves them out.

Between an edit and the tokenization of the new text, the edited lines are painted with the
previous result's tokens moved through the edits (`note_edit`, `line_tokens`), so nothing
flickers; the new result then replaces them, repainting only the lines whose tokens changed.
Colours are keyed on token ids, so unchanged tokens keep their colour.

The view says what the user points at (`hovered_token`, `caret_token`: indexes into its own
result) and shows what it is told to (`show_hovered`, `show_span`, `show_marked`, `show_token`);
whose tokens those indexes name is its owner's business. It follows the state's display settings
(colours, font, whitespace markers) only. It does not hold the text's meaning: what is tokenized,
saved and sent to the tokenizing server is the editor's (`TokenEditor.user_text`).

Whitespace markers are Qt's own (QTextOption ShowTabsAndSpaces and ShowLineAndParagraphSeparators):
they are painted, never inserted, so the text does not change. Invisible characters (bidi
controls, zero-width and format characters) get a boxed label painted in the room the layout
gives them, whether or not whitespace is shown, with a tooltip naming them (`invisibles`). The caret's token follows
`core.analysis.caret.token_at_caret`, the rule every view shares.

subtle: Qt positions are UTF-16 code units; every position handled here is one, and the tokens'
spans come converted by the worker (`Tokenized.starts16`). Code points appear only in tooltips.

Over 400 lines: painting, hover and the keys that cross soft breaks all read one layout and one
result; split apart they would pass both around on every paint.
"""

from __future__ import annotations

import html
import time
from typing import Callable

import numpy as np

from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, QRectF, Qt, Signal
from PySide6.QtGui import QFontDatabase, QFontMetricsF, QKeySequence, QPainter, QTextCursor, QTextDocument, QTextOption
from PySide6.QtWidgets import QApplication, QPlainTextDocumentLayout, QPlainTextEdit, QTextEdit

from tokexplorer.core.analysis.caret import token_at_caret
from tokexplorer.core.analysis.unicode_info import token_label
from tokexplorer.core.encoding import TokenFlag
from tokexplorer.core.positions import BREAK_NAMES, LONG_LINE, Edit, SourceMap, code_points, longest_line, utf16_len
from tokexplorer.gui.editor.invisibles import invisible_marks, mark_at, marks_on_lines, paint_invisibles
from tokexplorer.gui.editor.line_tokens import Range, line_ranges
from tokexplorer.gui.editor.token_paint import RTL, Piece, paint_backgrounds, paint_markers
from tokexplorer.gui.state import AppState
from tokexplorer.gui.widgets.colours import CLUSTER_SPLIT, TokenPalette
from tokexplorer.gui.widgets.tooltips import answer_tooltip
from tokexplorer.server.tokenized import Tokenized

LONG_BLOCK = 1 << 14  # UTF-16 units: a longer line's visible part is read through a cursor
MARK_MARGIN = 20_000  # UTF-16 units beyond the screen in which a marked token's occurrences are shown
# UTF-16 units: a longer line makes the view wrap anywhere, not at word boundaries.
# subtle: Qt's default wrapping (at a word boundary, else anywhere) looks for a word boundary from
# each wrapped line's start to the paragraph's end, so a line without one costs the square of its
# length: 3.7 s to lay out 200,000 "a" and 1.9 s again per keystroke, minutes at a million;
# wrapping anywhere lays it out in one pass (0.2 s, then 0.14 s a key; measured offscreen).
WRAP_ANYWHERE_LINE = 10_000
SOFT_MARK = "\u21a9"  # ↩ painted at the end of a piece of a long line: it goes on below
PLAIN = SourceMap()  # a document whose line breaks stand for "\n" and nothing else


def describe_token(result: Tokenized, index: int) -> str:
    """Rich-text tooltip of one token: index, id, bytes in hex, rendered text, span, flags."""
    tok = result.encoding.token(index)
    flags = [f.name.lower().replace("_", "-") for f in TokenFlag if f and tok.flags & f]
    rows = [
        ("token", f"#{tok.index} of {len(result)}"),
        ("id", str(tok.id)),
        ("bytes", tok.bytes.hex(" ") or "(none)"),
        ("text", f"“{token_label(tok.bytes)}”"),
        ("span", f"characters {tok.start}–{tok.end}"),
    ]
    if flags:
        rows.append(("flags", ", ".join(flags)))
    body = "".join(f"<tr><td><b>{k}</b></td><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return f"<table>{body}</table>"


class TokenView(QPlainTextEdit):
    """A text with its tokens painted under it, whitespace markers, token tooltips and hover."""

    hovered_token = Signal(int)  # index (in this view's result) of the token under the mouse, -1 for none
    caret_token = Signal(int)  # index of the token at the caret (core.analysis.caret), -1 for none
    # A paste held units Python cannot read (a lone surrogate): whoever sends this document's
    # text to a tokenizer must send the whole of it next time.
    unreadable_paste = Signal()

    def __init__(self, state: AppState, parent=None, *, document: QTextDocument | None = None,
                 source_map: Callable[[], SourceMap] | None = None,
                 long_paste: Callable[[str, QTextCursor], None] | None = None):
        """`document`: a QTextDocument shared with other views (each paints its own tokens);
        `source_map`: what the document's line breaks stand for now (soft breaks, a file's own
        line endings), by default plain "\\n"; `long_paste(text, cursor)`: inserts a pasted text
        with a line longer than LONG_LINE (the editor's, which cuts it into pieces)."""
        super().__init__(parent)
        if document is not None:
            # subtle: QPlainTextEdit takes only a document laid out for plain text; views sharing
            # it share that layout, and so its line width (give them one width, or no wrapping).
            if not isinstance(document.documentLayout(), QPlainTextDocumentLayout):
                document.setDocumentLayout(QPlainTextDocumentLayout(document))
            self.setDocument(document)
        self.state = state
        self._map_of = source_map or (lambda: PLAIN)
        self._long_paste = long_paste
        self._palette = TokenPalette(state.dark, state.token_colours)
        self._result: Tokenized | None = None
        self._edits: list[tuple[int, Edit]] = []  # (edit number, edit) since the result's text
        self.edit_count = 0  # edits so far (`note_edit`); a request records it as its `mark`
        # The mark of the result on screen at the last paint, and when that paint ended: how the
        # benchmark sees a keystroke's tokens reach the screen.
        self.painted_mark = -1
        self.painted_at = 0.0
        self._line_edge_press: tuple[bool, int] | None = None  # (End?, where the caret was left)
        self._marked = -1  # the token id whose occurrences are marked, -1 for none
        self._marks: list[QTextEdit.ExtraSelection] = []  # the marked token's occurrences near the view
        self.viewport().setMouseTracking(True)
        state.show_whitespace_changed.connect(self._on_show_whitespace)
        state.dark_changed.connect(self._on_palette)
        state.token_colours_changed.connect(self._on_palette)
        state.font_changed.connect(self.follow_font)
        state.hovered_span_changed.connect(self.show_span)
        self.verticalScrollBar().valueChanged.connect(lambda _: self._marked >= 0 and self._show_marks())
        self.cursorPositionChanged.connect(self._on_caret)

    # --- the document --------------------------------------------------------------------

    def source_map(self) -> SourceMap:
        """What the document's line breaks stand for now (read only here)."""
        return self._map_of()

    def display_text(self) -> str:
        """The document as shown: Qt's block separators as "\\n", soft breaks included, so NOT the
        user's text (that is `TokenEditor.user_text`); for tests and for checking the layout.

        subtle: toPlainText() would turn U+00A0 into a space and U+2028 into "\\n".
        """
        return self.document().toRawText().replace("\u2029", "\n")

    def text16(self, start: int, end: int) -> str:
        """The document's text in UTF-16 range [start, end), Qt's block separators as U+2029 (the
        document's final one, which no cursor can select, left out)."""
        end = min(end, self.document().characterCount() - 1)
        if end <= start:
            return ""
        cursor = QTextCursor(self.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        return cursor.selectedText()

    def wraps_anywhere(self) -> bool:
        """Whether lines wrap anywhere (the document has held a line of WRAP_ANYWHERE_LINE units
        since it was loaded) rather than at word boundaries."""
        return self.document().defaultTextOption().wrapMode() == QTextOption.WrapMode.WrapAnywhere

    def set_wrap_anywhere(self, on: bool) -> None:
        """Wrap lines anywhere, or at word boundaries where there are some (Qt's default).

        subtle: the option is the document's, so views sharing it wrap alike; QPlainTextEdit puts
        its own word-wrap mode back when its line-wrap mode or document is set."""
        option = self.document().defaultTextOption()
        option.setWrapMode(QTextOption.WrapMode.WrapAnywhere if on else QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.document().setDefaultTextOption(option)

    def _on_show_whitespace(self, on: bool) -> None:
        option = self.document().defaultTextOption()
        flags = QTextOption.Flag.ShowTabsAndSpaces | QTextOption.Flag.ShowLineAndParagraphSeparators
        option.setFlags(option.flags() | flags if on else option.flags() & ~flags)
        self.document().setDefaultTextOption(option)

    def _on_palette(self, *_) -> None:
        self._palette = TokenPalette(self.state.dark, self.state.token_colours)
        self.viewport().update()

    def follow_font(self) -> None:
        """The state's font: the system's fixed-width one or the application's, at its size."""
        if self.state.monospace:
            font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        else:
            font = QApplication.font()
        if self.state.font_size:
            font.setPointSize(self.state.font_size)
        self.setFont(font)

    def font_size(self) -> int:
        """The view's font size in points."""
        return self.font().pointSize()

    # --- tokens --------------------------------------------------------------------------

    @property
    def result(self) -> Tokenized | None:
        """The tokens shown (of the text as it was at `result.mark`), or None."""
        return self._result

    @property
    def tokens_current(self) -> bool:
        """Whether the tokens on screen are those of the text as it is now (no edit pending)."""
        return self._result is not None and not self._edits

    def note_edit(self, position: int, removed: int, added: int) -> int:
        """An edit of the document (UTF-16 units) that the shown tokens do not know of yet: they
        are moved through it until a result covers it. Returns its number (`edit_count`)."""
        self.edit_count += 1
        self._edits.append((self.edit_count, Edit(position, removed, added)))
        return self.edit_count

    def forget_tokens(self) -> None:
        """No tokens and no edits pending: a new text goes in."""
        self._result, self._edits = None, []

    def set_result(self, result: Tokenized | None) -> None:
        """Show the tokens of `result` (None: no colours). Only the lines whose tokens changed
        are repainted; nothing is laid out again."""
        previous, self._result = self._result, result
        mark = result.mark if result is not None else self.edit_count
        consumed = [e for n, e in self._edits if n <= mark]
        self._edits = [(n, e) for n, e in self._edits if n > mark]
        if result is None or previous is None or result.changed is None or result.refused != previous.refused:
            self.viewport().update()
        else:
            lo, hi = self._changed16(result)
            for e in consumed:  # lines drawn provisionally from the previous result
                lo, hi = min(lo, e.position), max(hi, e.position + e.added)
            self.update_range(lo, hi)
        self._show_marks()  # also clears the hover, whose token may be gone
        self._on_caret()

    def _changed16(self, result: Tokenized) -> tuple[int, int]:
        """The UTF-16 range of the text (as it is now) whose tokens or colours changed."""
        c0, c1 = result.changed
        starts, ends = result.encoding.starts, result.encoding.ends
        first = int(np.searchsorted(ends, c0, side="right"))
        last = int(np.searchsorted(starts, c1, side="left"))
        lo = int(result.starts16[first]) if first < len(starts) else int(result.ends16[-1]) if len(starts) else 0
        hi = int(result.ends16[last - 1]) if last > first else lo
        for _, e in self._edits:
            lo, hi = e.start(lo), e.end(hi)
        return lo, hi

    def update_range(self, lo: int, hi: int) -> None:
        """Repaint the part of the viewport that shows UTF-16 range [lo, hi]."""
        doc, offset, height = self.document(), self.contentOffset(), self.viewport().height()
        first, last = doc.findBlock(max(lo - 1, 0)), doc.findBlock(hi)
        if not first.isValid() or not last.isValid():
            self.viewport().update()
            return
        top = self.blockBoundingGeometry(first).translated(offset).top()
        bottom = self.blockBoundingGeometry(last).translated(offset).bottom()
        if bottom < 0 or top > height:
            return
        self.viewport().update(QRect(0, int(max(top, 0)) - 1, self.viewport().width(),
                                     int(min(bottom, height) - max(top, 0)) + 3))

    # --- painting ------------------------------------------------------------------------

    def paintEvent(self, event) -> None:
        unread: list = []  # (block, line, origin, text) of the lines that are not ASCII
        pieces = self._pieces(event.rect(), unread)
        if pieces:
            painter = QPainter(self.viewport())
            paint_backgrounds(painter, pieces, self._palette)
            painter.end()
        super().paintEvent(event)
        if any(p.flags for p in pieces):
            painter = QPainter(self.viewport())
            paint_markers(painter, pieces, self._palette)
            painter.end()
        if self.source_map().src:
            painter = QPainter(self.viewport())
            self._paint_breaks(painter, event.rect())
            painter.end()
        drawn = invisible_marks(self, event.rect()) if self._result is None else marks_on_lines(self.font(), unread)
        if drawn:
            painter = QPainter(self.viewport())
            paint_invisibles(painter, drawn, self.font(), self.state.dark)
            painter.end()
        self.painted_mark = self._result.mark if self._result is not None else -1
        self.painted_at = time.perf_counter()

    def _paint_breaks(self, painter: QPainter, rect: QRect) -> None:
        """At the end of each line whose break stands for something Qt cannot hold (a U+2029, a
        lone CR...), its name in a small box: the text there is not what it seems; at the end of
        a piece of a long line (a soft break), a small arrow."""
        font = self.font()
        font.setPointSizeF(max(6.0, font.pointSizeF() * 0.7))
        painter.setFont(font)
        metrics = QFontMetricsF(font)
        colour = self._palette.marker(CLUSTER_SPLIT)
        painter.setPen(colour)
        stands_for_at = self.source_map().break_at
        for block, line, origin in self.visible_lines(rect):
            if line.lineNumber() != block.layout().lineCount() - 1:
                continue
            stands_for = stands_for_at(block.position() + block.length() - 1)
            if stands_for is None:
                continue
            x = origin.x() + line.cursorToX(line.textStart() + line.textLength())[0] + 4
            if not stands_for:  # a soft break: the line goes on below, nothing to read there
                painter.drawText(QRectF(x - 2, origin.y() + line.y(), metrics.horizontalAdvance(SOFT_MARK) + 4,
                                        line.height()), Qt.AlignmentFlag.AlignCenter, SOFT_MARK)
                continue
            name = BREAK_NAMES.get(stands_for, "?")
            box = QRectF(x, origin.y() + line.y() + 2, metrics.horizontalAdvance(name) + 6, line.height() - 4)
            painter.drawRoundedRect(box, 3, 3)
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, name)

    def visible_lines(self, rect: QRect):
        """(block, QTextLine, the layout's origin in viewport coordinates) of each laid-out line
        that meets `rect` (viewport coordinates)."""
        offset = self.contentOffset()
        block = self.firstVisibleBlock()
        if rect.top() > 0:
            # A keystroke repaints a line or two: start from the block Qt finds at the top of
            # `rect` (one call) rather than measure every block above it on the screen.
            found = self.cursorForPosition(QPoint(0, rect.top())).block()
            if found.blockNumber() > block.blockNumber():
                block = found.previous()
        while block.isValid():
            geometry = self.blockBoundingGeometry(block).translated(offset)
            if geometry.top() > rect.bottom():
                return
            if block.isVisible() and geometry.bottom() >= rect.top():
                layout = block.layout()
                origin = geometry.topLeft() + layout.position()
                # A long paragraph wraps into thousands of lines: find the first visible one.
                lo, hi = 0, layout.lineCount()
                while lo < hi:
                    mid = (lo + hi) // 2
                    line = layout.lineAt(mid)
                    if origin.y() + line.y() + line.height() < rect.top():
                        lo = mid + 1
                    else:
                        hi = mid
                for i in range(lo, layout.lineCount()):
                    line = layout.lineAt(i)
                    if origin.y() + line.y() > rect.bottom():
                        break
                    yield block, line, origin
            block = block.next()

    def visible_range(self) -> tuple[int, int]:
        """UTF-16 positions at the viewport's top-left and bottom-right corners."""
        vp = self.viewport()
        return (self.cursorForPosition(QPoint(0, 0)).position(),
                self.cursorForPosition(QPoint(vp.width(), vp.height())).position())

    def _pieces(self, rect: QRect, unread: list | None = None) -> list[Piece]:
        """What to paint in `rect`: one piece per token (per bidi run of it) on each visible line;
        the lines whose text is not ASCII are added to `unread` (block, line, origin, text), for
        the invisible characters' markers."""
        if self._result is None:
            return []
        pieces: list[Piece] = []
        for block, line, origin in self.visible_lines(rect):
            base = block.position()
            lo = base + line.textStart()
            hi = lo + line.textLength()
            text = self.line_text(block, lo, hi)
            if unread is not None and not text.isascii():
                unread.append((block, line, origin, text))
            ranges = self._ranges(lo, hi, text)
            if not ranges:
                continue
            top, height, baseline = origin.y() + line.y(), line.height(), origin.y() + line.y() + line.ascent()
            x0 = origin.x()
            if not text.isascii() and RTL.search(text):
                # subtle: in a mixed-direction line a token may be drawn in several places, and
                # cursorToX is ambiguous where the direction changes: ask Qt for the token's glyphs.
                for s, t, colour, flags, cut in ranges:
                    for run in line.glyphRuns(s - base, t - s):
                        r = run.boundingRect()
                        pieces.append(Piece(x0 + r.left(), x0 + r.right(), top, height, baseline,
                                            colour, flags, None))
                continue
            # Left to right: a token ends where the next begins, so each x is asked for once.
            # cursorToX moves a position that Qt cannot draw (inside a shaped cluster) to the
            # next one it can. (Inline, not a helper: a screenful is a few hundred pieces.)
            x_at: dict[int, float] = {}
            to_x = line.cursorToX
            for s, t, colour, flags, cut in ranges:
                a = x_at.get(s)
                if a is None:
                    a = x_at[s] = x0 + to_x(s - base)[0]
                b = x_at.get(t)
                if b is None:
                    b = x_at[t] = x0 + to_x(t - base)[0]
                pieces.append(Piece(a, b, top, height, baseline, colour, flags,
                                    None if cut is None else x0 + to_x(cut - base)[0]))
        return pieces

    def line_text(self, block, lo: int, hi: int) -> str:
        """The document's text in UTF-16 range [lo, hi) of `block`."""
        if block.length() < LONG_BLOCK:
            text = block.text()
            if len(text) == block.length() - 1:  # no astral character: code points are units
                return text[lo - block.position():hi - block.position()]
        return self.text16(lo, hi)

    def _ranges(self, lo: int, hi: int, text: str) -> list[Range]:
        """The tokens to paint in UTF-16 range [lo, hi) of one line (`line_tokens.line_ranges`)."""
        return line_ranges(self._result, [e for _, e in self._edits], lo, hi, text)

    def drawn_tokens(self) -> list[tuple[int, int, int, int]]:
        """(start, end, colour index, flags) of every token range painted on the visible lines,
        in UTF-16 positions (one per line a token covers): what the user sees, for tests."""
        out = []
        for block, line, _ in self.visible_lines(self.viewport().rect()):
            lo = block.position() + line.textStart()
            hi = lo + line.textLength()
            out += [(s, t, c, f) for s, t, c, f, _ in self._ranges(lo, hi, self.line_text(block, lo, hi))]
        return out

    # --- copy, paste, drops, keys --------------------------------------------------------

    def createMimeDataFromSelection(self):
        """Copy or drag the selection without the soft breaks in it (they are not in the text):
        Qt's own mime data, as plain text only.

        subtle: Qt's mime data makes its formats from the selection when first asked (a setText
        before that is overwritten), so it is asked once first. A QMimeData made here instead
        is deleted by both Qt and PySide: the process crashed at exit."""
        cursor = self.textCursor()
        start, end = cursor.selectionStart(), cursor.selectionEnd()
        mime = super().createMimeDataFromSelection()
        source = self.source_map()
        soft = [p - start for p, s in zip(source.pos16.tolist(), source.src) if not s and start <= p < end]
        if not soft:
            return mime
        text = cursor.selectedText().replace("\u2029", "\n")
        cuts = code_points(text, soft).tolist()
        mime.text()
        for kind in mime.formats():
            mime.removeFormat(kind)
        mime.setText("".join(text[a + 1:b] for a, b in zip([-1] + cuts, cuts + [len(text)])))
        return mime

    def keyPressEvent(self, event) -> None:
        """Home and End as in editors that wrap: to the start or end of the line on screen, and
        pressed again (or where Qt would not move), on to the start or end of the whole line,
        across the soft breaks of a long line's pieces too.

        subtle: where a line wraps anywhere, the end of a line on screen is the same position
        as the start of the next one, and Qt's End from there goes to the next line's end: so
        "again" is the key pressed again with the caret where the last press left it."""
        S, Mode = QKeySequence.StandardKey, QTextCursor.MoveMode
        for key, forward, mode in ((S.MoveToEndOfLine, True, Mode.MoveAnchor),
                                   (S.SelectEndOfLine, True, Mode.KeepAnchor),
                                   (S.MoveToStartOfLine, False, Mode.MoveAnchor),
                                   (S.SelectStartOfLine, False, Mode.KeepAnchor)):
            if event.matches(key):
                before = self.textCursor().position()
                if self._line_edge_press != (forward, before):
                    super().keyPressEvent(event)
                if self.textCursor().position() == before:
                    cursor = self.textCursor()
                    cursor.setPosition(self._whole_line_edge(cursor.block(), forward), mode)
                    self.setTextCursor(cursor)
                self._line_edge_press = (forward, self.textCursor().position())
                return
        super().keyPressEvent(event)

    def _whole_line_edge(self, block, forward: bool) -> int:
        """Where the line of `block` ends (`forward`) or starts: the block's end or start, or, in
        a long line held in pieces, the last or first piece's."""
        stands_for = self.source_map().break_at  # "" for a soft break
        if forward:
            while block.next().isValid() and stands_for(block.position() + block.length() - 1) == "":
                block = block.next()
            return block.position() + block.length() - 1
        while block.previous().isValid() and stands_for(block.position() - 1) == "":
            block = block.previous()
        return block.position()

    def canInsertFromMimeData(self, source) -> bool:
        # Dropped or pasted files are opened by the window, not inserted as their paths.
        if source.hasUrls() and all(u.isLocalFile() for u in source.urls()):
            return False
        return super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source) -> None:
        """Paste or drop, with any lone surrogate in the pasted text shown as U+FFFD; a line
        longer than LONG_LINE goes in through `long_paste` (as pieces) when there is one.

        subtle: Qt keeps a lone surrogate that another program (or Python) put in a QString, but
        PySide drops it on every way back to Python (`text()`, `selectedText()`, `toRawText()`),
        so a tokenizer's copy of the text would miss a unit that Qt counts, for ever. The repair
        joins the paste's undo step (one undo removes both), and `unreadable_paste` asks for the
        whole text to be sent, since the paste's own change was read without the unit.
        subtle: no edit block may be open around Qt's own insert: with PySide6 6.11 a paste inside
        `beginEditBlock` segfaults in QtGui after a few hundred to a few thousand pastes (seen in
        the soak; a bare QPlainTextEdit subclass does the same).
        """
        text = source.text() if source.hasText() else ""
        if (self._long_paste is not None and longest_line(text, LONG_LINE + 1)
                and not any(ch in text for ch in "\r\u2029\ufdd0\ufdd1")):
            cursor = self.textCursor()
            self._long_paste(text, cursor)
            self.setTextCursor(cursor)
            return
        start = self.textCursor().selectionStart()
        super().insertFromMimeData(source)
        end = self.textCursor().position()
        if end - start != utf16_len(source.text()):  # units Python cannot see
            self.unreadable_paste.emit()
            self._replace_lone_surrogates(start, end)

    def _replace_lone_surrogates(self, start: int, end: int) -> None:
        doc = self.document()
        units = [doc.characterAt(p) for p in range(start, end)]
        lone = []
        for i, u in enumerate(units):
            code = ord(u) if len(u) == 1 else 0
            if 0xD800 <= code <= 0xDBFF:
                paired = i + 1 < len(units) and len(units[i + 1]) == 1 and 0xDC00 <= ord(units[i + 1]) <= 0xDFFF
            elif 0xDC00 <= code <= 0xDFFF:
                paired = i > 0 and len(units[i - 1]) == 1 and 0xD800 <= ord(units[i - 1]) <= 0xDBFF
            else:
                continue
            if not paired:
                lone.append(start + i)
        fix = QTextCursor(doc)
        fix.joinPreviousEditBlock()  # one undo step with the paste
        for p in reversed(lone):  # from the end, so earlier positions stay put
            fix.setPosition(p)
            fix.setPosition(p + 1, QTextCursor.MoveMode.KeepAnchor)
            fix.insertText("\ufffd")
        fix.endEditBlock()

    def dragEnterEvent(self, event) -> None:
        if not self.canInsertFromMimeData(event.mimeData()) and event.mimeData().hasUrls():
            event.ignore()  # the main window takes it
            return
        super().dragEnterEvent(event)

    # --- hover, caret, marks -------------------------------------------------------------

    def token_at(self, point: QPoint) -> int | None:
        """Index of the token under a viewport point, if the result is current."""
        result = self._result
        if result is None or self._edits:
            return None
        cursor = self.cursorForPosition(point)
        rect = self.cursorRect(cursor)
        # cursorForPosition snaps to the nearest character; past a line's end there is no token.
        if abs(rect.center().y() - point.y()) > rect.height() or point.x() > rect.right() + rect.height() * 2:
            return None
        p = cursor.position()
        index = result.index_at16(p)
        if index is None or (point.x() < rect.left() and p > 0):
            index = result.index_at16(p - 1) if p > 0 else index
        return index

    def mouseMoveEvent(self, event) -> None:
        super().mouseMoveEvent(event)
        index = self.token_at(event.position().toPoint())
        self.hovered_token.emit(-1 if index is None else index)

    def leaveEvent(self, event) -> None:
        super().leaveEvent(event)
        self.hovered_token.emit(-1)

    def viewportEvent(self, event) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            pos = event.pos()
            mark = mark_at(invisible_marks(self, QRect(0, pos.y() - 2, self.viewport().width(), 5)), QPointF(pos))
            if mark is not None:
                return answer_tooltip(event, html.escape(mark.tip), self.viewport())
            index = self.token_at(pos)
            tip = None if index is None else describe_token(self._result, index)
            return answer_tooltip(event, tip, self.viewport())
        return super().viewportEvent(event)

    def _select(self, selections: list) -> None:
        """Show these extra selections (hover, refusal) over the marked occurrences."""
        self.setExtraSelections(self._marks + selections)

    def _on_caret(self) -> None:
        result = self._result
        index = None if result is None or self._edits else token_at_caret(
            result.starts16, result.ends16, self.textCursor().position())
        self.caret_token.emit(-1 if index is None else index)

    def show_marked(self, token_id: int) -> None:
        """Mark the occurrences of this token id (of this view's tokenizer; -1: none)."""
        self._marked = token_id
        self._show_marks()

    def _show_marks(self, *_) -> None:
        """Mark the occurrences of the marked token id on and near the screen (all of a book's
        would cost every paint a walk over them); clears the hover."""
        result, token_id = self._result, self._marked
        self._marks = []
        if result is not None and token_id >= 0 and not self._edits:
            lo, hi = self.visible_range()
            near = result.range16(max(0, lo - MARK_MARGIN), hi + MARK_MARGIN)
            ids = result.encoding.id_array[near.start:near.stop]
            fmt = self._palette.marked()
            for i in (near.start + np.flatnonzero(ids == token_id)).tolist():
                selection = QTextEdit.ExtraSelection()
                cursor = QTextCursor(self.document())
                cursor.setPosition(int(result.starts16[i]))
                cursor.setPosition(int(result.ends16[i]), QTextCursor.MoveMode.KeepAnchor)
                selection.cursor, selection.format = cursor, fmt
                self._marks.append(selection)
        self._select([])

    def show_hovered(self, index: int) -> None:
        """Highlight the token of this index in this view's result (-1: none)."""
        result = self._result
        if result is None or index < 0 or index >= len(result) or self._edits:
            self._select([])
            return
        self._mark(int(result.starts16[index]), int(result.ends16[index]))

    def show_span(self, start: int, end: int) -> None:
        """Highlight a code-point range that starts and ends at token boundaries (a regex chunk,
        a token hovered in another pane), with this view's tokens; -1, -1: none."""
        result = self._result
        if result is None or start < 0 or self._edits:
            self._select([])
            return
        tokens = result.encoding.token_range(start, end)
        if len(tokens):
            self._mark(int(result.starts16[tokens[0]]), int(result.ends16[tokens[-1]]))

    def _mark(self, start16: int, end16: int) -> None:
        selection = QTextEdit.ExtraSelection()
        cursor = QTextCursor(self.document())
        cursor.setPosition(start16)
        cursor.setPosition(end16, QTextCursor.MoveMode.KeepAnchor)
        selection.cursor = cursor
        selection.format = self._palette.hover()
        self._select([selection])

    def show_token(self, index: int) -> None:
        """Scroll to a token and put the cursor at its start."""
        result = self._result
        if result is None or not 0 <= index < len(result):
            return
        cursor = self.textCursor()
        cursor.setPosition(int(result.starts16[index]))
        self.setTextCursor(cursor)
        self.centerCursor()
