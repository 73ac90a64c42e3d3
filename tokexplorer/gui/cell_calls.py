"""Two calls from Qt into Python per cell of a table view, not a dozen.

To paint a cell, a view asks the model for its index (the default checks it against `rowCount`
and `columnCount`: two calls) and for a dozen roles (text, alignment, font, colours, check
state...), in one `multiData` call whose default asks `data()` once per role. From a Python model
each of these is a call into Python, and each takes the interpreter lock again. While a
background thread runs Python (a tokenizer loading), every such handover waits its turn: the
token table's 52 cells cost 220 calls, and one repaint stalled the window 45-125 ms.

`FewCallsPerCell` makes the index in one call and answers every role of a cell in one call,
from the model's own `rowCount`, `columnCount` and `data()`, so the model keeps one definition
of what it shows. It does not change what a view shows.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex


class FewCallsPerCell:
    """Mixin for a QAbstractTableModel subclass (list it first) whose `data()` answers a role."""

    def index(self, row: int, column: int, parent=QModelIndex()) -> QModelIndex:
        if parent.isValid() or not (0 <= row < self.rowCount() and 0 <= column < self.columnCount()):
            return QModelIndex()
        return self.createIndex(row, column)

    def multiData(self, index, span) -> None:  # noqa: N802 (Qt's name)
        valid = index.isValid()
        for i in range(span.size()):
            slot = span[i]
            value = self.data(index, slot.role()) if valid else None
            if value is None:
                slot.clearData()  # subtle: the view may reuse the span: a stale value would stay
            else:
                slot.setData(value)
