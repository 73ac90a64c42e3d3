"""One call from Qt into Python per cell of an item view, not one per role.

A view paints a cell after asking its model for a dozen roles (text, alignment, font, colours,
check state...). Qt asks them in one `multiData` call, whose default asks `data()` once per role:
from a Python model that is a dozen calls into Python per cell, and each takes the interpreter
lock again. While a background thread runs Python (a tokenizer loading), every such handover
waits its turn: a token table of 30 rows took 13 ms to repaint instead of 2.5.

`AllRolesInOneCall` answers every role of a cell in one call, from the model's own `data()`, so
the model keeps one definition of what it shows. It does not change what a view shows.
"""

from __future__ import annotations


class AllRolesInOneCall:
    """Mixin for a QAbstractItemModel subclass (list it first) whose `data()` answers a role."""

    def multiData(self, index, span) -> None:  # noqa: N802 (Qt's name)
        valid = index.isValid()
        for i in range(span.size()):
            slot = span[i]
            value = self.data(index, slot.role()) if valid else None
            if value is None:
                slot.clearData()  # subtle: the view may reuse the span: a stale value would stay
            else:
                slot.setData(value)
