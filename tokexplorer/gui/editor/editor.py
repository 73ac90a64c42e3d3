"""The editor pane: a QPlainTextEdit that paints each token's colour under its text.

The text is laid out once, with one format: shaping never depends on tokens, so a token boundary
inside a Myanmar syllable, an Indic conjunct, an Arabic word or an emoji sequence cannot break how
it is drawn. Token backgrounds are painted beneath the text and the flag markers over it, from the
positions Qt's layout gives (`token_paint`), for the visible lines only, on every paint; a new
result or palette repaints, it never lays text out again. A line of any length costs only what is
on screen.

Qt itself lays a whole block out again on every edit of it, so a long line is held as pieces with
soft breaks between them (`positions.editor_text`), marked by a small arrow at each piece's end;
they stand for nothing in the text that is tokenized, saved and copied.

Between an edit and the tokenization of the new text, the edited lines are painted with the
previous result's tokens moved through the edits (`positions.Edit`), so nothing flickers; the new
result then replaces them, repainting only the lines whose tokens changed. Colours are keyed on
token ids, so unchanged tokens keep their colour.

What is painted depends only on this view's own result (`set_result`), never on the document or
its blocks: several views may share one QTextDocument, each painting its own tokenizer's tokens
(pass `document=`, and `follow_state=False` to feed it results yourself).

Whitespace markers are Qt's own (QTextOption ShowTabsAndSpaces and ShowLineAndParagraphSeparators):
they are painted, never inserted, so the text does not change.

subtle: Qt positions are UTF-16 code units; every position handled here is one, and the tokens'
spans come converted by the worker (`Tokenized.starts16`). Code points appear only in tooltips.
"""

from __future__ import annotations

import bisect
import html
import time

import numpy as np

from PySide6.QtCore import QEvent, QPoint, QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QFontMetricsF, QKeySequence, QPainter, QTextCursor, QTextDocument, QTextOption
from PySide6.QtWidgets import QApplication, QPlainTextDocumentLayout, QPlainTextEdit, QTextEdit, QToolTip

from tokexplorer.core.encoding import TokenFlag
from tokexplorer.core.analysis.unicode_info import token_label
from tokexplorer.gui.widgets.colours import CLUSTER_SPLIT, TokenPalette
from tokexplorer.core.positions import (BREAK_NAMES, LONG_LINE, Edit, EditorText, SourceMap, cluster_bounds16, code_points,
                        longest_line, soft_breaks, to_utf16, utf16_len)
from tokexplorer.gui.state import AppState
from tokexplorer.gui.editor.token_paint import RTL, Piece, paint_backgrounds, paint_markers
from tokexplorer.server.tokenized import DROPPED, Tokenized
from tokexplorer.server.protocol import TextDelta

LOAD_SLICE = 1 << 16  # characters inserted per event-loop turn when loading a big text
LONG_BLOCK = 1 << 14  # UTF-16 units: a longer line's visible part is read through a cursor
MAX_OUTBOX = 1 << 16  # inserted characters beyond which a snapshot sends the whole text
MARK_MARGIN = 20_000  # UTF-16 units beyond the screen in which a marked token's occurrences are shown
PROBE_UNITS = 32  # UTF-16 units each side of an edit that a request sends to check the worker's copy
PROBE_EDITS = 4  # the last edits of a request probed around
PROBE_WALK = 4096  # UTF-16 units of one more probe per request, that walks through the text
# UTF-16 units: a longer line makes the editor wrap anywhere, not at word boundaries.
# subtle: Qt's default wrapping (at a word boundary, else anywhere) looks for a word boundary from
# each wrapped line's start to the paragraph's end, so a line without one costs the square of its
# length: 3.7 s to lay out 200,000 "a" and 1.9 s again per keystroke, minutes at a million;
# wrapping anywhere lays it out in one pass (0.2 s, then 0.14 s a key; measured offscreen).
WRAP_ANYWHERE_LINE = 10_000
SOFT_MARK = "\u21a9"  # ↩ painted at the end of a piece of a long line: it goes on below


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


def _low_surrogate(unit: str) -> bool:
    """Whether a UTF-16 unit read from the document is the second half of an astral character."""
    return len(unit) == 1 and 0xDC00 <= ord(unit) <= 0xDFFF


class TokenEditor(QPlainTextEdit):
    """Plain-text editor with token colours, whitespace markers, token tooltips and hover."""

    text_edited = Signal()  # the user changed the text (not emitted while a file loads)
    load_progress = Signal(int, int)  # characters inserted so far, total
    load_started = Signal()  # load_text goes in slices: the worker may tokenize the text meanwhile
    loaded = Signal()  # load_text finished

    def __init__(self, state: AppState, parent=None, *, document: QTextDocument | None = None,
                 follow_state: bool = True):
        """`document`: a QTextDocument shared with other views (each paints its own tokens);
        `follow_state`: take results from `state.tokenized`, else only from `set_result`."""
        super().__init__(parent)
        if document is not None:
            # subtle: QPlainTextEdit takes only a document laid out for plain text; views sharing
            # it share that layout, and so its line width (give them one width, or no wrapping).
            if not isinstance(document.documentLayout(), QPlainTextDocumentLayout):
                document.setDocumentLayout(QPlainTextDocumentLayout(document))
            self.setDocument(document)
        self.state = state
        self.setObjectName("editor")
        self.setPlaceholderText("Type or paste text, or drop a file here, to see its tokens.")
        self._palette = TokenPalette(state.dark, state.token_colours)
        self._result: Tokenized | None = None
        self._edits: list[tuple[int, Edit]] = []  # (edit number, edit) since the result's text
        self.edit_count = 0  # edits so far; a request records it as its `mark`
        self._loading = False
        self._load_id = 0
        self._outbox: list[tuple[int, int, str]] | None = None  # edits not yet sent; None: send all
        # The text given to load_text while nothing has edited it since: the snapshot sends it
        # instead of reading 50 MB back out of Qt in the UI thread.
        self._loaded_text: str | None = None
        self._as_loaded: str | None = None  # the last load's source text, until an edit (text_as_loaded)
        self._loaded_len16 = 0  # its length in UTF-16 units
        self._load_sent = False  # a snapshot taken during the current load gave the worker its text
        self._source = SourceMap()  # what the editor's line breaks stand for in the source
        # The last edit seen and the source's edit for it (position, removed, added, source edit),
        # for views sharing the document and its map.
        self.last_source_edit: tuple[int, int, int, tuple[int, int, str] | None] | None = None
        self._unsent: list[Edit] = []  # the last PROBE_EDITS edits since the last snapshot
        self._walk = 0  # where the next walking probe starts
        self._blocks = self.document().blockCount()  # after the last change seen
        self._redo_steps = 0  # the document's redo steps after the last change seen: more is an undo
        self._loaded_soft16: tuple[int, ...] = ()  # the loading text's soft breaks (TextDelta.soft16)
        self._soft_paste: list[int] = []  # where the paste being inserted has soft breaks (UTF-16)
        # The mark of the result on screen at the last paint, and when that paint ended: how the
        # benchmark sees a keystroke's tokens reach the screen.
        self.painted_mark = -1
        self.painted_at = 0.0
        self._line_edge_press: tuple[bool, int] | None = None  # (End?, where the caret was left)
        self.document().contentsChange.connect(self._on_contents_change)
        self.viewport().setMouseTracking(True)
        if follow_state:
            state.tokenized.connect(self.set_result)
        state.hovered_changed.connect(self._on_hovered)
        state.reveal_token.connect(self.show_token)
        state.show_whitespace_changed.connect(self._on_show_whitespace)
        state.dark_changed.connect(self._on_palette)
        state.token_colours_changed.connect(self._on_palette)
        state.font_changed.connect(self._on_font)
        state.hovered_span_changed.connect(self._on_hovered_span)
        self._marks: list[QTextEdit.ExtraSelection] = []  # the marked token's occurrences near the view
        state.marked_changed.connect(self._show_marks)
        self.verticalScrollBar().valueChanged.connect(lambda _: self.state.marked >= 0 and self._show_marks())
        self.cursorPositionChanged.connect(self._on_caret)

    # --- text in and out -----------------------------------------------------------------

    def plain_text(self) -> str:
        """The text exactly as tokenized: Qt's block separators as "\\n", non-breaking spaces kept.

        subtle: toPlainText() would turn U+00A0 into a space and U+2028 into "\\n".
        """
        return self.document().toRawText().replace("\u2029", "\n")

    def source_text(self) -> str:
        """The text as tokenized and saved: the editor's, with each line break standing for what
        the file held there (`positions.SourceMap`)."""
        text = self.plain_text()
        return text if self._source.identity else self._source.source(text)

    def text_as_loaded(self) -> str | None:
        """The source text the last load put in while no edit has changed it, else None: the
        very str the worker was given, so reading it copies nothing (reading 50 MB back out of
        Qt holds the window for a second)."""
        return None if self._loading else self._as_loaded

    @property
    def loading(self) -> bool:
        """Whether a text given to `load_text` is still going in (the editor is read-only meanwhile)."""
        return self._loading

    @property
    def load_sent(self) -> bool:
        """Whether the worker has had the whole text of the last load (asked for while it went
        in): the load's end then needs no request of its own."""
        return self._load_sent

    def load_text(self, text: str | EditorText) -> None:
        """Replace the whole text, clearing the undo history; emits `loaded` when done. An
        EditorText brings the source it stands for (a file's own line breaks).

        A big text goes in slices between events, so the window stays responsive and shows
        progress (a 50 MB text takes Qt about 10 s to take in, in one piece or many).
        """
        self._loading = True
        self._load_id += 1  # a load still running in slices stops at its next step
        load_id = self._load_id
        self._result, self._edits, self._outbox, self._unsent = None, [], None, []
        self._load_sent = False
        if isinstance(text, EditorText):
            self._source = text.map or SourceMap(text.newline)
            self._loaded_text, self._loaded_len16 = text.source or text.text, text.length16
            self._as_loaded = self._loaded_text
            text = text.text
        else:
            self._source = SourceMap()
            self._loaded_text, self._loaded_len16 = text, utf16_len(text)
            self._as_loaded = text
        # The document fills up in slices, so the breaks before a position are counted in the text.
        breaks = np.flatnonzero(np.frombuffer(text.encode("utf-16-le", "surrogatepass"), dtype=np.uint16) == 10) \
            if self._source.newline != "\n" and "" in self._source.src else None
        self._loaded_soft16 = tuple(self._source.soft16(lambda p: int(np.searchsorted(breaks, p))).tolist())
        self.setReadOnly(True)
        doc = self.document()
        doc.setUndoRedoEnabled(False)
        anywhere = bool(self._loaded_soft16) or longest_line(text, WRAP_ANYWHERE_LINE) > 0
        if anywhere != self.wraps_anywhere():
            self.clear()  # subtle: else Qt lays the old text out again in the new mode
            self._wrap_anywhere(anywhere)  # before Qt lays the new text out
        if len(text) <= LOAD_SLICE:
            self.setPlainText(text)
            self._finish_load()
            return
        self.clear()
        slices = iter(range(0, len(text), LOAD_SLICE))
        self.load_started.emit()

        def step() -> None:
            if load_id != self._load_id:
                return
            start = next(slices, None)
            if start is None:
                self._finish_load()
                return
            cursor = QTextCursor(doc)
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText(text[start:start + LOAD_SLICE])
            self.load_progress.emit(min(start + LOAD_SLICE, len(text)), len(text))
            QTimer.singleShot(0, self, step)  # with the editor as context: none after it is gone

        step()

    def _finish_load(self) -> None:
        doc = self.document()
        doc.setUndoRedoEnabled(True)
        doc.setModified(False)
        self.setReadOnly(False)
        self._blocks = doc.blockCount()
        self._redo_steps = 0
        self.moveCursor(QTextCursor.MoveOperation.Start)
        self._loading = False
        if self._load_sent:  # the worker's copy holds it: later snapshots send edits only
            self._loaded_text = None
        self.loaded.emit()

    def snapshot(self, full: bool = False) -> TextDelta:
        """What changed since the previous snapshot: the edits when they are plain ones, else the
        whole text; with how many edits it includes and the text's length in UTF-16 units."""
        if self._loading:
            # subtle: Qt is still taking the text in slices; the worker gets all of it (and
            # tokenizes meanwhile) with the whole text's length, so its copy is in step when
            # the load ends and the next request brings no edits.
            self._outbox, self._unsent = [], []
            self._load_sent = True
            return TextDelta(self._loaded_text, None, self.edit_count, self._loaded_len16,
                             soft16=self._loaded_soft16)
        outbox, self._outbox = self._outbox, []
        doc = self.document()
        length16 = doc.characterCount() - 1  # without the final block separator
        if not self._source.identity:  # the source's length
            length16 += self._source.extra(length16, doc.blockCount() - 1)
        loaded, self._loaded_text = self._loaded_text, None
        edits, self._unsent = self._unsent, []
        soft16 = () if self._source.identity else tuple(
            self._source.soft16(lambda p: doc.findBlock(p).blockNumber()).tolist())
        if full or outbox is None or sum(len(t) for _, _, t in outbox) > MAX_OUTBOX:
            text = loaded if loaded is not None and not outbox else self.source_text()
            return TextDelta(text, None, self.edit_count, length16, soft16=soft16)
        return TextDelta(None, outbox, self.edit_count, length16, self._probes(edits), soft16)

    def _probes(self, edits: list[Edit]) -> tuple[tuple[int, str], ...]:
        """Bits of the source, as (source UTF-16 position, text), for the worker to find in its
        copy: around each of `edits` (where they lie now), and one window that walks through the
        text a step per request, so that a copy gone wrong anywhere is found in the end. Costs
        a few short reads of the document, whatever its size."""
        doc = self.document()
        end = doc.characterCount() - 1
        spans = []
        for k, e in enumerate(edits):
            lo, hi = e.position, e.position + e.added
            for later in edits[k + 1:]:
                lo, hi = later.start(lo), later.end(hi)
            spans.append((lo - PROBE_UNITS, max(lo, hi) + PROBE_UNITS))
        if self._walk >= end:
            self._walk = 0
        spans.append((self._walk, self._walk + PROBE_WALK))
        self._walk += PROBE_WALK
        probes = []
        for lo, hi in spans:
            lo, hi = max(0, lo), min(end, hi)
            # subtle: never half an astral character (PySide drops a lone surrogate it reads).
            if 0 < lo < end and _low_surrogate(doc.characterAt(lo)):
                lo -= 1
            if 0 < hi < end and _low_surrogate(doc.characterAt(hi)):
                hi += 1
            if hi <= lo:
                continue
            text = self._text16(lo, hi).replace("\u2029", "\n")
            if self._source.identity:
                probes.append((lo, text))
            else:
                probes.append((lo + self._source.extra(lo, doc.findBlock(lo).blockNumber()),
                               self._source.source(text, lo)))
        return tuple(probes)

    # --- edits and results ----------------------------------------------------------------

    def _on_contents_change(self, position: int, removed: int, added: int) -> None:
        if self._loading or (removed == 0 and added == 0):
            return
        self.edit_count += 1
        self._loaded_text = self._as_loaded = None
        self._edits.append((self.edit_count, Edit(position, removed, added)))
        self._unsent = self._unsent[1 - PROBE_EDITS:] + [Edit(position, removed, added)]
        doc = self.document()
        redo_steps, self._redo_steps = self._redo_steps, doc.availableRedoSteps()
        source_edit = None
        if self._source.tracking or self._soft_paste:  # where the edit falls in the source, and what it spells
            inserted = self._text16(position, position + added).replace("\u2029", "\n")
            end = position + added
            following = "" if end >= doc.characterCount() - 1 else doc.characterAt(end).replace("\u2029", "\n")
            source_edit = self._source.follow(
                position, removed, inserted, breaks_before=doc.findBlock(position).blockNumber(),
                removed_breaks=self._blocks - doc.blockCount() + inserted.count("\n"), following=following,
                # an undo adds a step to redo, a redo takes one (a new edit after an undo clears them)
                undo=self._redo_steps != redo_steps, soft=[p - position for p in self._soft_paste])
            if source_edit is None:  # a view on a shared document that cannot tell: send it all
                self._outbox = None
        self.last_source_edit = (position, removed, added, source_edit)
        self._blocks = doc.blockCount()
        if added > WRAP_ANYWHERE_LINE // 2 and not self.wraps_anywhere():  # a long line pasted
            block, end = doc.findBlock(position), doc.findBlock(position + added)
            while block.isValid() and block.length() <= WRAP_ANYWHERE_LINE and block != end:
                block = block.next()
            if block.isValid() and block.length() > WRAP_ANYWHERE_LINE:
                self._wrap_anywhere(True)
        self._post_edit(position, removed, added, source_edit)
        self.text_edited.emit()

    def _text16(self, start: int, end: int) -> str:
        """The editor's text in UTF-16 range [start, end), Qt's block separators as U+2029 (the
        document's final one, which no cursor can select, left out)."""
        end = min(end, self.document().characterCount() - 1)
        if end <= start:
            return ""
        cursor = QTextCursor(self.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        return cursor.selectedText()

    def _post_edit(self, position: int, removed: int, added: int,
                   source_edit: tuple[int, int, str] | None) -> None:
        """Queue the edit for the worker's copy of the source, or ask for the whole text: the
        source's edit (position, units removed, text inserted) from the SourceMap, or None when
        the source is the editor's text.

        subtle: Qt counts the document's final block separator in some changes (setPlainText
        reports removing 1 character from an empty document); an edit that reaches it is not a
        plain-text edit, so the next snapshot sends the whole text instead.
        """
        if self._outbox is None:
            return
        count = self.document().characterCount()
        if position + added > count - 1 or position + removed > count - added + removed - 1:
            self._outbox = None
            return
        if source_edit is None:
            source_edit = (position, removed, self._text16(position, position + added).replace("\u2029", "\n"))
        self._outbox.append(source_edit)

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
            self._update_range(lo, hi)
        self._show_marks()  # also clears the hover, whose token may be gone
        self._on_caret()

    def _changed16(self, result: Tokenized) -> tuple[int, int]:
        """The UTF-16 range of the editor's text (as it is now) whose tokens or colours changed."""
        c0, c1 = result.changed
        starts, ends = result.encoding.starts, result.encoding.ends
        first = int(np.searchsorted(ends, c0, side="right"))
        last = int(np.searchsorted(starts, c1, side="left"))
        lo = int(result.starts16[first]) if first < len(starts) else int(result.ends16[-1]) if len(starts) else 0
        hi = int(result.ends16[last - 1]) if last > first else lo
        for _, e in self._edits:
            lo, hi = e.start(lo), e.end(hi)
        return lo, hi

    def _update_range(self, lo: int, hi: int) -> None:
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

    def _on_palette(self, *_) -> None:
        self._palette = TokenPalette(self.state.dark, self.state.token_colours)
        self.viewport().update()

    def _on_font(self) -> None:
        """The state's font: the system's fixed-width one or the application's, at its size."""
        if self.state.monospace:
            font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        else:
            font = QApplication.font()
        if self.state.font_size:
            font.setPointSize(self.state.font_size)
        self.setFont(font)

    def font_size(self) -> int:
        """The editor's font size in points."""
        return self.font().pointSize()

    def wraps_anywhere(self) -> bool:
        """Whether lines wrap anywhere (the document has held a line of WRAP_ANYWHERE_LINE units
        since it was loaded) rather than at word boundaries."""
        return self.document().defaultTextOption().wrapMode() == QTextOption.WrapMode.WrapAnywhere

    def _wrap_anywhere(self, on: bool) -> None:
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

    # --- painting ------------------------------------------------------------------------

    def paintEvent(self, event) -> None:
        pieces = self._pieces(event.rect())
        if pieces:
            painter = QPainter(self.viewport())
            paint_backgrounds(painter, pieces, self._palette)
            painter.end()
        super().paintEvent(event)
        if any(p.flags for p in pieces):
            painter = QPainter(self.viewport())
            paint_markers(painter, pieces, self._palette)
            painter.end()
        if self._source.src:
            painter = QPainter(self.viewport())
            self._paint_breaks(painter, event.rect())
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
        for block, line, origin in self._visible_lines(rect):
            if line.lineNumber() != block.layout().lineCount() - 1:
                continue
            stands_for = self._source.break_at(block.position() + block.length() - 1)
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

    def _visible_lines(self, rect: QRect):
        """(block, QTextLine, the layout's origin in viewport coordinates) of each laid-out line
        that meets `rect`."""
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

    def _pieces(self, rect: QRect) -> list[Piece]:
        """What to paint in `rect`: one piece per token (per bidi run of it) on each visible line."""
        if self._result is None:
            return []
        pieces: list[Piece] = []
        for block, line, origin in self._visible_lines(rect):
            base = block.position()
            lo = base + line.textStart()
            hi = lo + line.textLength()
            text = self._line_text(block, lo, hi)
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

    def _line_text(self, block, lo: int, hi: int) -> str:
        """The editor's text in UTF-16 range [lo, hi) of `block`."""
        if block.length() < LONG_BLOCK:
            text = block.text()
            if len(text) == block.length() - 1:  # no astral character: code points are units
                return text[lo - block.position():hi - block.position()]
        cursor = QTextCursor(self.document())
        cursor.setPosition(lo)
        cursor.setPosition(hi, QTextCursor.MoveMode.KeepAnchor)
        return cursor.selectedText()

    def _ranges(self, lo: int, hi: int, text: str) -> list[tuple[int, int, int, int, int | None]]:
        """(start, end, colour index, flags, cut) of the tokens in UTF-16 range [lo, hi) of one
        line, clipped to it, with boundaries inside a grapheme cluster moved to its end (`cut`:
        where the token really ended, or None).

        Between an edit and its result, the previous result's tokens moved through the edits.
        """
        result = self._result
        if result is None or hi <= lo:
            return []
        edits = [e for _, e in self._edits]
        old_lo, old_hi = lo, hi  # the same range in the result's text
        for e in reversed(edits):
            old_lo, old_hi = e.back(old_lo), e.back(old_hi)
        starts, ends = result.starts16, result.ends16
        colours, flags = result.colours, result.flags
        ranges = []
        near = result.range16(old_lo - 1 if edits else old_lo, old_hi + 1 if edits else old_hi)
        i, j = near.start, near.stop
        for s, t, colour, flag in zip(starts[i:j].tolist(), ends[i:j].tolist(), colours[i:j].tolist(),
                                      flags[i:j].tolist()):
            for e in edits:
                s, t = e.start(s), e.end(t)
            s, t = max(s, lo), min(t, hi)
            if t > s:
                ranges.append((s, t, colour, flag))
        dropped = result.dropped16
        if dropped is not None:  # text the split pattern left out: a piece of its own, no colour
            k0 = int(np.searchsorted(dropped[:, 1], old_lo, side="right"))
            k1 = int(np.searchsorted(dropped[:, 0], old_hi, side="left"))
            for s, t in dropped[k0:k1].tolist():
                for e in edits:
                    s, t = e.start(s), e.end(t)
                s, t = max(s, lo), min(t, hi)
                if t > s:
                    ranges.append((s, t, 0, DROPPED))
        return self._snap_to_clusters(lo, text, ranges)

    def _snap_to_clusters(self, lo: int, text: str, ranges: list) -> list:
        """Move token boundaries that fall inside a grapheme cluster to the cluster's end.

        Such a cluster takes the colour of the token it starts in and is marked (a dotted
        underline, and a thin tick where Qt places the real boundary); the tooltip and the
        token-id view still show every token. The text itself is never split: shaping does not
        depend on tokens.
        """
        if text.isascii():
            return [(s, t, c, f, None) for s, t, c, f in ranges]
        bounds = [lo + b for b in cluster_bounds16(text)]
        snapped = []
        for s, t, colour, flags in ranges:
            k = bisect.bisect_left(bounds, s)
            s2 = bounds[k] if k < len(bounds) else s
            k = bisect.bisect_left(bounds, t)
            t2 = bounds[k] if k < len(bounds) else t
            if t2 > s2:
                snapped.append((s2, t2, colour, flags | CLUSTER_SPLIT if t2 != t else flags,
                                t if t2 != t else None))
        return snapped

    def drawn_tokens(self) -> list[tuple[int, int, int, int]]:
        """(start, end, colour index, flags) of every token range painted on the visible lines,
        in UTF-16 positions (one per line a token covers): what the user sees, for tests."""
        out = []
        for block, line, _ in self._visible_lines(self.viewport().rect()):
            lo = block.position() + line.textStart()
            hi = lo + line.textLength()
            out += [(s, t, c, f) for s, t, c, f, _ in self._ranges(lo, hi, self._line_text(block, lo, hi))]
        return out


    # --- drops ----------------------------------------------------------------------------

    def createMimeDataFromSelection(self):
        """Copy or drag the selection without the soft breaks in it (they are not in the text):
        Qt's own mime data, as plain text only.

        subtle: Qt's mime data makes its formats from the selection when first asked (a setText
        before that is overwritten), so it is asked once first. A QMimeData made here instead
        is deleted by both Qt and PySide: the process crashed at exit."""
        cursor = self.textCursor()
        start, end = cursor.selectionStart(), cursor.selectionEnd()
        mime = super().createMimeDataFromSelection()
        soft = [p - start for p, s in zip(self._source.pos16.tolist(), self._source.src) if not s and start <= p < end]
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
        stands_for = self._source.break_at  # "" for a soft break
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
        longer than LONG_LINE goes in as pieces (`_paste_long_line`).

        subtle: Qt keeps a lone surrogate that another program (or Python) put in a QString, but
        PySide drops it on every way back to Python (`text()`, `selectedText()`, `toRawText()`),
        so the worker's copy of the text would miss a unit that Qt counts, for ever. The repair
        joins the paste's undo step (one undo removes both), and the next request sends the whole
        text, since the paste's own change was read without the unit.
        subtle: no edit block may be open around Qt's own insert: with PySide6 6.11 a paste inside
        `beginEditBlock` segfaults in QtGui after a few hundred to a few thousand pastes (seen in
        the soak; a bare QPlainTextEdit subclass does the same).
        """
        text = source.text() if source.hasText() else ""
        if longest_line(text, LONG_LINE + 1) and not any(ch in text for ch in "\r\u2029\ufdd0\ufdd1"):
            cursor = self.textCursor()
            # the editor whose SourceMap this view follows pastes it (a compare pane's is the window's)
            getattr(self._source, "editor", self)._paste_long_line(text, cursor)
            self.setTextCursor(cursor)
            return
        start = self.textCursor().selectionStart()
        super().insertFromMimeData(source)
        end = self.textCursor().position()
        if end - start != utf16_len(source.text()):  # units Python cannot see
            self._outbox = None
            self._replace_lone_surrogates(start, end)

    def _paste_long_line(self, text: str, cursor: QTextCursor) -> None:
        """Paste a text with a line longer than LONG_LINE as pieces at `cursor` (on this editor's
        document), as a file's is loaded: the soft breaks between them stand for nothing
        (`positions.SourceMap.follow`'s `soft`), and lines wrap anywhere."""
        cuts = soft_breaks(text)
        shown = "\n".join(text[a:b] for a, b in zip([0] + cuts, cuts + [len(text)]))
        start = cursor.selectionStart()
        self._soft_paste = (start + to_utf16(text, np.array(cuts, dtype=np.int64)) + np.arange(len(cuts))).tolist()
        self._wrap_anywhere(True)
        try:
            cursor.insertText(shown)
        finally:
            self._soft_paste = []

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

    @property
    def tokens_current(self) -> bool:
        """Whether the tokens on screen are those of the text as it is now (no edit pending)."""
        return self._result is not None and not self._edits

    # --- hover and tooltips --------------------------------------------------------------

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
        self.state.set_hovered(-1 if index is None else index)

    def leaveEvent(self, event) -> None:
        super().leaveEvent(event)
        self.state.set_hovered(-1)

    def viewportEvent(self, event) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            index = self.token_at(event.pos())
            if index is None:
                QToolTip.hideText()
            else:
                QToolTip.showText(event.globalPos(), describe_token(self._result, index), self.viewport())
            return True
        return super().viewportEvent(event)

    def _select(self, selections: list) -> None:
        """Show these extra selections (hover, refusal) over the marked occurrences."""
        self.setExtraSelections(self._marks + selections)

    def _on_caret(self) -> None:
        result = self._result
        index = None if result is None or self._edits else result.index_at16(self.textCursor().position())
        self.state.set_caret(-1 if index is None else index)

    def _visible_range(self) -> tuple[int, int]:
        """UTF-16 positions at the viewport's top-left and bottom-right corners."""
        vp = self.viewport()
        return (self.cursorForPosition(QPoint(0, 0)).position(),
                self.cursorForPosition(QPoint(vp.width(), vp.height())).position())

    def _show_marks(self, *_) -> None:
        """Mark the occurrences of the state's marked token id on and near the screen (all of a
        book's would cost every paint a walk over them)."""
        result, token_id = self._result, self.state.marked
        self._marks = []
        if result is not None and token_id >= 0 and not self._edits:
            lo, hi = self._visible_range()
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

    def _on_hovered(self, index: int) -> None:
        result = self._result
        if result is None or index < 0 or index >= len(result) or self._edits:
            self._select([])
            return
        self._mark(int(result.starts16[index]), int(result.ends16[index]))

    def _on_hovered_span(self, start: int, end: int) -> None:
        """Mark a code-point range that starts and ends at token boundaries (a regex chunk)."""
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
