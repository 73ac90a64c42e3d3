"""`ToolBarRows`: a window's top tool bars take a second row when one row is too narrow for them.

QMainWindow lays the bars of its top area side by side and hides what does not fit behind each
bar's » extension. At 200 % a 1366 or 1920 px screen gives the window 683 or 960 logical pixels,
too few for the workspace buttons and the tokenizer picker side by side, and the special-token
policy (which no menu holds) went behind the ». `ToolBarRows` puts a break before a bar that would
not fit on its row, and takes it away when the window is wide again, so every control shows
whenever each bar fits a row of its own. It keeps the bars' order and area, and changes nothing
in a bar: a bar wider than the window still has its ».
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QMainWindow, QToolBar


def rows(widths: list[int], room: int) -> list[bool]:
    """For bars of these widths in this order, whether each starts a new row in `room` pixels:
    a bar goes on the row before it when it fits there.

    >>> rows([276, 250, 460], 1024)
    [False, False, False]
    >>> rows([276, 250, 460], 683)
    [False, False, True]
    >>> rows([276, 250, 460], 400)
    [False, True, True]
    """
    breaks, used = [], 0
    for width in widths:
        wrap = used > 0 and used + width > room
        breaks.append(wrap)
        used = width if wrap else used + width
    return breaks


class ToolBarRows(QObject):
    """Keeps the breaks between a window's top tool bars (see the module docstring)."""

    def __init__(self, window: QMainWindow):
        super().__init__(window)
        self.window = window
        window.installEventFilter(self)

    def bars(self) -> list[QToolBar]:
        """The shown bars of the top area, in their order (row by row, left to right)."""
        top = Qt.ToolBarArea.TopToolBarArea
        # subtle: direct children only: this runs at each layout request of the window, and a
        # recursive search walks every widget of every view.
        shown = [b for b in self.window.findChildren(QToolBar, options=Qt.FindChildOption.FindDirectChildrenOnly)
                 if not b.isHidden() and self.window.toolBarArea(b) == top]
        return sorted(shown, key=lambda b: (b.y(), b.x()))

    def arrange(self) -> None:
        bars = self.bars()
        for bar, wrap in zip(bars, rows([b.sizeHint().width() for b in bars], self.window.width())):
            if wrap != self.window.toolBarBreak(bar):
                if wrap:
                    self.window.insertToolBarBreak(bar)
                else:
                    self.window.removeToolBarBreak(bar)

    def eventFilter(self, watched, event) -> bool:
        # A resize, and a layout change: a workspace's restoreState brings back the breaks it
        # saved, a bar is shown or hidden (arranging again changes nothing the second time).
        if watched is self.window and event.type() in (QEvent.Type.Resize, QEvent.Type.LayoutRequest):
            self.arrange()
        return False
