"""The item views' table models (token ids, chunks, vocabulary): a view's delegate paints a cell
from what `data()` says, role by role, and nothing left from the cell before; indexes are checked
as Qt checks them."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem

from .helpers import wait_settled

RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


class Delegate(QStyledItemDelegate):
    """The delegate a view paints with; `option` is what it would paint a cell from."""

    def option(self, index) -> QStyleOptionViewItem:
        option = QStyleOptionViewItem()
        self.initStyleOption(option, index)
        return option


def test_a_cell_is_painted_from_data_and_only_its_own(qtbot, window):
    window.state.set_tokenizer("gpt2")
    window.documents.set_text("hello world, 👋 again")
    wait_settled(qtbot, window)
    for view in ("ids", "chunks", "vocab"):
        window.show_view(view)
    qtbot.waitUntil(lambda: window.vocab.vocab is not None and window.token_table.up_to_date, timeout=20_000)
    models = [window.token_table.model(), window.chunk_view.model, window.vocab.model]
    delegate = Delegate()
    calls = []
    for model in models:
        data = type(model).data
        model.data = lambda index, role=0, data=data, model=model: calls.append(role) or data(model, index, role)
        assert model.rowCount() > 3
        for row in range(3):
            for col in range(model.columnCount()):
                index = model.index(row, col)
                calls.clear()
                option = delegate.option(index)
                assert len(calls) > 3  # every role the delegate wants, from `data`
                text = model.data(index, Qt.ItemDataRole.DisplayRole)
                assert option.text == ("" if text is None else str(text))
                aligned = model.data(index, Qt.ItemDataRole.TextAlignmentRole)
                # subtle: the delegate keeps its role slots from cell to cell; a right-aligned cell
                # before this one must not leave its alignment here
                assert (option.displayAlignment == RIGHT) == (aligned is not None), (model, row, col)
                background = model.data(index, Qt.ItemDataRole.BackgroundRole)
                if background is not None:
                    assert option.backgroundBrush.color() == background
                else:
                    assert option.backgroundBrush.style() == Qt.BrushStyle.NoBrush


def test_indexes_are_checked_as_qt_checks_them(qtbot, window):
    window.documents.set_text("one two three")
    wait_settled(qtbot, window)
    for model in (window.token_table.model(), window.chunk_view.model, window.vocab.model):
        rows, cols = model.rowCount(), model.columnCount()
        assert rows and cols
        for row, col in ((0, 0), (rows - 1, cols - 1)):
            index = model.index(row, col)
            assert index.isValid() and (index.row(), index.column(), index.model()) == (row, col, model)
        for row, col in ((-1, 0), (rows, 0), (0, cols), (0, -1)):
            assert not model.index(row, col).isValid()
        assert not model.index(0, 0, model.index(0, 0)).isValid()  # a table's cells have no children
