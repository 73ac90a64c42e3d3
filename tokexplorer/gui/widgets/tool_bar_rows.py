"""`ToolBarRows`: a tool bar whose first controls no menu stands in for takes a row of its own
when they would not fit beside the bars before it.

QMainWindow lays the bars of its top area side by side and hides what does not fit behind the
last bar's » extension, from its end. At 200 % a 1366 px screen gives the window 683 logical
pixels, too few for the workspace buttons and the tokenizer picker side by side, and the
special-token policy (which no menu holds) went behind the ». The window names each such bar
with the last control of it that must show; `ToolBarRows` puts a break before the bar when the
bar up to that control would not fit on its row, and takes it away when the window is wide
again. What comes after that control (a menu holds it too) may go behind the »: the window grows
no taller for it (at 1024 x 600 a second row put the window past the screen). It keeps the bars'
order and area, and changes nothing in a bar.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QMainWindow, QToolBar, QToolButton, QWidget


def rows(widths: list[int], needs: list[int | None], room: int) -> list[bool]:
    """For bars of these widths in this order, whether each starts a new row in `room` pixels: a
    bar with a need (the width of its part that must show) does when that part would not fit on
    the row before it; a bar without never does.

    >>> rows([276, 722], [None, 495], 1024)
    [False, False]
    >>> rows([276, 722], [None, 495], 781)  # the second bar's end behind its »
    [False, False]
    >>> rows([276, 722], [None, 495], 683)
    [False, True]
    """
    breaks, used = [], 0
    for width, need in zip(widths, needs):
        wrap = need is not None and used > 0 and used + need > room
        breaks.append(wrap)
        used = width if wrap else used + width
    return breaks


def width_up_to(bar: QToolBar, last: QWidget) -> int:
    """The bar's width when it shows its controls up to `last` and the » for the rest."""
    actions = bar.actions()
    after = actions[[bar.widgetForAction(a) for a in actions].index(last) + 1:]
    spacing = bar.layout().spacing()
    rest = sum(bar.widgetForAction(a).sizeHint().width() + spacing for a in after if bar.widgetForAction(a))
    extension = bar.findChild(QToolButton, "qt_toolbar_ext_button")
    return bar.sizeHint().width() - rest + (extension.sizeHint().width() if extension is not None else 0)


class ToolBarRows(QObject):
    """Keeps the breaks before some of a window's top tool bars: `wrapping` maps each to the last
    of its controls that must show (see the module docstring)."""

    def __init__(self, window: QMainWindow, wrapping: dict[QToolBar, QWidget]):
        super().__init__(window)
        self.window, self.wrapping = window, wrapping
        window.installEventFilter(self)
        self._watch_bars()

    def _watch_bars(self) -> None:
        """Hear the events of each of the window's bars (installing twice is installing once)."""
        for bar in self.window.findChildren(QToolBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
            bar.installEventFilter(self)

    def bars(self) -> list[QToolBar]:
        """The shown bars of the top area, in their order (row by row, left to right)."""
        top = Qt.ToolBarArea.TopToolBarArea
        shown = [b for b in self.window.findChildren(QToolBar, options=Qt.FindChildOption.FindDirectChildrenOnly)
                 if not b.isHidden() and self.window.toolBarArea(b) == top]
        return sorted(shown, key=lambda b: (b.y(), b.x()))

    def arrange(self) -> None:
        bars = self.bars()
        needs = [width_up_to(b, self.wrapping[b]) if b in self.wrapping else None for b in bars]
        breaks = rows([b.sizeHint().width() for b in bars], needs, self.window.width())
        for bar, wrap in zip(bars, breaks):
            if wrap != self.window.toolBarBreak(bar):
                if wrap:
                    self.window.insertToolBarBreak(bar)
                else:
                    self.window.removeToolBarBreak(bar)

    def eventFilter(self, watched, event) -> bool:
        # The window's width, and its bars: one shown, hidden, moved (a workspace's restoreState
        # brings back the breaks it saved) or resized, or its controls changing width (arranging
        # again changes nothing the second time).
        # subtle: not at each layout request of the window: the status bar's counts ask for one at
        # every keystroke, and arranging then cost 0.2 ms of it (1.2 times a key).
        if not shiboken6.isValid(self.window):
            return False  # the window is being destroyed: its bars go after it
        kind = event.type()
        if watched is self.window:
            if kind == QEvent.Type.ChildPolished:  # (a new bar, once made: at ChildAdded it is half made)
                self._watch_bars()
            elif kind == QEvent.Type.Resize:
                self.arrange()
        elif kind in _BAR_CHANGES:
            self.arrange()
        return False


_BAR_CHANGES = (QEvent.Type.Show, QEvent.Type.Hide, QEvent.Type.Move, QEvent.Type.Resize, QEvent.Type.LayoutRequest)
