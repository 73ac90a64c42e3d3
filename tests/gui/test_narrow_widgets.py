"""The widgets that let a view fit a narrow dock: FlowLayout wraps its widgets onto more lines
(each whole, none overlapping, as tall as heightForWidth says); ElidedComboBox narrows below its
longest item; elide_rows caps a list's rows at its width."""

from __future__ import annotations

from PySide6.QtCore import QStringListModel
from PySide6.QtWidgets import QListView, QPushButton, QRadioButton, QWidget

from tokexplorer.gui.widgets.elided_combo import ElidedComboBox
from tokexplorer.gui.widgets.elided_rows import elide_rows
from tokexplorer.gui.widgets.flow_layout import FlowLayout


def flow(qtbot, width: int):
    host = QWidget()
    qtbot.addWidget(host)
    layout = FlowLayout(host)
    widgets = [QRadioButton("Files"), QRadioButton("Current text"), QPushButton("Add Files…"),
               QPushButton("Clear")]
    for w in widgets:
        layout.addWidget(w)
    host.resize(width, layout.heightForWidth(width))
    host.show()
    qtbot.waitExposed(host)
    return host, layout, widgets


def test_flow_is_one_line_where_it_fits_and_wraps_where_not(qtbot):
    host, layout, widgets = flow(qtbot, 1000)
    assert len({w.y() for w in widgets}) == 1  # one line
    assert [w.x() for w in widgets] == sorted(w.x() for w in widgets)
    narrow = layout.minimumSize().width()  # the widest widget and the margins
    host, layout, widgets = flow(qtbot, narrow)
    assert len({w.y() for w in widgets}) == 4  # a line each
    for i, w in enumerate(widgets):
        assert w.size() == w.sizeHint() and w.geometry().right() < narrow, w.text()  # whole
        assert not any(w.geometry().intersects(v.geometry()) for v in widgets[i + 1:])
    assert max(w.geometry().bottom() for w in widgets) < layout.heightForWidth(narrow)
    widgets[1].hide()  # a hidden widget takes no room
    assert layout.heightForWidth(narrow) < host.height()


def test_elided_combo_box_narrows_below_its_longest_item(qtbot):
    box = ElidedComboBox(min_chars=6)
    qtbot.addWidget(box)
    box.addItems(["BPE, bytes only (Basic)", "SentencePiece unigram"])
    longest = box.fontMetrics().horizontalAdvance("BPE, bytes only (Basic)")
    assert box.minimumSizeHint().width() < longest


def test_elided_rows_are_never_wider_than_the_list(qtbot):
    view = QListView()
    qtbot.addWidget(view)
    model = QStringListModel(["1. " + "a long merge step " * 20, "2. short"])
    view.setModel(model)
    elide_rows(view)
    view.resize(500, 200)
    view.show()
    qtbot.waitExposed(view)
    view.resize(150, 200)
    qtbot.waitUntil(lambda: view.visualRect(model.index(0)).width() <= view.viewport().width())
    assert view.horizontalScrollBar().maximum() == 0
