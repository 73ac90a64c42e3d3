"""What the editor's colours and marks mean, one glance away: the View > Token Colours menu
(soft, strong, boundaries only) and a compact legend strip for the status bar whose entries are
drawn as the editor draws them, each with a tooltip in plain words."""

from __future__ import annotations

from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu

from .colours import SCHEMES
from .state import AppState


def token_colours_menu(state: AppState, parent) -> QMenu:
    """View > Token Colours: one checkable entry per scheme, following the state both ways."""
    menu = QMenu("Token &Colours", parent)
    menu.setObjectName("token_colours_menu")
    group = QActionGroup(menu)
    actions: dict[str, QAction] = {}
    for scheme, label in SCHEMES.items():
        action = menu.addAction(label)
        action.setCheckable(True)
        action.setData(scheme)
        action.triggered.connect(lambda checked=False, s=scheme: state.set_token_colours(s))
        group.addAction(action)
        actions[scheme] = action
    actions[state.token_colours].setChecked(True)
    state.token_colours_changed.connect(lambda s: actions[s].setChecked(True))
    return menu
