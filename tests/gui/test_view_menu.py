"""Every view comes forward when asked for: each View menu item and its shortcut shows its dock,
raises it from behind a tab and gives it the keyboard (gui/workspaces.py `bring_forward`)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QTabBar, QTabWidget

from tokexplorer.gui.workspaces import WORKSPACES

DOCK_VIEWS = ["ids", "chunks", "vocab", "inspector", "training", "merges", "trace", "chat", "plots"]


def on_screen(widget) -> bool:
    # subtle: Qt keeps a tabbed dock that is not the current tab visible, moved off the window.
    return widget.isVisible() and not widget.visibleRegion().isEmpty()


def tab_bar_of(window, dock) -> QTabBar | None:
    """The tab bar of the dock's tab group (Qt's own, not a view's QTabWidget), if it is tabbed."""
    for bar in window.findChildren(QTabBar):
        if not isinstance(bar.parent(), QTabWidget) and bar.isVisible() and dock.windowTitle() in [
                bar.tabText(i) for i in range(bar.count())]:
            return bar
    return None


def in_front(window, dock) -> bool:
    """On screen, and the current tab of its tab group when it has one."""
    if not on_screen(dock.widget()):
        return False
    if all(other.isHidden() for other in window.tabifiedDockWidgets(dock)):
        return True
    bar = tab_bar_of(window, dock)
    return bar is not None and bar.tabText(bar.currentIndex()) == dock.windowTitle()


def has_focus(dock) -> bool:
    focus = QApplication.focusWidget()
    return focus is not None and (focus is dock.widget() or dock.widget().isAncestorOf(focus))


@pytest.fixture
def active(window, qtbot):
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    return window


def test_the_view_menu_names_every_dock(window):
    assert set(window.view_actions) == set(window.workspaces.docks()) >= set(DOCK_VIEWS)
    menu_actions = window.view_menu.actions()
    for name, action in window.view_actions.items():
        assert action in menu_actions, name
        assert action is not window.views[name].toggleViewAction()  # the bare toggle only hides


def test_each_view_menu_item_brings_its_view_forward(active, qtbot):
    """Every dock the window has (views added later included), each from closed."""
    window = active
    for name, action in window.view_actions.items():
        dock = window.views[name]
        dock.hide()  # closed (those of the first workspace start open; the others closed)
        action.trigger()
        qtbot.waitUntil(lambda: in_front(window, dock), timeout=5000)
        qtbot.waitUntil(lambda: has_focus(dock), timeout=5000)
        assert action.isChecked(), name


def test_every_view_in_turn_comes_forward_over_the_others(active, qtbot):
    """The docks opened one after another, each over the ones before it in its tab group (the
    bug: Merge Tree, Encode Trace, Chat, Training and Plots opened as tabs behind the Inspector)."""
    window = active
    first = ["chunks", "vocab", "ids", "training", "merges", "trace", "chat", "plots", "inspector"]
    again = ["plots", "chat", "trace", "merges", "training", "vocab", "chunks"]
    for name in first + again:
        dock = window.views[name]
        assert not in_front(window, dock), name  # closed, or behind another tab
        window.view_actions[name].trigger()
        qtbot.waitUntil(lambda: in_front(window, dock), timeout=5000)
    for name in DOCK_VIEWS:  # all open, each once asked for
        assert not window.views[name].isHidden()


def test_the_shortcut_of_a_view_behind_a_tab_raises_it(active, qtbot):
    window = active
    window.view_actions["merges"].trigger()
    qtbot.waitUntil(lambda: in_front(window, window.merge_dock))
    assert window.inspector_dock in window.tabifiedDockWidgets(window.merge_dock)
    bar = tab_bar_of(window, window.merge_dock)
    assert bar is not None and bar.tabText(bar.currentIndex()) == "Merge Tree"
    assert not on_screen(window.inspector)  # behind the merge tree, yet open
    qtbot.keyClick(window.editor, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: in_front(window, window.inspector_dock))
    assert not window.merge_dock.isHidden()  # raised over, not closed


def test_a_second_press_on_a_view_in_front_hides_it(active, qtbot):
    window = active
    action = window.view_actions["inspector"]
    qtbot.waitUntil(lambda: in_front(window, window.inspector_dock))
    action.trigger()
    qtbot.waitUntil(lambda: window.inspector_dock.isHidden())
    assert not action.isChecked()
    action.trigger()
    qtbot.waitUntil(lambda: in_front(window, window.inspector_dock))
    assert action.isChecked()


def test_show_view_takes_the_same_path(active, qtbot):
    window = active
    window.show_view("trace")
    qtbot.waitUntil(lambda: in_front(window, window.trace_dock) and has_focus(window.trace_dock))


def test_the_compare_item_shows_the_panes(window, qtbot):
    window.compare_action.trigger()
    qtbot.waitUntil(lambda: len(window.compare.columns) > 1 and on_screen(window.compare.columns[1]))
    assert window.compare_action.shortcut().isEmpty()  # Ctrl+2 is the Compare workspace


@pytest.mark.parametrize("workspace", WORKSPACES, ids=lambda ws: ws.name)
def test_every_workspace_shows_its_views(window, qtbot, workspace):
    window.workspaces.switch(workspace.name)
    listed = {name for group in workspace.groups for name in group.views if name in window.views}
    for group in workspace.groups:
        present = [window.views[n] for n in group.views if n in window.views]
        if present:
            qtbot.waitUntil(lambda: in_front(window, present[0]))
        for dock in present:
            assert not dock.isHidden() and not dock.isFloating()
    for name, dock in window.workspaces.docks().items():
        assert dock.isHidden() == (name not in listed), name
    assert window.compare.active == workspace.compare
    if workspace.text:
        qtbot.waitUntil(lambda: on_screen(window.editor))
    else:  # the docks have the window to themselves
        assert not window.editor.isVisible()
