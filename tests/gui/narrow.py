"""A view in a narrow dock with a large font, as a small screen at 200 % or a user's large font
shows it: the dock floated, its font scaled, resized; and what "shows its whole text" means."""

from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QAbstractButton, QDockWidget


def narrow_dock(qtbot, window, view: str, *, width: int = 350, height: int = 700,
                scale: float = 1.5) -> QDockWidget:
    """The view's dock, floated and `width` x `height` pixels, its font `scale` times the window's."""
    window.show_view(view)
    dock = window.views[view]
    font = QFont(window.font())
    font.setPointSizeF(font.pointSizeF() * scale)
    dock.setFont(font)
    dock.setFloating(True)
    dock.resize(width, height)
    qtbot.waitUntil(dock.isVisible)
    qtbot.wait(50)  # the layouts' posted requests
    assert dock.width() == width, f"the view needs {dock.minimumSizeHint().width()} px, not {width}"
    return dock


def shows_whole_text(button: QAbstractButton) -> bool:
    """Whether a button is as wide as its whole label asks (a narrower one is elided)."""
    return button.width() >= button.sizeHint().width()
