"""`FlowLayout`: widgets left to right, wrapping onto another line where the width runs out, so a
row of radio buttons and push buttons fits a narrow dock without cutting any of them.

It has a height for each width (a QVBoxLayout, a QFormLayout or a resizable QScrollArea above it
asks for it), and it is never narrower than its widest widget. A hidden widget takes no room.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QStyle


class FlowLayout(QLayout):
    """Items at their size hints, in lines as long as the width allows."""

    def __init__(self, parent=None, *, horizontal: int = -1, vertical: int = -1):
        """`horizontal` and `vertical`: the gaps between items and between lines, in pixels; -1:
        the layout's spacing, or the style's when that is not set either."""
        super().__init__(parent)
        self._items: list = []  # the QLayoutItems, in order
        self._gaps = {True: horizontal, False: vertical}

    def addItem(self, item) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int):
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int):
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._lay_out(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._lay_out(rect, move=True)

    def sizeHint(self) -> QSize:
        """All on one line."""
        m = self.contentsMargins()
        shown = [i.sizeHint() for i in self._items if not i.isEmpty()]
        width = sum(s.width() for s in shown) + self._gap(horizontal=True) * max(len(shown) - 1, 0)
        return QSize(width + m.left() + m.right(), max((s.height() for s in shown), default=0) + m.top() + m.bottom())

    def minimumSize(self) -> QSize:
        """The widest item by the tallest: the height a width takes is `heightForWidth`'s."""
        m = self.contentsMargins()
        shown = [i.sizeHint() for i in self._items if not i.isEmpty()]
        return QSize(max((s.width() for s in shown), default=0) + m.left() + m.right(),
                     max((s.height() for s in shown), default=0) + m.top() + m.bottom())

    def _gap(self, *, horizontal: bool) -> int:
        spacing = self._gaps[horizontal] if self._gaps[horizontal] >= 0 else self.spacing()
        if spacing >= 0:
            return spacing
        parent = self.parentWidget()
        metric = QStyle.PixelMetric.PM_LayoutHorizontalSpacing if horizontal else QStyle.PixelMetric.PM_LayoutVerticalSpacing
        return max(parent.style().pixelMetric(metric) if parent is not None else 6, 0)

    def _lay_out(self, rect: QRect, *, move: bool) -> int:
        """Place the items in `rect` (or only measure); returns the height they take."""
        m = self.contentsMargins()
        left, right = rect.x() + m.left(), rect.right() - m.right()
        x, y, line = left, rect.y() + m.top(), 0
        dx, dy = self._gap(horizontal=True), self._gap(horizontal=False)
        for item in self._items:
            if item.isEmpty():
                continue
            size = item.sizeHint()
            if x > left and x + size.width() - 1 > right:  # the next line
                x, y, line = left, y + line + dy, 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), size))
            x += size.width() + dx
            line = max(line, size.height())
        return y + line + m.bottom() - rect.y()
