"""The byte / code-point inspector: what the selection (or the token under the caret) is made of.

From the top: a summary line (tokens touched, characters, bytes) with Copy Text / Copy JSON; the
byte strip, each UTF-8 byte in the colour of the token covering it, grouped under its character,
with a bar where one token ends and the next begins (so a token that ends inside a character
shows as a bar inside its group) and a tooltip per byte naming its token (double-click: the
editor goes to that token); the code points grouped by grapheme cluster (glyph, U+XXXX, name,
category, script, UTF-8, UTF-16, UTF-32, tokens); the normal forms that differ and the code
points called out by name (as many lines as they need, up to NOTES_LINES, fewer in a short dock:
the tree keeps its room); a box that decodes ids typed into it, or looks one up, in the current
tokenizer (the tokenizing server decodes them: `DecodeIds`; an answer for an older box or
tokenizer is dropped).

Hovering a token (in the editor, a compare pane or the chunk view) shows it instead, once the
mouse has rested on it for HOVER_MS; when the mouse leaves the tokens, or the selection or the text
changes, the selection is shown again (after LEAVE_MS, so crossing the gap between two tokens does
not flash the selection in between).

Everything shown comes from `core.selection.inspect_selection` on the result's window-side
Encoding (its first SHOWN_CODE_POINTS code points, with a note; the counts cover the whole
selection) and the server's `core.id_lookup.DecodedIds`; this module only draws. A new selection
shows on the next event-loop turn, a new text a moment later (after the editor's repaint), and
nothing is done while the panel is hidden.

It runs past 400 lines: the byte strip, the code-point tree and the decode box are drawn together
because each highlights the others.
"""

from __future__ import annotations

import html
import json
import time
from typing import Callable

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import (QApplication, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
                               QPushButton, QScrollArea, QSplitter, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from tokexplorer.core.encoding import TokenFlag
from tokexplorer.core.analysis.id_lookup import DecodedIds
from tokexplorer.core.analysis.selection import ByteCell, CodePointRow, SelectionInfo, TokenPiece, inspect_selection
from tokexplorer.core.analysis.unicode_info import script_of, token_label
from tokexplorer.server.protocol import DecodeIds
from tokexplorer.gui.widgets.colours import TokenPalette
from tokexplorer.gui.widgets.tooltips import answer_tooltip
from tokexplorer.gui.state import AppState
from tokexplorer.server.tokenized import Tokenized
from tokexplorer.gui.services.worker import run_job

COLUMNS = ["glyph", "code point", "name", "cat", "script", "UTF-8", "UTF-16", "UTF-32", "tokens"]
SHOWN_IDS = 32  # tokens listed under a decoded list of ids
SHOWN_CODE_POINTS = 100  # rows of a big selection shown (with a note); more is for Copy JSON's reader
# An update for a new text waits this long (ms), so a keystroke's repaint comes first; one for a
# new selection in the same text does not wait.
FOLLOW_EDITS_MS = 120
HOVER_MS = 250  # the mouse rests this long on a token before the inspector shows it
LEAVE_MS = 150  # the mouse is off the tokens this long before the selection shows again
NOTES_LINES = 3  # the notes take the lines their text needs, up to this many (then they scroll)
TREE_ROWS = 4  # rows of the code-point tree that the notes give way to in a short dock


def glyph(char: str, kinds: list[str]) -> str:
    """What to draw for a code point: itself, or its U+XXXX when it would draw nothing useful."""
    if kinds and any(k in kinds for k in ("control", "invisible", "whitespace", "surrogate", "noncharacter",
                                          "unassigned", "private use")) or char == " ":
        return "␣" if char == " " else f"U+{ord(char):04X}"
    if "combining" in kinds:
        return "◌" + char  # a mark needs something to sit on
    return char


def _escape(text: str) -> str:
    return html.escape(text, quote=False)


def flag_words(flags: int) -> str:
    return ", ".join(f.name.lower().replace("_", "-") for f in TokenFlag if f and flags & f)


class ByteStrip(QWidget):
    """The selection's UTF-8 bytes in rows, each on its token's colour, under its character."""

    token_activated = Signal(int)  # a byte was double-clicked: the index of its token
    GAP = 6  # pixels between characters

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("byte_strip")
        self.cells: list[ByteCell] = []
        self._token_labels: dict[int, str] = {}  # token index -> its label under its bytes
        self.colours: list[QColor | None] = []  # each byte's token colour (None: no token)
        self.tip: Callable[[int], str] = str  # byte index -> its tooltip, made when asked
        self._glyphs: dict[int, str] = {}  # character index -> its label above its bytes
        self._rects: list[QRect] = []
        self.setMouseTracking(True)

    def set_bytes(self, cells: list[ByteCell], colours: list[QColor | None], tip: Callable[[int], str],
                  glyphs: dict[int, str], token_labels: dict[int, str]) -> None:
        self.cells, self.colours, self.tip, self._glyphs = cells, colours, tip, glyphs
        self._token_labels = token_labels
        self._lay_out()
        self.update()

    def _metrics(self) -> tuple[int, int, int]:
        fm = QFontMetrics(self.font())
        # cell width; the height of a label line (the glyph above, the token below); of a cell
        return fm.horizontalAdvance("WW") + 8, fm.height() + 2, fm.height() + 6

    def row_height(self) -> int:
        """One row of the strip from the top of its glyphs to the bottom of its token labels."""
        _, lh, ch = self._metrics()
        return 2 * lh + ch + 4

    def label_font(self) -> QFont:
        """The token labels' font: a little smaller than the bytes'."""
        small = self.font()
        small.setPointSizeF(small.pointSizeF() * 0.85)
        return small

    def token_labels(self, lo: int, hi: int) -> list[tuple[QRect, str]]:
        """Each token's label under its bytes among cells lo..hi-1 (one per row it is on), with
        where it is drawn: its id, or only its index when the id does not fit."""
        fm = QFontMetrics(self.label_font())
        lh = self._metrics()[1]
        out = []
        for k, j in self._runs(lo, hi, "token"):
            span = self._rects[k].united(self._rects[j - 1])
            label = self._token_labels.get(self.cells[k].token, "")
            if fm.horizontalAdvance(label) > span.width():
                label = fm.elidedText(label.split(" ")[0], Qt.TextElideMode.ElideRight, span.width())
            out.append((QRect(span.left(), span.bottom() + 1, span.width(), lh), label))
        return out

    def _runs(self, lo: int, hi: int, key: str):
        """(k, j) of each run of cells lo..hi-1 with the same `key` attribute on the same row."""
        k = lo
        while k < hi:
            j = k + 1
            while j < hi and getattr(self.cells[j], key) == getattr(self.cells[k], key) and (
                    self._rects[j].top() == self._rects[k].top()):
                j += 1
            yield k, j
            k = j

    def changeEvent(self, event) -> None:
        super().changeEvent(event)  # asks the layout again: the size hints follow the font
        if event.type() == QEvent.Type.FontChange:
            self._lay_out()

    def _lay_out(self) -> None:
        """Cell rectangles, wrapping before a character whose bytes would not fit on the row."""
        cw, lh, ch = self._metrics()
        width = max(self.width(), cw * 4 + self.GAP)
        rects, x, y = [], 0, 0
        k = 0
        while k < len(self.cells):
            j = k
            while j < len(self.cells) and self.cells[j].char == self.cells[k].char:
                j += 1
            need = (j - k) * cw
            if x > 0 and x + need > width:
                x, y = 0, y + 2 * lh + ch + 6
            for _ in range(k, j):
                rects.append(QRect(x, y + lh, cw, ch))
                x += cw
            x += self.GAP
            k = j
        self._rects = rects
        height = (rects[-1].bottom() + lh + 4) if rects else 0
        self.setMinimumHeight(height)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._lay_out()

    def sizeHint(self) -> QSize:
        return QSize(self._metrics()[0] * 16, self.row_height())

    def paintEvent(self, event) -> None:
        # Only the rows in the exposed rectangle: a big selection has rows far below the view.
        clip = event.rect()
        lo, lh = 0, self._metrics()[1]
        while lo < len(self._rects) and self._rects[lo].bottom() + lh < clip.top():
            lo += 1
        hi = lo
        while hi < len(self._rects) and self._rects[hi].top() - lh <= clip.bottom():
            hi += 1
        self._paint(lo, hi)

    def _paint(self, lo: int, hi: int) -> None:
        """Paint cells lo..hi-1 with their character and token labels."""
        painter = QPainter(self)
        pal = self.palette()
        fm = QFontMetrics(self.font())
        lh = self._metrics()[1]
        text_pen = QPen(pal.text().color())
        bar = QPen(pal.text().color())
        bar.setWidth(3)
        for k, j in self._runs(lo, hi, "char"):
            group = self._rects[k].united(self._rects[j - 1])
            painter.setPen(text_pen)
            label = fm.elidedText(self._glyphs.get(self.cells[k].char, ""), Qt.TextElideMode.ElideRight,
                                  group.width())
            painter.drawText(QRect(group.left(), group.top() - lh, group.width(), lh),
                             Qt.AlignmentFlag.AlignCenter, label)
        painter.setFont(self.label_font())
        for rect, label in self.token_labels(lo, hi):
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)
        painter.setFont(self.font())
        for i in range(lo, hi):
            cell, rect = self.cells[i], self._rects[i]
            colour = self.colours[i]
            painter.fillRect(rect.adjusted(0, 0, -1, 0), colour if colour is not None else pal.base())
            painter.setPen(QPen(pal.mid().color()))
            painter.drawRect(rect.adjusted(0, 0, -1, -1))
            painter.setPen(text_pen)
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, f"{cell.value:02X}")
            # A bar where a token ends and the next begins, inside a character or between two.
            nxt = self.cells[i + 1] if i + 1 < len(self.cells) else None
            if nxt is not None and nxt.token != cell.token:
                painter.setPen(bar)
                x = rect.right() + (1 if nxt.char == cell.char else self.GAP // 2 + 1)
                painter.drawLine(x, rect.top() - 2, x, rect.bottom() + 2)
        painter.end()

    def cell_rect(self, i: int) -> QRect:
        """Where byte i's cell is drawn, in the strip's coordinates."""
        return QRect(self._rects[i])

    def byte_at(self, point: QPoint) -> int | None:
        for i, rect in enumerate(self._rects):
            if rect.contains(point):
                return i
        return None

    def mouseDoubleClickEvent(self, event) -> None:
        i = self.byte_at(event.position().toPoint())
        if i is not None and self.cells[i].token >= 0:
            self.token_activated.emit(self.cells[i].token)

    def event(self, event) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            i = self.byte_at(event.pos())
            return answer_tooltip(event, None if i is None else self.tip(i), self)
        return super().event(event)


class StripArea(QScrollArea):
    """The byte strip's scroll area, never lower than one row of the strip, whatever the font.

    subtle: sizes given to the splitter once, when the panel is made, do not follow the font, and
    the splitter shares a short dock out between its parts: at a 13.5 pt font a row needs 86 px
    and got 58, and at the default font it had 1 px to spare. A minimum size hint made from the
    strip's font metrics is what the splitter keeps (a font change asks for it again).
    """

    def minimumSizeHint(self) -> QSize:
        strip = self.widget()
        return QSize(super().minimumSizeHint().width(), strip.row_height() + 2 * self.frameWidth())

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.minimumSizeHint().height())


class InspectorPanel(QWidget):
    """The inspector dock's widget; see the module docstring."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.setObjectName("inspector")
        self.info: SelectionInfo | None = None
        self._shown: tuple | None = None  # (result, selection, hover) on screen
        self.hover: tuple[int, int, str] | None = None  # (start, end, what) shown instead of the selection
        self._hover_wanted: tuple[int, int, str] | None = None  # what the mouse is on now
        self._palette = TokenPalette(state.dark, state.token_colours)
        self.refreshed_at = 0.0  # perf_counter when the last refresh ended (`bench --gui`)
        self._decoding = 0  # generation of the latest DecodeIds asked; older answers are dropped
        self._decoded_for = 0  # generation whose answer the decode box shows

        self.summary = QLabel("")
        self.summary.setObjectName("inspector_summary")
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.copy_text_button = QPushButton("Copy Text")
        self.copy_text_button.setToolTip("Copy what the inspector shows as a plain-text table")
        self.copy_text_button.clicked.connect(self.copy_text)
        self.copy_json_button = QPushButton("Copy JSON")
        self.copy_json_button.setToolTip("Copy what the inspector shows as JSON")
        self.copy_json_button.clicked.connect(self.copy_json)
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.copy_text_button)
        top.addWidget(self.copy_json_button)

        self.strip = ByteStrip()
        self.strip.token_activated.connect(state.reveal_token.emit)  # the editor goes to it
        self.strip_area = strip_area = StripArea()
        strip_area.setWidgetResizable(True)
        strip_area.setWidget(self.strip)
        strip_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        self.tree = QTreeWidget()
        self.tree.setObjectName("code_points")
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        header = self.tree.header()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        digits = self.fontMetrics().horizontalAdvance("code point ")
        for col, width in enumerate((self.fontMetrics().horizontalAdvance("U+1F44BW") + 30, digits + 12, 230,
                                     40, 80, 110, 90, 80)):
            self.tree.setColumnWidth(col, width)

        self.notes = QLabel("")
        self.notes.setObjectName("inspector_notes")
        self.notes.setWordWrap(True)
        self.notes.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.notes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notes.setTextFormat(Qt.TextFormat.RichText)

        self.decode_box = QLineEdit()
        self.decode_box.setToolTip('Token ids to decode with the current tokenizer (15339, 1917), or one id to look up')
        self.decode_box.setObjectName("decode_box")
        self.decode_box.setClearButtonEnabled(True)
        self.decode_box.setPlaceholderText("Token ids to decode (15339, 1917), or one id to look up")
        self.decode_box.textChanged.connect(self.decode)
        self.decoded = QLabel("")
        self.decoded.setObjectName("decoded")
        self.decoded.setWordWrap(True)
        self.decoded.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.decoded.setTextFormat(Qt.TextFormat.RichText)
        self.decoded.hide()

        self.notes_area = notes_area = QScrollArea()  # hidden while there is nothing to note
        notes_area.setWidgetResizable(True)
        notes_area.setFrameShape(QScrollArea.Shape.NoFrame)
        notes_area.setWidget(self.notes)
        self.split = split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(strip_area)
        split.addWidget(self.tree)
        split.addWidget(notes_area)
        split.setStretchFactor(1, 1)
        split.setCollapsible(0, False)
        # A short dock shows less of them, not a tall window. subtle: a minimum of 0 means "use
        # the minimum size hint" (a tree's is ~100 px); 1 lets the splitter shrink them away.
        for part in (self.tree, notes_area):
            part.setMinimumHeight(1)
        # The tree takes the rest; the notes, what their text needs (`_fit_notes`).
        split.setSizes([strip_area.sizeHint().height(), 400, self.fontMetrics().lineSpacing()])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(split, 1)
        layout.addWidget(self.decode_box)
        layout.addWidget(self.decoded)

        self._timer = QTimer(self)  # one update however many signals (started with its delay)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.refresh)
        self._hover_timer = QTimer(self)  # the hover shows (or goes) once the mouse rests
        self._hover_timer.setSingleShot(True)
        self._hover_timer.timeout.connect(self._apply_hover)
        state.selection_changed.connect(self._drop_hover)  # the caret and the selection win
        state.tokenized.connect(self._drop_hover)  # the hovered token's index is of the old text
        state.hovered_changed.connect(self._on_hovered)
        state.hovered_span_changed.connect(self._on_hovered_span)
        state.selection_changed.connect(self._schedule)
        state.tokenized.connect(self._schedule)
        state.tokenized.connect(self._warm_up)
        state.tokenizer_changed.connect(lambda _: self.decode())
        state.dark_changed.connect(self._on_palette)
        state.token_colours_changed.connect(self._on_palette)

    # --- following the state -------------------------------------------------------------

    def _key(self) -> tuple:
        return (self.state.result, self.state.selection, self.hover)

    # --- hover ---------------------------------------------------------------------------

    def _on_hovered(self, index: int) -> None:
        """The window's editor (or the token list) hovers token `index` of the result, or none."""
        result = self.state.result
        if result is None or not 0 <= index < len(result):
            self._want_hover(None)
        else:
            encoding = result.encoding
            self._want_hover((int(encoding.starts[index]), int(encoding.ends[index]),
                              f"token #{index} under the mouse"))

    def _on_hovered_span(self, start: int, end: int) -> None:
        """A code-point range is hovered (a token of a compare pane, a chunk), or none (-1, -1)."""
        self._want_hover(None if start < 0 or end <= start else (start, end, "under the mouse"))

    def _want_hover(self, hover: tuple[int, int, str] | None) -> None:
        wanted = self._hover_wanted
        if hover is not None and wanted is not None and hover[:2] == wanted[:2]:
            return  # the same characters (the editor's token, announced again as a span)
        if hover == wanted:
            return
        self._hover_wanted = hover
        if hover is None and self.hover is None:
            self._hover_timer.stop()  # left before the hover showed: nothing changes
        elif self.isVisible():
            self._hover_timer.start(HOVER_MS if hover is not None else LEAVE_MS)

    def _apply_hover(self) -> None:
        if self._hover_wanted != self.hover:
            self.hover = self._hover_wanted
            self._timer.start(0)

    def _drop_hover(self, *_) -> None:
        self._hover_timer.stop()
        self.hover = self._hover_wanted = None

    @property
    def up_to_date(self) -> bool:
        return not self.isVisible() or self._shown == self._key()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._timer.start(0)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)  # the splitter has its new height already (the layout's turn came first)
        self._fit_notes()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit_notes()

    def _fit_notes(self) -> None:
        """Give the notes the lines their text needs (up to NOTES_LINES) and the tree the rest; in
        a short dock, or at a large font, the notes give way first (down to one line, scrolling)
        while the tree has fewer than TREE_ROWS rows."""
        area, split = self.notes_area, self.split
        if area.isHidden() or split.width() <= 0:
            return
        strip, tree, notes = split.sizes()
        room = tree + notes
        line = self.notes.fontMetrics().lineSpacing()
        want = min(self.notes.heightForWidth(split.width()), NOTES_LINES * line)
        row = max(self.tree.sizeHintForRow(0), self.tree.fontMetrics().height())
        keep = self.tree.header().sizeHint().height() + TREE_ROWS * row + 2 * self.tree.frameWidth()
        notes = max(min(want, room - keep), min(want, line))
        split.setSizes([strip, room - notes, notes])

    def _on_palette(self, *_) -> None:
        self._palette = TokenPalette(self.state.dark, self.state.token_colours)
        self._shown = None
        self._timer.start(0)

    def _warm_up(self, *_) -> None:
        """Compile the Unicode script regex in a worker once the first text is tokenized.

        subtle: compiling it takes about 0.1 s, which the first selection would otherwise wait for.
        """
        self.state.tokenized.disconnect(self._warm_up)
        run_job(lambda progress: script_of("a"), on_result=lambda _: None, on_error=lambda _: None)

    def _schedule(self, *_) -> None:
        # subtle: not `signal.connect(timer.start)`: a signal's arguments would reach
        # QTimer.start(msec) and become the interval.
        new_text = self._shown is not None and self._shown[0] is not self.state.result
        self._timer.start(FOLLOW_EDITS_MS if new_text else 0)

    def refresh(self) -> None:
        """Show the state's selection in the state's result (when visible and not already shown)."""
        if not self.isVisible() or self._shown == self._key():
            return
        result = self.state.result
        self._shown = self._key()
        if result is None or len(result.encoding.text) == 0:
            self.info = None
            self._clear("Not tokenized: the text spells a special token that the policy refuses (see above)."
                        if self.state.refusal is not None else
                        "Select text, or put the caret in a token, to see its bytes and code points.")
            return
        start, end, what = self.hover or (*self.state.selection, "")
        if end > len(result.encoding.text):  # a span of a text being edited: the selection's turn
            self.hover = self._hover_wanted = None
            self._shown = self._key()
            (start, end), what = self.state.selection, ""
        self.info = inspect_selection(result.encoding, start, end, tokenizer=result.tokenizer,
                                      limit=SHOWN_CODE_POINTS)
        self._show(self.info, result, what)
        self.refreshed_at = time.perf_counter()

    def _clear(self, message: str) -> None:
        self.summary.setText(message)
        self.strip.set_bytes([], [], str, {}, {})
        self.tree.clear()
        self.notes.setText("")
        self.notes_area.hide()

    # --- drawing -------------------------------------------------------------------------

    def _colour(self, result: Tokenized, token: int) -> QColor | None:
        if token < 0:
            return None
        return self._palette.background(int(result.colours[token]))  # the editor's colour

    def _show(self, info: SelectionInfo, result: Tokenized, what: str = "") -> None:
        c = info.counts
        what = what or (f"token #{info.caret_token} under the caret" if info.caret_token is not None
                        else "selection")
        self.summary.setText(
            f"<b>{_escape(info.tokenizer)}</b> · {what}: characters {c.start:,}–{c.end:,} · "
            f"<b>{c.tokens:,}</b> token{'s' if c.tokens != 1 else ''} touched ({c.whole:,} whole) · "
            f"{c.chars:,} code point{'s' if c.chars != 1 else ''} · {c.bytes:,} UTF-8 bytes"
            + (" · <span style='color:#c62828'>spells a special token that the “refuse” policy "
               "does not encode: shown as plain text</span>"
               if any(s < max(c.end, c.start + 1) and c.start < e for s, e in result.refused) else ""))
        pieces = {t.index: t for t in info.tokens}
        rows = {r.info.index: r for r in info.rows}
        groups: dict[int, tuple[int, int]] = {}  # character -> (its first byte, its byte count)
        for k, cell in enumerate(info.bytes):
            first, n = groups.get(cell.char, (k, 0))
            groups[cell.char] = (first, n + 1)

        def tip(k: int) -> str:
            cell = info.bytes[k]
            first, n = groups[cell.char]
            return self._byte_tip(cell, k - first, n, rows.get(cell.char), pieces.get(cell.token))

        self.strip.set_bytes(info.bytes, [self._colour(result, b.token) for b in info.bytes], tip,
                             {i: glyph(r.info.char, r.info.kinds) for i, r in rows.items()},
                             {t.index: f"#{t.index} {t.id}" for t in info.tokens})
        self._fill_tree(info, result)
        self.notes.setText(self._notes_html(info))
        self.notes_area.setVisible(bool(self.notes.text()))
        self._fit_notes()

    @staticmethod
    def _byte_tip(cell: ByteCell, k: int, n: int, row, piece: TokenPiece | None) -> str:
        """Byte k of the n of its character, and the token covering it."""
        lines = [f"byte {cell.value:02X}: byte {k + 1} of {n} of "
                 + (f"{row.info.codepoint} {row.info.name}" if row else f"character {cell.char}")]
        if piece is None:
            lines.append("no token covers it" if cell.token < 0 else f"token #{cell.token}")
        else:
            label = piece.label if piece.flags & TokenFlag.BYTE_FALLBACK else token_label(piece.bytes)
            flags = flag_words(piece.flags)
            lines.append(f"token #{piece.index}, id {piece.id}: “{label}” ({piece.bytes.hex(' ').upper()})"
                         + (f", {flags}" if flags else ""))
        return "\n".join(lines)

    def _fill_tree(self, info: SelectionInfo, result: Tokenized) -> None:
        """A cluster of one code point is one row; a longer one is a row with its code points."""
        tree = self.tree
        tree.setUpdatesEnabled(False)
        tree.clear()
        text = result.encoding.text
        by_cluster: dict[int, list[CodePointRow]] = {}
        for r in info.rows:
            by_cluster.setdefault(r.cluster, []).append(r)
        items = []
        for k, (a, b) in enumerate(info.clusters):
            rows = by_cluster.get(k, [])
            if len(rows) == 1:
                items.append(self._row_item(rows[0], result))
                continue
            n_bytes = len(text[a:b].encode("utf-8", "surrogatepass"))
            tokens = sorted({t for r in rows for t in r.tokens})
            parent = QTreeWidgetItem([text[a:b], "cluster", f"{b - a} code points, {n_bytes} bytes", "", "",
                                      "", "", "", " ".join(f"#{t}" for t in tokens)])
            font = parent.font(2)
            font.setItalic(True)
            parent.setFont(2, font)
            parent.addChildren([self._row_item(r, result) for r in rows])
            items.append(parent)
        tree.addTopLevelItems(items)
        tree.expandAll()
        tree.setUpdatesEnabled(True)

    def _row_item(self, r: CodePointRow, result: Tokenized) -> QTreeWidgetItem:
        i = r.info
        item = QTreeWidgetItem([glyph(i.char, i.kinds), i.codepoint, i.name, i.category, i.script, i.utf8,
                                i.utf16, i.utf32, " ".join(f"#{t}" for t in r.tokens)])
        if i.kinds:
            item.setToolTip(2, ", ".join(i.kinds))
        colour = self._colour(result, r.tokens[0]) if r.tokens else None
        if colour is not None:
            item.setBackground(0, colour)
        return item

    def _notes_html(self, info: SelectionInfo) -> str:
        parts = []
        if info.truncated:
            parts.append(f"<b>showing {info.shown:,} of {info.counts.chars:,} code points</b>")
        for form, text in info.normal_forms.items():
            cps = " ".join(f"U+{ord(ch):04X}" for ch in text[:24]) + (" …" if len(text) > 24 else "")
            parts.append(f"<b>{form}</b> differs: {_escape(text[:24])} ({cps})")
        parts += [_escape(n) for n in info.notes]
        return "<br>".join(parts)

    # --- copy ----------------------------------------------------------------------------

    def copy_text(self) -> None:
        if self.info is not None:
            QApplication.clipboard().setText(self.info.as_text())

    def copy_json(self) -> None:
        if self.info is not None:
            QApplication.clipboard().setText(json.dumps(self.info.as_dict(), ensure_ascii=False, indent=1))

    # --- decode box ----------------------------------------------------------------------

    def decode(self, *_) -> None:
        """Ask the server to decode the ids in the box with the current tokenizer; its answer (or
        what is wrong with the ids) shows when it comes, unless the box or tokenizer changed."""
        typed = self.decode_box.text().strip()
        self.decoded.setVisible(bool(typed))
        self._decoding += 1
        if not typed:
            self._decoded_for = self._decoding
            self.decoded.setText("")
            return
        gen, name = self._decoding, self.state.tokenizer
        if not self.state.catalog.is_loaded(name):
            self._decoded_error(f"{name} is still loading")  # until the answer replaces it

        def answered(answer: DecodedIds | str) -> None:  # the ids decoded, or what is wrong with them
            if gen != self._decoding:
                return  # the box or the tokenizer changed meanwhile
            self._decoded_for = gen
            if isinstance(answer, str):
                self._decoded_error(answer)
            else:
                self._show_decoded(name, answer)

        self.state.server.ask(DecodeIds(name, typed), answered, answered)

    @property
    def decode_pending(self) -> bool:
        """The box's ids were sent to be decoded and their answer is not shown yet."""
        return self._decoded_for != self._decoding

    def _show_decoded(self, name: str, d: DecodedIds) -> None:
        tokens = " · ".join(f"{i} “{_escape(token_label(b))}”" for i, b in zip(d.ids[:SHOWN_IDS], d.token_bytes))
        if len(d.ids) > SHOWN_IDS:
            tokens += f" · … ({len(d.ids):,} ids)"
        if len(d.ids) == 1:
            b = d.token_bytes[0]
            body = (f"id {d.ids[0]} in {_escape(name)}: “{_escape(token_label(b))}” · bytes "
                    f"{b.hex(' ').upper() or '(none)'} ({len(b)} byte{'s' if len(b) != 1 else ''})")
        else:
            body = f"text: “{_escape(d.text[:400])}”<br>tokens: {tokens}"
        if not d.valid_utf8:
            body += "<br><i>not valid UTF-8 on its own: the broken bytes decode as U+FFFD</i>"
        self.decoded.setStyleSheet("")
        self.decoded.setText(body)

    def _decoded_error(self, message: str) -> None:
        self.decoded.setStyleSheet("color: #c62828;")
        self.decoded.setText(_escape(message))
