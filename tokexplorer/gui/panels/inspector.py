"""The byte / code-point inspector: what the selection (or the token under the caret) is made of.

From the top: a summary line (tokens touched, characters, bytes) with Copy Text / Copy JSON; the
byte strip, each UTF-8 byte in the colour of the token covering it, grouped under its character,
with a bar where one token ends and the next begins (so a token that ends inside a character
shows as a bar inside its group) and a tooltip per byte naming its token (double-click: the
editor goes to that token); the code points grouped by grapheme cluster (glyph, U+XXXX, name,
category, script, UTF-8, UTF-16, UTF-32, tokens); the normal forms that differ and the code
points called out by name (as many lines as they need, up to NOTES_LINES, fewer in a short dock:
the tree keeps its room; a dock too short for one row of the strip, Python's lists and a few rows
of the tree scrolls them as a whole); a box that decodes ids typed into it, or looks one up, or looks up
characters as Python's chr and ord do (`104`, `U+0068`, `h`, `'h'`: the rules are
`core.id_lookup`'s), in the current tokenizer (the tokenizing server answers: `DecodeIds`; an
answer for an older box or tokenizer is dropped).

Numbers are shown as Python prints them, decimal by default, or in hex (the switch at the top:
`base`, `set_base`, `base_changed`): the bytes of the strip, the UTF-8 / UTF-16 / UTF-32 columns,
the decode box's bytes. Under the summary, the selection's tokens and the lists that
`list(s.encode("utf-8"))`, `"utf-16"` and `"utf-32"` print, byte order mark included (computed
with Python's own codecs, so they are this machine's, as the student's Python prints them). For a
SentencePiece vocabulary the tokens are named as sentencepiece names them (`▁the`, `<0x0A>`, from
its `id_to_piece`, asked of the server: `PieceNamesOf`), with the app's rendering (`␣the`, `\n`)
one click away (the "▁ pieces" button).

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
from PySide6.QtWidgets import (QApplication, QComboBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
                               QPushButton, QScrollArea, QSplitter, QToolButton, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from tokexplorer.core.encoding import TokenFlag
from tokexplorer.core.analysis.id_lookup import CharacterLookup, DecodedIds
from tokexplorer.core.analysis.selection import ByteCell, CodePointRow, SelectionInfo, TokenPiece, inspect_selection
from tokexplorer.core.analysis.unicode_info import (BASES, BYTE_ORDER, bom_note, code_values, name_of, number, python_bytes,
                                                    script_of, token_label)
from tokexplorer.server.protocol import DecodeIds, PieceNamesOf
from tokexplorer.gui.widgets.colours import TokenPalette
from tokexplorer.gui.widgets.tooltips import answer_tooltip
from tokexplorer.gui.state import AppState
from tokexplorer.server.tokenized import Tokenized
from tokexplorer.gui.services.worker import run_job

COLUMNS = ["glyph", "code point", "name", "cat", "script", "UTF-8", "UTF-16", "UTF-32", "tokens"]
SHOWN_IDS = 32  # tokens listed under a decoded list of ids
SHOWN_NUMBERS = 40  # of a long list of bytes, the numbers shown (then how many there are)
SHOWN_TOKENS = 16  # tokens named in the line above the Python lists
SHOWN_CHARACTERS = 8  # characters of a look-up described one by one
SHOWN_CODE_POINTS = 100  # rows of a big selection shown (with a note); more is for Copy JSON's reader
# An update for a new text waits this long (ms), so a keystroke's repaint comes first; one for a
# new selection in the same text does not wait.
FOLLOW_EDITS_MS = 120
HOVER_MS = 250  # the mouse rests this long on a token before the inspector shows it
LEAVE_MS = 150  # the mouse is off the tokens this long before the selection shows again
NOTES_LINES = 3  # the notes take the lines their text needs, up to this many (then they scroll)
NUMBERS_LINES = 4  # so do the tokens and Python's lists, before the notes (they never give way)
TREE_ROWS = 4  # rows of the code-point tree that the notes give way to in a short dock
TREE_MIN_ROWS = 2  # rows of the tree kept however short the dock (then the parts scroll as a whole)


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
        self.base = "decimal"  # how the bytes are written: "decimal" or "hex"
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
        # cell width (three decimal digits fit); the height of a label line (the glyph above, the
        # token below); of a cell
        return max(fm.horizontalAdvance("WW"), fm.horizontalAdvance("888")) + 8, fm.height() + 2, fm.height() + 6

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
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, number(cell.value, self.base))
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


class PartsSplitter(QSplitter):
    """The inspector's splitter, saying when it has its new size (and shared it out)."""

    resized = Signal()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.resized.emit()


class InspectorPanel(QWidget):
    """The inspector dock's widget; see the module docstring."""

    base_changed = Signal(str)  # "decimal" or "hex": the user (or a view through set_base) switched

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
        self._decoded: DecodedIds | CharacterLookup | None = None  # the answer shown in the decode box
        self._decoded_name = ""  # ... and the tokenizer it was asked of
        self.base = "decimal"  # numbers as Python prints them; "hex" on the switch
        self.piece_names: dict[int, str] = {}  # token id -> sentencepiece's name, for the shown tokens
        self._naming = 0  # generation of the latest PieceNamesOf asked
        self._unnamed = ""  # a tokenizer the server said has no piece names (not asked again)

        self.summary = QLabel("")
        self.summary.setObjectName("inspector_summary")
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)  # a narrow dock (683 px at 200 % on a 1366 px screen) wraps it
        self.copy_text_button = QPushButton("Copy Text")
        self.copy_text_button.setToolTip("Copy what the inspector shows as a plain-text table")
        self.copy_text_button.clicked.connect(self.copy_text)
        self.copy_json_button = QPushButton("Copy JSON")
        self.copy_json_button.setToolTip("Copy what the inspector shows as JSON")
        self.copy_json_button.clicked.connect(self.copy_json)
        self.base_box = QComboBox()
        self.base_box.setObjectName("inspector_base")
        self.base_box.addItems(list(BASES))
        self.base_box.setToolTip("Bytes and code units in decimal, as Python prints them (list(b\"...\")), or in hex")
        self.base_box.currentTextChanged.connect(self.set_base)
        self.pieces_button = QToolButton()
        self.pieces_button.setObjectName("inspector_pieces")
        self.pieces_button.setText("▁ pieces")
        self.pieces_button.setCheckable(True)
        self.pieces_button.setChecked(True)
        self.pieces_button.setToolTip("Tokens named as sentencepiece names them (▁the, <0x0A>); off: as this app "
                                      "writes them (␣the, \\n)")
        self.pieces_button.toggled.connect(self._on_pieces_toggled)
        self.pieces_button.hide()  # until the server says the tokenizer names its pieces
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.pieces_button)
        top.addWidget(self.base_box)
        top.addWidget(self.copy_text_button)
        top.addWidget(self.copy_json_button)

        self.strip = ByteStrip()
        self.strip.token_activated.connect(state.reveal_token.emit)  # the editor goes to it
        self.strip_area = strip_area = StripArea()
        strip_area.setWidgetResizable(True)
        strip_area.setWidget(self.strip)
        strip_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        self.numbers = QLabel("")
        self.numbers.setObjectName("python_numbers")
        self.numbers.setWordWrap(True)
        self.numbers.setTextFormat(Qt.TextFormat.RichText)
        self.numbers.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.numbers.setToolTip(bom_note())

        self.tree = QTreeWidget()
        self.tree.setObjectName("code_points")
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(COLUMNS)
        self._name_columns()
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
        self.decode_box.setToolTip(
            "Token ids to decode with the current tokenizer (15339, 1917), or one id to look up (a bare number is "
            "always a token id; its code point is shown beside). Characters as chr and ord see them: U+0068, "
            "chr(104), 'h' or one character")
        self.decode_box.setObjectName("decode_box")
        self.decode_box.setClearButtonEnabled(True)
        self.decode_box.setPlaceholderText("Token ids (15339, 1917), or a character: U+0068, 'h'")
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
        self.numbers_area = numbers_area = QScrollArea()  # the lists Python prints, under the strip
        numbers_area.setWidgetResizable(True)
        numbers_area.setFrameShape(QScrollArea.Shape.NoFrame)
        numbers_area.setWidget(self.numbers)
        numbers_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.split = split = PartsSplitter(Qt.Orientation.Vertical)
        split.addWidget(strip_area)
        split.addWidget(numbers_area)
        split.addWidget(self.tree)
        split.addWidget(notes_area)
        split.setStretchFactor(2, 1)
        split.setChildrenCollapsible(False)
        # subtle: a minimum of 0 means "use the minimum size hint" (a tree's is ~100 px); each
        # part's minimum is set by `_fit_notes` from its font and its text.
        for part in (numbers_area, self.tree, notes_area):
            part.setMinimumHeight(1)
        # The tree takes the rest; the notes, what their text needs (`_fit_notes`).
        line = self.fontMetrics().lineSpacing()
        split.setSizes([strip_area.sizeHint().height(), NUMBERS_LINES * line, 400, line])
        split.resized.connect(self._fit_notes)
        # A dock shorter than the parts' minimums scrolls them as a whole: at 200 % a 1024 x 576
        # window leaves the dock room for the strip only, and the splitter squeezed the lists
        # Python prints to nothing. The summary and the decode box stay in view.
        self.body = body = QScrollArea()
        body.setObjectName("inspector_body")
        body.setWidgetResizable(True)
        body.setFrameShape(QScrollArea.Shape.NoFrame)
        body.setWidget(split)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(body, 1)
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
        state.tokenizer_changed.connect(self._forget_names)
        # A token picked in another view (the vocabulary, the glitch finder) is looked up here.
        state.token_chosen.connect(lambda token_id: self.decode_box.setText(str(token_id)))
        state.dark_changed.connect(self._on_palette)
        state.token_colours_changed.connect(self._on_palette)

    # --- numbers and names ---------------------------------------------------------------

    def set_base(self, base: str) -> None:
        """Write bytes and code units in `base` ("decimal", as Python prints them, or "hex")."""
        if base not in BASES or base == self.base:
            return
        self.base = self.strip.base = base
        self.base_box.blockSignals(True)
        self.base_box.setCurrentText(base)
        self.base_box.blockSignals(False)
        self._name_columns()
        self._redraw()
        self.base_changed.emit(base)

    def _name_columns(self) -> None:
        self.tree.headerItem().setText(COLUMNS.index("UTF-32"), "UTF-32 (ord)" if self.base == "decimal" else "UTF-32")

    def _redraw(self) -> None:
        """Draw what is shown again (a switch changed how it is written, not what it is)."""
        self._shown = None
        self.refresh()
        if self._decoded is not None and not self.decode_pending:
            self._show_decoded(self._decoded_name, self._decoded)

    def _on_pieces_toggled(self, _on: bool) -> None:
        self._redraw()

    def _forget_names(self, *_) -> None:
        self.piece_names, self._unnamed = {}, ""
        self.pieces_button.hide()

    def _ask_names(self, name: str, ids: list[int]) -> None:
        """Ask the server for sentencepiece's names of these ids; draw again when they come."""
        missing = tuple(sorted({i for i in ids if i not in self.piece_names}))
        if not missing or name == self._unnamed:
            return
        self._naming += 1
        gen = self._naming

        def named(names) -> None:
            if gen != self._naming or name != self.state.tokenizer:
                return  # a newer selection or tokenizer asked since
            if names is None:  # not a SentencePiece vocabulary
                self._unnamed = name
                self.pieces_button.hide()
                return
            self.piece_names.update(zip(missing, names))
            self.pieces_button.show()
            self._redraw()

        self.state.server.ask(PieceNamesOf(name, missing), named, lambda _message: None)

    def token_text(self, token_id: int, data: bytes, byte_fallback: bool = False) -> str:
        """How a token is written here: sentencepiece's name for it when those are shown, else
        the app's rendering (a byte-fallback piece of a vocabulary without piece names as <0xNN>)."""
        if token_id in self.piece_names:
            return self.piece_names[token_id] if self.pieces_button.isChecked() else token_label(data)
        if byte_fallback and len(data) == 1:
            return f"<0x{data[0]:02X}>"
        return token_label(data)

    def _numbers(self, values: list[int] | None, width: int = 2) -> str:
        """A list of byte values as Python's list() prints it (decimal) or as hex bytes, elided."""
        if values is None:
            return "(Python cannot encode it: a lone surrogate)"
        shown = values[:SHOWN_NUMBERS]
        more = f", … ({len(values):,} bytes)" if len(values) > SHOWN_NUMBERS else ""
        if self.base == "decimal":
            return "[" + ", ".join(map(str, shown)) + more + "]"
        return " ".join(number(v, "hex", width) for v in shown) + more.replace(",", "", 1)

    def _fill_numbers(self, info: SelectionInfo, result: Tokenized) -> None:
        """The tokens (by name) and the lists Python prints for the shown text."""
        start = info.counts.start
        text = result.encoding.text[start:start + info.shown]
        tokens = " · ".join(
            f"{t.id} “{_escape(self.token_text(t.id, t.bytes, bool(t.flags & TokenFlag.BYTE_FALLBACK)))}”"
            for t in info.tokens[:SHOWN_TOKENS]) + (" · …" if len(info.tokens) > SHOWN_TOKENS else "")
        lines = [f"<code>list(s.encode(\"{codec}\"))</code> {self._numbers(values)}"
                 + (f" <span style='color:gray'>(a byte order mark first, then {BYTE_ORDER}-endian: this "
                    "machine's order)</span>" if codec == "utf-16" else "")
                 for codec, values in python_bytes(text).items()]
        if tokens:
            lines.append(f"tokens: {tokens}")
        self.numbers.setText("<br>".join(lines))
        self.numbers_area.show()

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

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit_notes()

    def _fit_notes(self) -> None:
        """Give the tokens and Python's lists the lines their text needs (up to NUMBERS_LINES,
        then they scroll), the notes theirs (up to NOTES_LINES), and the tree the rest; in a short
        dock, or at a large font, the notes give way first (down to one line, scrolling) while the
        tree has fewer than TREE_ROWS rows. Those lines (one of the notes), the tree's header with
        TREE_MIN_ROWS rows and one row of the strip are the parts' minimums: a dock shorter than
        them all scrolls the parts as a whole (`body`)."""
        split = self.split
        if split.width() <= 0:
            return
        line = self.notes.fontMetrics().lineSpacing()
        row = max(self.tree.sizeHintForRow(0), self.tree.fontMetrics().height())
        header = self.tree.header().sizeHint().height() + 2 * self.tree.frameWidth()
        tree_least = header + TREE_MIN_ROWS * row
        self.tree.setMinimumHeight(tree_least)
        numbers = 0
        if not self.numbers_area.isHidden():
            numbers = min(self.numbers.heightForWidth(split.width()), NUMBERS_LINES * line)
            self.numbers_area.setMinimumHeight(max(numbers, 1))
        notes_want = 0
        if not self.notes_area.isHidden():
            notes_want = min(self.notes.heightForWidth(split.width()), NOTES_LINES * line)
            self.notes_area.setMinimumHeight(max(min(notes_want, line), 1))
        if split.height() < split.minimumSizeHint().height():
            # subtle: the body would make the splitter as tall as the new minimums a few turns
            # of the event loop later; asked now, the sizes below are shared out of that height.
            # (Its resize calls this again, which finds the height enough.)
            QApplication.sendEvent(self.body, QEvent(QEvent.Type.LayoutRequest))
        strip, *parts = split.sizes()
        room = sum(parts)  # the lists', the tree's and the notes'
        keep = header + TREE_ROWS * row
        notes = max(min(notes_want, room - keep - numbers), min(notes_want, line))
        split.setSizes([strip, numbers, max(room - notes - numbers, tree_least), notes])

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
        self.numbers.setText("")
        self.numbers_area.hide()

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
        self._fill_numbers(info, result)
        self._ask_names(info.tokenizer or self.state.tokenizer, [t.id for t in info.tokens])
        self.notes.setText(self._notes_html(info))
        self.notes_area.setVisible(bool(self.notes.text()))
        self._fit_notes()

    def _byte_tip(self, cell: ByteCell, k: int, n: int, row, piece: TokenPiece | None) -> str:
        """Byte k of the n of its character, and the token covering it."""
        lines = [f"byte {number(cell.value, self.base)}: byte {k + 1} of {n} of "
                 + (f"{row.info.codepoint} {row.info.name}" if row else f"character {cell.char}")]
        if piece is None:
            lines.append("no token covers it" if cell.token < 0 else f"token #{cell.token}")
        else:
            label = self.token_text(piece.id, piece.bytes, bool(piece.flags & TokenFlag.BYTE_FALLBACK))
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
        utf8, utf16, utf32 = i.utf8, i.utf16, i.utf32
        if self.base == "decimal" and not 0xD800 <= ord(i.char) <= 0xDFFF:
            values = code_values(i.char)
            utf8, utf16, utf32 = (" ".join(map(str, values[key])) for key in ("utf8", "utf16", "utf32"))
        item = QTreeWidgetItem([glyph(i.char, i.kinds), i.codepoint, i.name, i.category, i.script, utf8,
                                utf16, utf32, " ".join(f"#{t}" for t in r.tokens)])
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
            self._decoded = None
            self.decoded.setText("")
            return
        gen, name = self._decoding, self.state.tokenizer
        if not self.state.catalog.is_loaded(name):
            self._decoded_error(f"{name} is still loading")  # until the answer replaces it

        def answered(answer: DecodedIds | CharacterLookup | str) -> None:  # the answer, or what is wrong
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

    def _decoded_tokens(self, ids: list[int], token_bytes: list[bytes], pieces: list[str] | None) -> str:
        """Ids with their tokens, named as sentencepiece names them when those are shown."""
        names = pieces if pieces is not None and self.pieces_button.isChecked() else None
        shown = " · ".join(f"{i} “{_escape(names[k] if names else token_label(b))}”"
                           for k, (i, b) in enumerate(zip(ids[:SHOWN_IDS], token_bytes)))
        return shown + (f" · … ({len(ids):,} ids)" if len(ids) > SHOWN_IDS else "")

    def _show_decoded(self, name: str, d: DecodedIds | CharacterLookup) -> None:
        self._decoded, self._decoded_name = d, name
        if d.pieces is not None:
            self.pieces_button.show()
        if isinstance(d, CharacterLookup):
            self._show_characters(name, d)
            return
        if len(d.ids) == 1:
            b = d.token_bytes[0]
            piece = d.pieces[0] if d.pieces is not None and self.pieces_button.isChecked() else token_label(b)
            body = (f"id {d.ids[0]} in {_escape(name)}: “{_escape(piece)}” · bytes "
                    f"{self._numbers(list(b)) if b else '(none)'} ({len(b)} byte{'s' if len(b) != 1 else ''})")
            char = d.code_point
            if char is not None:
                body += (f"<br><span style='color:gray'>as a code point instead: chr({d.ids[0]}) = "
                         f"{_escape(repr(char))} (U+{ord(char):04X} {_escape(name_of(char))})</span>")
        else:
            body = f"text: “{_escape(d.text[:400])}”<br>tokens: {self._decoded_tokens(d.ids, d.token_bytes, d.pieces)}"
        if not d.valid_utf8:
            body += "<br><i>not valid UTF-8 on its own: the broken bytes decode as U+FFFD</i>"
        self.decoded.setStyleSheet("")
        self.decoded.setText(body)

    def _show_characters(self, name: str, d: CharacterLookup) -> None:
        """Each character as chr and ord give it, its UTF-8 bytes, then the tokenizer's tokens."""
        lines = []
        for char in d.chars[:SHOWN_CHARACTERS]:
            cp = ord(char)
            ord_text = f"ord({_escape(repr(char))}) = {cp}" if self.base == "decimal" else \
                f"hex(ord({_escape(repr(char))})) = {hex(cp)}"
            utf8 = self._numbers(code_values(char)["utf8"]) if not 0xD800 <= cp <= 0xDFFF else "(none)"
            lines.append(f"{ord_text} · chr({cp}) = {_escape(repr(char))} · U+{cp:04X} {_escape(name_of(char))}"
                         f" · UTF-8 {utf8}")
        if len(d.chars) > SHOWN_CHARACTERS:
            lines.append(f"… ({len(d.chars):,} characters)")
        lines.append(f"in {_escape(name)}: {self._decoded_tokens(d.ids, d.token_bytes, d.pieces) or '(no tokens)'}")
        self.decoded.setStyleSheet("")
        self.decoded.setText("<br>".join(lines))

    def _decoded_error(self, message: str) -> None:
        self._decoded = None
        self.decoded.setStyleSheet("color: #c62828;")
        self.decoded.setText(_escape(message))
