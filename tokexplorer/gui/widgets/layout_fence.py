"""`LayoutFence`: holds one widget over its whole area and keeps the widget's layout requests
from climbing to the window; its parent's layout hears only of a change of the widget's size hints.

A QLabel asks its parent for a layout at every change of its text, whether or not its size hint
changed, and each layout that runs asks its own parent again (`QLayout::activate` ends with
`updateGeometry`), up to the main window, which lays out its docks again. The status bar's counts
change at every keystroke; behind a fence they cost a repaint of the label, not a layout of the
window. The fence has no layout of its own: it places the widget itself.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize
from PySide6.QtWidgets import QWidget


class LayoutFence(QWidget):
    """`widget` (reparented here) over the fence's whole area; the fence's hints are the widget's."""

    def __init__(self, widget: QWidget, parent: QWidget | None = None):
        super().__init__(parent)
        self.widget = widget
        widget.setParent(self)
        self.setSizePolicy(widget.sizePolicy())
        self._hints: tuple[QSize, QSize] | None = None  # the widget's, as the parent's layout last heard them

    def sizeHint(self) -> QSize:
        return self.widget.sizeHint()

    def minimumSizeHint(self) -> QSize:
        return self.widget.minimumSizeHint()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.widget.setGeometry(self.rect())

    def event(self, event) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:  # the widget's (a fence has no layout)
            self._tell_parent()
            return True
        return super().event(event)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._tell_parent()  # (a hidden fence hears no layout request: Qt posts none to it)

    def _tell_parent(self) -> None:
        """Ask the parent's layout for room again if the widget's size hints changed since it last did."""
        hints = (self.widget.sizeHint(), self.widget.minimumSizeHint())
        if hints != self._hints:
            self._hints = hints
            self.updateGeometry()
