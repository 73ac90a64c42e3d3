"""Every control in the window says what it does when hovered (issue 12: a tooltip on every
control), in every panel, the docks that start hidden included."""

from __future__ import annotations

from PySide6.QtWidgets import (QAbstractButton, QAbstractSlider, QAbstractSpinBox, QComboBox, QDockWidget,
                               QLineEdit, QScrollBar, QTabBar)


def controls_without_a_tooltip(window) -> list[str]:
    missing = []
    for kind in (QAbstractButton, QComboBox, QLineEdit, QAbstractSpinBox, QAbstractSlider):
        for w in window.findChildren(kind):
            parent = w.parent()
            # Qt's own parts of other widgets: a line edit's clear button, a combo box's or spin
            # box's editor, a tab bar's scroll arrows, a dock's title buttons, scroll bars.
            if isinstance(w, QScrollBar) or isinstance(parent, (QLineEdit, QComboBox, QAbstractSpinBox,
                                                                    QTabBar, QDockWidget)):
                continue
            if w.objectName().startswith("qt_") or w.toolTip():
                continue
            if isinstance(w, QAbstractButton) and getattr(w, "defaultAction", lambda: None)() is not None \
                    and w.defaultAction().toolTip():
                continue
            owner = parent
            while owner is not None and not type(owner).__module__.startswith("tokexplorer"):
                owner = owner.parent()
            label = w.text() if hasattr(w, "text") and not isinstance(w, QLineEdit) else w.objectName()
            missing.append(f"{type(owner).__name__}: {type(w).__name__} {label!r}")
    return missing


def test_every_control_has_a_tooltip(window):
    for name in list(window.views):
        if name != "compare":
            window.show_view(name)
    assert controls_without_a_tooltip(window) == []
