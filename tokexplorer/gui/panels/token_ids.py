"""The token-id view: one row per token (index, id, text, bytes), linked to the editor through the
state's hovered token and caret: hover a row and the token lights up in the text, hover the text
and the row is shown; otherwise the rows of the tokens the selection touches are selected, or
without a selection the token at the caret's (`state.caret`, by `core.analysis.caret`'s rule, the
one the merge tree and the inspector follow). A model over the
result's arrays, so a 300,000-token book costs nothing until scrolled.

The view follows the text a moment behind the editor (and not at all while hidden): refreshing its
visible rows costs a few milliseconds that a keystroke's repaint should not wait for.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, Qt, QTimer
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from tokexplorer.core.analysis.caret import tokens_in_selection
from tokexplorer.core.analysis.unicode_info import token_label
from tokexplorer.gui.widgets.colours import TokenPalette
from tokexplorer.gui.widgets.table_model import (ALIGNMENT, BACKGROUND, DISPLAY, RIGHT, TOOLTIP, TableModel,
                                                 fixed_rows)
from tokexplorer.gui.state import AppState
from tokexplorer.server.tokenized import Tokenized


SELECTED_ROWS = 1000  # a selection touching more tokens selects only the first one's row


class TokenTableModel(TableModel):
    """The state's result, a row per token: index, id, text (on the token's colour), bytes."""

    HEADERS = ["#", "id", "text", "bytes"]
    ROLES = frozenset({DISPLAY, TOOLTIP, ALIGNMENT, BACKGROUND})

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.result: Tokenized | None = None
        self._palette = TokenPalette(state.dark, state.token_colours)
        state.dark_changed.connect(self._on_palette)
        state.token_colours_changed.connect(self._on_palette)

    def show_current(self) -> None:
        """Show the state's current result."""
        if self.result is not self.state.result:
            with self.resetting():
                self.result = self.state.result

    def _on_palette(self, *_) -> None:
        self._palette = TokenPalette(self.state.dark, self.state.token_colours)
        self.cells_changed()

    def row_count(self) -> int:
        return 0 if self.result is None else len(self.result)

    def cell(self, row: int, col: int, role: int):
        result = self.result
        if result is None:
            return None
        if role == DISPLAY:
            if col == 0:
                return row
            if col == 1:
                return result.encoding.ids[row]
            data = result.encoding.token_bytes[row]
            if col == 2:
                return token_label(data)
            return data.hex(" ")
        if role == TOOLTIP and col == 3:  # a long token's bytes are elided
            return result.encoding.token_bytes[row].hex(" ")
        if role == BACKGROUND and col == 2:
            return self._palette.background(int(result.colours[row]))
        if role == ALIGNMENT and col < 2:
            return RIGHT
        return None


class TokenTable(QTableView):
    """The view; hovering a row sets the state's hovered token, a click reveals it in the editor."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.setObjectName("token_ids")
        self.setModel(TokenTableModel(state, self))
        self.setMouseTracking(True)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        fixed_rows(self, self.fontMetrics().height() + 4)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)  # the bytes take what is left, elided if need be
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._fit_numbers()
        self.model().modelReset.connect(self._fit_numbers)
        self.setColumnWidth(2, self.fontMetrics().horizontalAdvance("␣tokenizer") + 12)
        self.entered.connect(self._on_entered)
        self.clicked.connect(lambda index: self._current() and state.reveal_token.emit(index.row()))
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(120)
        self._timer.timeout.connect(self.model().show_current)
        self.model().modelReset.connect(lambda: self._on_hovered(state.hovered))
        state.tokenized.connect(self._on_tokenized)
        state.hovered_changed.connect(self._on_hovered)
        state.caret_changed.connect(lambda _: self._on_hovered(state.hovered))
        state.selection_changed.connect(lambda *_: self._on_hovered(state.hovered))

    def _current(self) -> bool:
        """Whether the rows are those of the state's result (they lag it by the timer)."""
        return self.model().result is self.state.result

    @property
    def up_to_date(self) -> bool:
        return self._current() or not self.isVisible()

    def _fit_numbers(self) -> None:
        """The # and id columns as wide as their largest numbers (at least 3 and 5 digits), so the
        bytes keep the room that is left."""
        fm = self.fontMetrics()
        result = self.model().result
        rows = len(result) if result is not None else 0
        # subtle: the vocabulary's size (as the server described the tokenizer), not the ids'
        # maximum: an edit's result would scan a book's ids in the UI thread just to measure it.
        info = self.state.catalog.info(result.tokenizer) if rows else None
        if rows and info is None and self.state.server is not None:  # not described yet: fit again once it is
            self.state.describe(result.tokenizer, lambda _: self._fit_numbers())
        top_id = info.n_vocab - 1 if info is not None else 0
        self.setColumnWidth(0, fm.horizontalAdvance("8" * max(3, len(str(rows - 1)))) + 12)
        self.setColumnWidth(1, fm.horizontalAdvance("8" * max(5, len(str(top_id)))) + 12)

    def _on_tokenized(self, result: Tokenized | None) -> None:
        if result is None:
            self.model().show_current()
        elif self.isVisible():
            self._timer.start()  # when hidden, showEvent catches up

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.model().show_current()

    def _on_entered(self, index) -> None:
        if self._current():
            self.state.set_hovered(index.row())

    def _on_hovered(self, row: int) -> None:
        """Show the hovered token's row, or when none is hovered the selection's rows (the first
        current), or without a selection the caret's."""
        rows = range(row, row + 1)
        if row < 0 and self.state.result is not None:
            encoding = self.state.result.encoding
            rows = tokens_in_selection(encoding.starts, encoding.ends, *self.state.selection)
            if not rows and self.state.caret >= 0:
                rows = range(self.state.caret, self.state.caret + 1)
        if not rows or self.underMouse() or not self._current():
            return
        model, selection, flags = self.model(), self.selectionModel(), self.selectionModel().SelectionFlag
        first = model.index(rows[0], 0)
        self.scrollTo(first, QAbstractItemView.ScrollHint.PositionAtCenter)
        selection.setCurrentIndex(first, flags.NoUpdate)
        # subtle: Qt's table goes through a selected range row by row when it draws it (a
        # select-all on a book asked the model its size 1.2 million times: 11 s); past
        # SELECTED_ROWS tokens only the first row is selected.
        last = rows[-1] if len(rows) <= SELECTED_ROWS else rows[0]
        selection.select(QItemSelection(first, model.index(last, model.columnCount() - 1)), flags.ClearAndSelect)

    def leaveEvent(self, event) -> None:
        super().leaveEvent(event)
        self.state.set_hovered(-1)
