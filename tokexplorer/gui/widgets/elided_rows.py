"""`elide_rows`: a list whose rows are never wider than it is, each elided and whole in its
tooltip (the model's or the item's), so the list never scrolls sideways in a narrow dock.

A QListView lays a row out as wide as its text, and a horizontal scroll bar shows the rest;
turning the bar off alone leaves the text cut at the list's edge without an ellipsis. Here the
row's width is capped at the viewport's, so the view elides it, and the list lays its rows out
again when it is resized. It changes no row's height and measures nothing more than the view does
(with uniform item sizes, one row).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QListView, QStyledItemDelegate


class _ViewportWide(QStyledItemDelegate):
    """A row's size hint, no wider than the list's viewport."""

    def __init__(self, view: QListView):
        super().__init__(view)
        self._view = view

    def sizeHint(self, option, index) -> QSize:
        hint = super().sizeHint(option, index)
        return QSize(min(hint.width(), self._view.viewport().width()), hint.height())


def elide_rows(view: QListView) -> None:
    """Cap the list's rows at its width (elided), with no horizontal scroll bar."""
    view.setItemDelegate(_ViewportWide(view))
    view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    view.setTextElideMode(Qt.TextElideMode.ElideRight)
    view.setResizeMode(QListView.ResizeMode.Adjust)  # lay the rows out again at the new width
