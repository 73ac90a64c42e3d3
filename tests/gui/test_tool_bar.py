"""The tool bars at a small window (issue 33): at 200 % a 2560 px screen gives the window 1024
logical pixels, and the last tool bar's last button (Dark Theme) went behind the » extension; a
1366 px screen gives it 683, and the special-token policy (which no menu holds) went behind it too."""

from __future__ import annotations

from PySide6.QtGui import QAction, QFont
from PySide6.QtWidgets import QApplication, QMenu, QToolBar, QToolButton, QWidget, QWidgetAction


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


def bar(window, name: str) -> QToolBar:
    return window.findChild(QToolBar, name)


def shows_whole(window, bar: QToolBar) -> bool:
    """Every control of the bar is shown, inside the window, none behind the » extension."""
    hidden = [a for a in bar.actions() if not a.isSeparator() and not bar.widgetForAction(a).isVisible()]
    return (bar.isVisible() and bar.geometry().right() < window.width() and hidden == []
            and not any(b.isVisible() for b in extension_buttons(bar)))


BARS = ["workspace_toolbar", "tokenizer_toolbar"]


def test_every_tool_bar_action_shows_in_a_1024_px_window(window, qtbot):
    window.resize(1024, 576)
    QApplication.processEvents()
    assert window.width() == 1024
    assert sorted(b.objectName() for b in window.findChildren(QToolBar) if b.isVisible()) == sorted(BARS)
    for name in BARS:
        assert shows_whole(window, bar(window, name)), name
    assert len({bar(window, name).y() for name in BARS}) == 1  # one row


def pickers_show(window) -> bool:
    """The workspace buttons, the tokenizer picker and the special-token policy show whole."""
    policy = window.policy_box
    return (shows_whole(window, bar(window, "workspace_toolbar")) and window.tokenizer_box.isVisible()
            and policy.isVisible() and policy.mapTo(window, policy.rect().bottomRight()).x() < window.width())


def test_a_narrow_window_keeps_the_pickers_in_view(window, qtbot):
    """As narrow as the window goes here (its docks' minimum widths), in every workspace: the
    workspace buttons, the tokenizer picker and the special-token policy show, and only the
    switches (which the View menu holds) go behind the ». In a window too narrow for the pickers
    beside the workspace buttons (700 px here) they take a second row; 800 px or more, one row
    (that a second row never puts the window past a small screen, test_workspaces_screen says)."""
    rows = {}
    for name in ("Explore", "Train", "Learn", "Chat", "Compare", "Explore"):  # each restores its layout
        window.workspaces.switch(name)
        window.resize(700, 576)
        QApplication.processEvents()
        assert pickers_show(window), name
        tokenizer = bar(window, "tokenizer_toolbar")
        rows[name] = (window.width(), 2 if bar(window, "workspace_toolbar").y() < tokenizer.y() else 1)
        assert window.toolBarBreak(tokenizer) == (rows[name][1] == 2)
    # the workspace buttons (276 px here) and the tokenizer's bar up to the policy (482 px)
    assert all(n == 1 for width, n in rows.values() if width >= 800)
    assert all(n == 2 for width, n in rows.values() if width <= 720)
    assert any(width <= 720 for width, _ in rows.values())


def test_the_tokenizer_bar_takes_a_row_of_its_own_when_its_pickers_do_not_fit(make_window, qtbot):
    """With a 1.6x font (a desktop's large text) the workspace buttons and the pickers are wider
    than a 1024 px window: the tokenizer's bar goes to a second row, the pickers whole; wide
    again, one row."""
    app = QApplication.instance()
    old = app.font()
    font = QFont(old)
    font.setPointSizeF(old.pointSizeF() * 1.6)
    app.setFont(font)
    try:
        window = make_window()
        window.resize(1024, 576)
        workspaces, tokenizer = bar(window, "workspace_toolbar"), bar(window, "tokenizer_toolbar")
        qtbot.waitUntil(lambda: window.toolBarBreak(tokenizer))
        QApplication.processEvents()
        assert workspaces.y() < tokenizer.y() and pickers_show(window)
        window.resize(workspaces.sizeHint().width() + tokenizer.sizeHint().width() + 50, 576)
        qtbot.waitUntil(lambda: not window.toolBarBreak(tokenizer))
        QApplication.processEvents()
        assert workspaces.y() == tokenizer.y() and shows_whole(window, tokenizer)
    finally:
        app.setFont(old)


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


def test_the_status_bars_counts_do_not_arrange_the_tool_bars(window, qtbot, monkeypatch):
    """The counts change at every keystroke and ask the window for a layout: the bars' rows stay
    as they are without being worked out again; a bar's controls changing width does arrange them."""
    from tokexplorer.gui.widgets.tool_bar_rows import ToolBarRows

    arranged = []
    arrange = ToolBarRows.arrange
    monkeypatch.setattr(ToolBarRows, "arrange", lambda self: (arranged.append(1), arrange(self))[1])
    counts = window.findChild(QWidget, "counts")
    for n in range(5):
        counts.set_forms([f"{10 ** (n + 3):,} tokens · {n} characters", f"{n} tokens"])
        QApplication.processEvents()
    assert arranged == []
    window.tokenizer_box.setMinimumWidth(window.tokenizer_box.width() + 40)  # the bar grows
    qtbot.waitUntil(lambda: len(arranged) > 0)
