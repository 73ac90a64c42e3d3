"""Value widgets that the mouse wheel does not change in passing.

A combo box, spin box or slider changes its value under the wheel even when the user only meant to
scroll the panel it sits in (the training panel's split pattern became "Custom…" and its vocab size
4,091 that way). `guard_wheel(root)` gives every such widget below `root` a strong focus policy (a
click or Tab focuses it; the wheel does not) and, while it has no focus, hands the wheel to the
scroll area around it, which scrolls. A focused widget takes the wheel as usual.

It changes no value and knows no panel.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (QAbstractScrollArea, QAbstractSpinBox, QApplication, QComboBox, QSlider,
                               QWidget)

GUARDED = (QComboBox, QAbstractSpinBox, QSlider)  # subtle: not QAbstractSlider: a scroll bar is one


class WheelGuard(QObject):
    """An event filter: a wheel event over an unfocused value widget goes to its parents."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.Wheel or not isinstance(watched, QWidget) or watched.hasFocus():
            return False
        area = watched.parentWidget()
        while area is not None and not isinstance(area, QAbstractScrollArea):
            area = area.parentWidget()
        if area is not None:
            # subtle: handed to the scroll area itself, not left to Qt's propagation to parents,
            # which a wheel event sent by a program (not the user's) never gets
            QApplication.sendEvent(area.viewport(), event)
        else:
            event.ignore()  # filtered and ignored: Qt offers it to the parents in turn
        return True


def guard_wheel(root: QWidget) -> WheelGuard:
    """Guard every combo box, spin box and slider below `root` (call it once the widgets exist);
    the guard lives as long as `root`."""
    guard = WheelGuard(root)
    for kind in GUARDED:
        for widget in root.findChildren(kind):
            widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            widget.installEventFilter(guard)
    return guard
