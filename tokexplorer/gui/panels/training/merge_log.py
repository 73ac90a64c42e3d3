"""The merge log: the merges learned so far, a row each (rank, pair, new token, count), appended a
batch at a time as the trainer sends them, the view following the last row unless scrolled up.

It shows records; it neither trains nor counts.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from tokexplorer.core.analysis.unicode_info import token_label
from tokexplorer.core.training.bpe import MergeRecord
from tokexplorer.gui.widgets.table_model import ALIGNMENT, DISPLAY, RIGHT, TOOLTIP, TableModel, fixed_rows


class MergeLogModel(TableModel):
    """The merges learned so far: rank (the new id), the pair, the new token, its count."""

    HEADERS = ["rank", "pair", "token", "count"]
    ROLES = frozenset({DISPLAY, TOOLTIP, ALIGNMENT})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.records: list[MergeRecord] = []
        self._vocab: list[bytes] = [bytes([i]) for i in range(256)]  # id -> bytes, for the pairs

    def clear(self) -> None:
        with self.resetting():
            self.records = []
            del self._vocab[256:]

    def append(self, batch: list[MergeRecord]) -> None:
        """Add a batch of merges as one insertion (a row per signal would flood the view)."""
        if not batch:
            return
        first = len(self.records)
        self.beginInsertRows(QModelIndex(), first, first + len(batch) - 1)
        self.records += batch
        self._vocab += [r.token for r in batch]
        self.endInsertRows()

    def row_count(self) -> int:
        return len(self.records)

    def cell(self, row: int, col: int, role: int):
        r = self.records[row]
        if role == DISPLAY:
            if col == 0:
                return str(r.rank)
            if col == 1:
                a, b = r.pair
                return f"{token_label(self._vocab[a])} + {token_label(self._vocab[b])}"
            if col == 2:
                return token_label(r.token)
            return f"{r.count:,}"
        if role == TOOLTIP:
            return (f"merge {r.rank - 255}: ids {r.pair[0]} + {r.pair[1]} -> {r.rank}, bytes "
                    f"{r.token.hex(' ')}; seen {r.count:,} times; the corpus is now {r.tokens:,} tokens")
        if col in (0, 3):  # ALIGNMENT
            return RIGHT
        return None


class MergeLogView(QTableView):
    """The log's table: fixed row heights and column widths, so appending never measures rows."""

    def __init__(self, model: MergeLogModel, parent=None):
        super().__init__(parent)
        self.setObjectName("merge_log")
        self.setModel(model)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        # subtle: fixed row heights and column widths, so appending rows never measures them all
        fixed_rows(self, self.fontMetrics().height() + 4)
        # The numbers at their width, the pair and the new token sharing the rest (elided when the
        # dock is narrow; the row's tooltip says it whole): the log fits the dock, never scrolls sideways.
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header.setTextElideMode(Qt.TextElideMode.ElideRight)  # a narrow section's title too
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        digits = self.fontMetrics().horizontalAdvance("0")
        header.setMinimumSectionSize(digits * 2)  # the pair and token may narrow to "…"
        for col, chars in ((0, 6), (3, 9)):  # a rank of 6 digits, a count of 9 characters ("1,234,567")
            self.setColumnWidth(col, digits * chars + 12)

    def append(self, batch: list[MergeRecord]) -> None:
        """Add the records; follow them when the view was at its last row."""
        bar = self.verticalScrollBar()
        follow = bar.value() >= bar.maximum() - 2
        self.model().append(batch)
        if follow:
            self.scrollToBottom()
