"""The editor pane: a QPlainTextEdit that colours its text token by token.

How highlighting stays cheap on a book-length text:
- Formats are set per block (line) with `QTextLayout.setFormats`, only for blocks that are on
  screen, just before they are painted. Each block remembers (in its user state) the epoch it was
  formatted for. A new text, tokenizer or theme bumps the epoch, so only what is visible is redone
  now and the rest when it scrolls into view; an incremental result (`Tokenized.changed`) only
  invalidates the lines its changed range touches, since every other token is the same token
  with the same colour at the same place in its line. No QSyntaxHighlighter: it would run Python
  for every block of a newly loaded document.
- A line longer than LONG_LINE (minified JSON, a book without line breaks) is coloured only
  around the visible part, and again when scrolling leaves that window.
- Between an edit and the tokenization of the new text, the edited lines are coloured with the
  previous result's tokens moved through the edits (`positions.Edit`), so nothing flickers; the new
  result then replaces them. Colours are keyed on token ids, so unchanged tokens keep their colour.

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

from PySide6.QtCore import QEvent, QPoint, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QTextCursor, QTextLayout, QTextOption
from PySide6.QtWidgets import QApplication, QPlainTextEdit, QTextEdit, QToolTip

from ..core.encoding import TokenFlag
from .colours import CLUSTER_SPLIT, TokenFormats
from .positions import Edit, cluster_bounds16, utf16_len
from .state import AppState
from .tokenized import Tokenized, token_label
from .worker import TextDelta

LOAD_SLICE = 1 << 16  # characters inserted per event-loop turn when loading a big text
LONG_LINE = 4000  # UTF-16 units: a longer line is coloured only around what is on screen
LONG_LINE_MARGIN = 2000  # UTF-16 units coloured beyond the visible part of a long line
MAX_OUTBOX = 1 << 16  # inserted characters beyond which a snapshot sends the whole text
PROVISIONAL = -2  # block user state: coloured from an older result through pending edits


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


class TokenEditor(QPlainTextEdit):
    """Plain-text editor with token colours, whitespace markers, token tooltips and hover."""

    text_edited = Signal()  # the user changed the text (not emitted while a file loads)
    load_progress = Signal(int, int)  # characters inserted so far, total
    loaded = Signal()  # load_text finished

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.setObjectName("editor")
        self.setPlaceholderText("Type or paste text, or drop a file here, to see its tokens.")
        self._formats = TokenFormats(state.dark)
        self._result: Tokenized | None = None
        self._edits: list[tuple[int, Edit]] = []  # (edit number, edit) since the result's text
        self.edit_count = 0  # edits so far; a request records it as its `mark`
        self._epoch = 0  # a block whose userState differs is formatted before it is painted
        self._long_spans: dict[int, tuple[int, int]] = {}  # long line's number -> formatted span
        self._applying = False  # our own format changes also report a contents change
        self._loading = False
        self._load_id = 0
        self._outbox: list[tuple[int, int, str]] | None = None  # edits not yet sent; None: send all
        # The text given to load_text while nothing has edited it since: the snapshot sends it
        # instead of reading 50 MB back out of Qt in the UI thread.
        self._loaded_text: str | None = None
        # The mark of the result on screen at the last paint, and when that paint ended: how the
        # benchmark sees a keystroke's tokens reach the screen.
        self.painted_mark = -1
        self.painted_at = 0.0
        self.document().contentsChange.connect(self._on_contents_change)
        self.viewport().setMouseTracking(True)
        state.tokenized.connect(self._on_tokenized)
        state.hovered_changed.connect(self._on_hovered)
        state.reveal_token.connect(self.show_token)
        state.show_whitespace_changed.connect(self._on_show_whitespace)
        state.dark_changed.connect(self._on_dark)
        state.font_changed.connect(self._on_font)
        state.refusal_changed.connect(self._on_refusal)
        state.hovered_span_changed.connect(self._on_hovered_span)

    # --- text in and out -----------------------------------------------------------------

    def plain_text(self) -> str:
        """The text exactly as tokenized: Qt's block separators as "\\n", non-breaking spaces kept.

        subtle: toPlainText() would turn U+00A0 into a space and U+2028 into "\\n".
        """
        return self.document().toRawText().replace("\u2029", "\n")

    def load_text(self, text: str) -> None:
        """Replace the whole text, clearing the undo history; emits `loaded` when done.

        A big text goes in slices between events, so the window stays responsive and shows
        progress (a 50 MB text takes Qt about 10 s to take in, in one piece or many).
        """
        self._loading = True
        self._load_id += 1  # a load still running in slices stops at its next step
        load_id = self._load_id
        self._result, self._edits, self._outbox = None, [], None
        self._loaded_text = text
        self.setReadOnly(True)
        doc = self.document()
        doc.setUndoRedoEnabled(False)
        if len(text) <= LOAD_SLICE:
            self.setPlainText(text)
            self._finish_load()
            return
        self.clear()
        slices = iter(range(0, len(text), LOAD_SLICE))

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
            QTimer.singleShot(0, step)

        step()

    def _finish_load(self) -> None:
        doc = self.document()
        doc.setUndoRedoEnabled(True)
        doc.setModified(False)
        self.setReadOnly(False)
        self.moveCursor(QTextCursor.MoveOperation.Start)
        self._loading = False
        self._epoch += 1
        self.loaded.emit()

    def snapshot(self, full: bool = False) -> TextDelta:
        """What changed since the previous snapshot: the edits when they are plain ones, else the
        whole text; with how many edits it includes and the text's length in UTF-16 units."""
        outbox, self._outbox = self._outbox, []
        length16 = self.document().characterCount() - 1  # without the final block separator
        loaded, self._loaded_text = self._loaded_text, None
        if full or outbox is None or sum(len(t) for _, _, t in outbox) > MAX_OUTBOX:
            text = loaded if loaded is not None and not outbox else self.plain_text()
            return TextDelta(text, None, self.edit_count, length16)
        return TextDelta(None, outbox, self.edit_count, length16)

    # --- formatting ----------------------------------------------------------------------

    def _on_contents_change(self, position: int, removed: int, added: int) -> None:
        if self._applying or self._loading or (removed == 0 and added == 0):
            return
        self.edit_count += 1
        self._loaded_text = None
        self._edits.append((self.edit_count, Edit(position, removed, added)))
        self._long_spans.clear()  # keyed by block number, which an edit may shift
        doc = self.document()
        self._post_edit(position, removed, added)
        block, last = doc.findBlock(position), doc.findBlock(position + added)
        while block.isValid():
            block.setUserState(-1)
            if block == last:
                break
            block = block.next()
        self.text_edited.emit()

    def _post_edit(self, position: int, removed: int, added: int) -> None:
        """Queue the edit for the worker's copy of the text, or ask for the whole text.

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
        inserted = ""
        if added:
            cursor = QTextCursor(self.document())
            cursor.setPosition(position)
            cursor.setPosition(position + added, QTextCursor.MoveMode.KeepAnchor)
            inserted = cursor.selectedText().replace("\u2029", "\n")
        self._outbox.append((position, removed, inserted))

    def _on_tokenized(self, result: Tokenized | None) -> None:
        previous, self._result = self._result, result
        mark = result.mark if result is not None else self.edit_count
        self._edits = [(n, e) for n, e in self._edits if n > mark]
        if result is None or previous is None or result.changed is None:
            self._epoch += 1
        else:
            self._invalidate(result)
        self.setExtraSelections([])
        self.viewport().update()

    def _invalidate(self, result: Tokenized) -> None:
        """Mark the lines whose tokens changed (and those coloured provisionally) for formatting."""
        c0, c1 = result.changed
        starts, ends = result.encoding.starts, result.encoding.ends
        first = int(np.searchsorted(ends, c0, side="right"))
        last = int(np.searchsorted(starts, c1, side="left"))
        # In UTF-16, from the first changed token (or the edit point) to the last one.
        lo = int(result.starts16[first]) if first < len(starts) else int(result.ends16[-1]) if len(starts) else 0
        hi = int(result.ends16[last - 1]) if last > first else lo
        for _, e in self._edits:
            lo, hi = e.start(lo), e.end(hi)
        doc = self.document()
        block, end = doc.findBlock(max(lo - 1, 0)), doc.findBlock(hi)
        while block.isValid():
            block.setUserState(-1)
            if block == end:
                break
            block = block.next()

    def _on_dark(self, dark: bool) -> None:
        self._formats = TokenFormats(dark)
        self._epoch += 1
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

    def _on_show_whitespace(self, on: bool) -> None:
        option = self.document().defaultTextOption()
        flags = QTextOption.Flag.ShowTabsAndSpaces | QTextOption.Flag.ShowLineAndParagraphSeparators
        option.setFlags(option.flags() | flags if on else option.flags() & ~flags)
        self.document().setDefaultTextOption(option)

    def paintEvent(self, event) -> None:
        self.format_visible()
        super().paintEvent(event)
        self.painted_mark = self._result.mark if self._result is not None else -1
        self.painted_at = time.perf_counter()

    def format_visible(self) -> int:
        """Format the on-screen blocks that are not up to date; returns how many were formatted."""
        block = self.firstVisibleBlock()
        offset = self.contentOffset()
        height = self.viewport().height()
        doc = self.document()
        done = 0
        first_pos = last_end = None
        window = None  # the visible UTF-16 range, needed only for long lines
        self._applying = True
        try:
            while block.isValid():
                top = self.blockBoundingGeometry(block).translated(offset).top()
                if top > height:
                    break
                state = block.userState()
                span = None
                if block.length() > LONG_LINE:
                    if window is None:
                        window = self._visible_range()
                    span = self._long_spans.get(block.blockNumber())
                    if state == self._epoch and span is not None and span[0] <= window[0] and window[1] <= span[1]:
                        block = block.next()
                        continue
                    span = (window[0] - LONG_LINE_MARGIN, window[1] + LONG_LINE_MARGIN)
                    self._long_spans[block.blockNumber()] = span
                    state = None  # reformat the new window
                if state != self._epoch and not (state == PROVISIONAL and self._edits):
                    changed = self._format_block(block, span)
                    # Lines coloured from the previous result moved through pending edits are
                    # redone once the edits' own result arrives.
                    block.setUserState(PROVISIONAL if self._edits else self._epoch)
                    done += 1
                    if changed:
                        if first_pos is None:
                            first_pos = block.position()
                        last_end = block.position() + block.length()
                block = block.next()
            if first_pos is not None:
                # One relayout for all of them, as QSyntaxHighlighter does per block.
                doc.markContentsDirty(first_pos, last_end - first_pos)
        finally:
            self._applying = False
        return done

    def _visible_range(self) -> tuple[int, int]:
        """UTF-16 positions at the viewport's top-left and bottom-right corners."""
        vp = self.viewport()
        return (self.cursorForPosition(QPoint(0, 0)).position(),
                self.cursorForPosition(QPoint(vp.width(), vp.height())).position())

    def _format_block(self, block, span: tuple[int, int] | None = None) -> bool:
        """Set the block's formats from the result, within `span` (UTF-16) when given; returns
        whether they changed."""
        pos = block.position()
        end = pos + block.length() - 1  # without the block separator
        ranges = []
        result = self._result
        if result is not None and end > pos:
            edits = [e for _, e in self._edits]
            lo, hi = (pos, end) if span is None else (max(pos, span[0]), min(end, span[1]))
            old_lo, old_hi = lo, hi  # the same range in the result's text
            for e in reversed(edits):
                old_lo, old_hi = e.back(old_lo), e.back(old_hi)
            starts, ends = result.starts16, result.ends16
            colours, flags = result.colours, result.flags
            for i in result.range16(old_lo - 1 if edits else old_lo, old_hi + 1 if edits else old_hi):
                s, t = int(starts[i]), int(ends[i])
                for e in edits:
                    s, t = e.start(s), e.end(t)
                s, t = max(s, lo), min(t, hi)
                if t > s:
                    ranges.append((s, t, int(colours[i]), int(flags[i])))
            ranges = self._snap_to_clusters(block, lo, hi, ranges)
        fmt = self._formats.format
        formats = []
        for s, t, colour, flags in ranges:
            r = QTextLayout.FormatRange()
            r.start, r.length = s - pos, t - s
            r.format = fmt(colour, flags)
            formats.append(r)
        layout = block.layout()
        current = layout.formats()
        # Often the result confirms what the edit already showed: then the line is not laid out
        # again (setFormats alone relayouts it, which costs milliseconds on a long paragraph).
        if len(current) == len(formats) and all(
                a.start == b.start and a.length == b.length and a.format == b.format
                for a, b in zip(current, formats)):
            return False
        layout.setFormats(formats)
        return True

    def _snap_to_clusters(self, block, lo: int, hi: int, ranges: list) -> list:
        """Move token boundaries that fall inside a grapheme cluster to the cluster's end.

        subtle: Qt shapes each format range on its own, so a colour change between "क" and "्"
        (or inside an emoji ZWJ sequence) breaks the conjunct or the emoji apart on screen. Such a
        cluster takes the colour of the token it starts in and a dotted underline says that a token
        boundary lies inside it; the tooltip and the token-id view still show every token.
        """
        text = block.text()
        if text.isascii():
            return ranges
        base = block.position()
        if lo > base or hi < base + len(text):  # a long line: only the formatted window
            cursor = QTextCursor(self.document())
            cursor.setPosition(lo)
            cursor.setPosition(hi, QTextCursor.MoveMode.KeepAnchor)
            text, base = cursor.selectedText(), lo
        bounds = [base + b for b in cluster_bounds16(text)]
        snapped = []
        for s, t, colour, flags in ranges:
            k = bisect.bisect_left(bounds, s)
            s2 = bounds[k] if k < len(bounds) else s
            k = bisect.bisect_left(bounds, t)
            t2 = bounds[k] if k < len(bounds) else t
            if t2 > s2:
                snapped.append((s2, t2, colour, flags | CLUSTER_SPLIT if t2 != t else flags))
        return snapped

    # --- drops ----------------------------------------------------------------------------

    def canInsertFromMimeData(self, source) -> bool:
        # Dropped or pasted files are opened by the window, not inserted as their paths.
        if source.hasUrls() and all(u.isLocalFile() for u in source.urls()):
            return False
        return super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source) -> None:
        """Paste or drop, with any lone surrogate in the pasted text shown as U+FFFD.

        subtle: Qt keeps a lone surrogate that another program (or Python) put in a QString, but
        PySide drops it on every way back to Python (`text()`, `selectedText()`, `toRawText()`),
        so the worker's copy of the text would miss a unit that Qt counts, for ever. The
        replacement happens inside the paste's edit block: Qt reports one change, of the text as
        it ends up, and one undo removes the whole paste.
        """
        cursor = self.textCursor()
        cursor.beginEditBlock()
        try:
            start = cursor.selectionStart()
            super().insertFromMimeData(source)
            end = self.textCursor().position()
            if end - start != utf16_len(source.text()):  # units Python cannot see
                self._replace_lone_surrogates(start, end)
        finally:
            cursor.endEditBlock()

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
        for p in reversed(lone):  # from the end, so earlier positions stay put
            fix.setPosition(p)
            fix.setPosition(p + 1, QTextCursor.MoveMode.KeepAnchor)
            fix.insertText("\ufffd")

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

    def _on_hovered(self, index: int) -> None:
        result = self._result
        if result is None or index < 0 or index >= len(result) or self._edits:
            self.setExtraSelections([])
            return
        self._mark(int(result.starts16[index]), int(result.ends16[index]))

    def _on_hovered_span(self, start: int, end: int) -> None:
        """Mark a code-point range that starts and ends at token boundaries (a regex chunk)."""
        result = self._result
        if result is None or start < 0 or self._edits:
            self.setExtraSelections([])
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
        selection.format = self._formats.hover()
        self.setExtraSelections([selection])

    def _on_refusal(self, refusal) -> None:
        """Underline the special token that the policy refused, where the text spells it."""
        if refusal is None or self._edits:
            return
        text = self.plain_text()
        if text[refusal.position:refusal.position + len(refusal.token)] != refusal.token:
            return  # the text moved on since; the next answer will say where
        start = utf16_len(text[:refusal.position])
        selection = QTextEdit.ExtraSelection()
        cursor = QTextCursor(self.document())
        cursor.setPosition(start)
        cursor.setPosition(start + utf16_len(refusal.token), QTextCursor.MoveMode.KeepAnchor)
        selection.cursor = cursor
        selection.format = self._formats.refused()
        self.setExtraSelections([selection])

    def show_token(self, index: int) -> None:
        """Scroll to a token and put the cursor at its start."""
        result = self._result
        if result is None or not 0 <= index < len(result):
            return
        cursor = self.textCursor()
        cursor.setPosition(int(result.starts16[index]))
        self.setTextCursor(cursor)
        self.centerCursor()
