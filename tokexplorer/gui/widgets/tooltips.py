"""Tooltips that depend on what is under the mouse: one answer to Qt's ToolTip event for every
view that shows one (the token under the pointer in a text, the byte under it in the inspector).

Only shows or hides; what a tip says is the view's business.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QToolTip, QWidget


def answer_tooltip(event: QEvent, tip: str | None, widget: QWidget) -> bool:
    """Show `tip` where a ToolTip `event` happened over `widget`, or hide the tooltip when nothing
    under the pointer has one; True, for the event handler to return (the event is handled)."""
    if tip is None:
        QToolTip.hideText()
    else:
        QToolTip.showText(event.globalPos(), tip, widget)
    return True
