"""The base of the window's flat table models (token ids, chunks, vocabulary, merge log).

A subclass names its columns (`HEADERS`, with optional `HEADER_TIPS`), says how many rows it has
(`row_count`) and what a cell shows for a role (`cell`); the base answers Qt's questions around
that: no children (a table's cells have none), the column headers, and every role a subclass does
not list in `ROLES` at once with None.

subtle: a view asks each visible cell for a dozen roles on every repaint (font, decoration, check
state...); `data` turns the unused ones away first, comparing plain ints (the roles below), since
arithmetic on Qt's enums costs microseconds a call.

`fixed_rows` sets a table view up for many rows. It holds no data of its own and draws nothing.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import ClassVar, Iterator, Mapping, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtWidgets import QHeaderView, QTableView

# The roles and the alignment the models answer with, as the ints a view asks with.
DISPLAY, TOOLTIP, ALIGNMENT, BACKGROUND = (int(r) for r in (
    Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.TextAlignmentRole,
    Qt.ItemDataRole.BackgroundRole))
RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


class TableModel(QAbstractTableModel):
    """A table of `row_count()` rows and a column per header; cells come from `cell`."""

    HEADERS: ClassVar[Sequence[str]] = ()
    HEADER_TIPS: ClassVar[Mapping[int, str]] = {}  # column -> its header's tooltip
    ROLES: ClassVar[frozenset[int]] = frozenset({DISPLAY})  # the roles `cell` answers

    def row_count(self) -> int:
        raise NotImplementedError

    def cell(self, row: int, column: int, role: int):
        """What the cell shows for `role` (one of ROLES), or None."""
        raise NotImplementedError

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else self.row_count()

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section, orientation, role=DISPLAY):
        if orientation == Qt.Orientation.Horizontal:
            if role == DISPLAY:
                return self.HEADERS[section]
            if role == TOOLTIP:
                return self.HEADER_TIPS.get(section)
        return None

    def data(self, index, role=DISPLAY):
        if role not in self.ROLES or not index.isValid():
            return None
        return self.cell(index.row(), index.column(), role)

    @contextmanager
    def resetting(self) -> Iterator[None]:
        """Change the data inside `with model.resetting():`: the views forget every row before,
        and ask again after."""
        self.beginResetModel()
        try:
            yield
        finally:
            self.endResetModel()

    def cells_changed(self) -> None:
        """Tell the views that every cell's look may have changed (the rows are the same)."""
        rows = self.rowCount()
        if rows:
            self.dataChanged.emit(self.index(0, 0), self.index(rows - 1, self.columnCount() - 1))


def fixed_rows(view: QTableView, height: int) -> None:
    """Rows of one `height` in pixels, without row numbers. subtle: a view that measured each row
    would ask the model about every one of a book's 300,000 rows; with fixed heights it asks only
    for the rows it shows."""
    rows = view.verticalHeader()
    rows.hide()
    rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    rows.setDefaultSectionSize(height)
