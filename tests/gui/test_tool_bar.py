"""The tool bars at a small window (issue 33): at 200 % a 2560 px screen gives the window 1024
logical pixels, and the last tool bar's last button (Dark Theme) went behind the » extension; a
1366 or 1920 px screen gives it 683 or 960, and the special-token policy went behind it too."""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QMenu, QToolBar, QToolButton, QWidgetAction


def extension_buttons(bar: QToolBar) -> list[QToolButton]:
    return [b for b in bar.findChildren(QToolButton) if b.objectName() == "qt_toolbar_ext_button"]


def menu_actions(menu: QMenu) -> set[QAction]:
    """Every action of a menu and of its sub-menus."""
    found = set()
    for action in menu.actions():
        found.add(action)
        if action.menu() is not None:
            found |= menu_actions(action.menu())
    return found


def shown_bars(window) -> list[QToolBar]:
    """The window's shown tool bars, each checked to show all its controls inside the window."""
    bars = [bar for bar in window.findChildren(QToolBar) if bar.isVisible()]
    assert {bar.objectName() for bar in bars} == {"workspace_toolbar", "switches_toolbar", "tokenizer_toolbar"}
    for bar in bars:
        assert bar.geometry().right() < window.width()
        hidden = [a.text() or bar.widgetForAction(a).objectName() for a in bar.actions()
                  if not a.isSeparator() and not bar.widgetForAction(a).isVisible()]
        assert hidden == [], bar.objectName()
        assert not any(b.isVisible() for b in extension_buttons(bar)), bar.objectName()
    return sorted(bars, key=lambda bar: (bar.y(), bar.x()))


def test_every_tool_bar_action_shows_in_a_1024_px_window(window, qtbot):
    window.resize(1024, 576)
    QApplication.processEvents()
    assert window.width() == 1024
    bars = shown_bars(window)
    assert len({bar.y() for bar in bars}) == 1  # one row


def test_a_narrow_window_gives_the_tokenizer_bar_a_row_of_its_own(window, qtbot):
    """As narrow as the window goes here (under 1024 px: its docks' minimum widths), the
    tokenizer's bar takes a second row and the switches share the workspaces' row; wide again,
    one row."""
    window.resize(700, 576)
    qtbot.waitUntil(lambda: window.toolBarBreak(window.findChild(QToolBar, "tokenizer_toolbar")))
    QApplication.processEvents()
    assert window.width() < 1000
    workspaces, switches, tokenizer = shown_bars(window)
    assert [b.objectName() for b in (workspaces, switches, tokenizer)] == [
        "workspace_toolbar", "switches_toolbar", "tokenizer_toolbar"]
    assert workspaces.y() == switches.y() < tokenizer.y()
    assert window.policy_box.isVisible() and window.tokenizer_box.isVisible()
    for name in ("Train", "Learn", "Chat", "Explore"):  # each restores its saved layout (bars too)
        window.workspaces.switch(name)
        window.resize(700, 576)
        QApplication.processEvents()
        shown_bars(window)
    window.resize(1100, 576)
    qtbot.waitUntil(lambda: not window.toolBarBreak(tokenizer))
    QApplication.processEvents()
    assert len({bar.y() for bar in shown_bars(window)}) == 1


def test_every_tool_bar_button_is_in_a_menu_too(window):
    """What a tool bar does, a menu does too: hidden tool bars (View menu) lose nothing."""
    in_menus = set()
    for action in window.menuBar().actions():
        if action.menu() is not None:
            in_menus |= menu_actions(action.menu())
    buttons = [a for bar in window.findChildren(QToolBar) for a in bar.actions()
               if not a.isSeparator() and not isinstance(a, QWidgetAction)]
    assert {a.text() for a in buttons} >= {"Explore", "Chat", "&Compare Tokenizers", "Show &Whitespace"}
    assert [a.text() for a in buttons if a not in in_menus] == []
    assert window.dark_action in in_menus
