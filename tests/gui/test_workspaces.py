"""Workspaces (gui/workspaces.py): Ctrl+1..Ctrl+5 and the bar switch them, each remembers how the
user left it, Reset Layout restores the table's arrangement, and the choice outlives the window."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tokexplorer.gui import settings as keys
from tokexplorer.gui.app import parse_args
from tokexplorer.gui.workspaces import WORKSPACES, find_workspace

LEFT, RIGHT = Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea


def test_the_table_names_views_the_window_has_or_is_about_to(window):
    coming = {"learn", "bpe", "glitch"}  # views being built: skipped until the window has them
    for ws in WORKSPACES:
        for group in ws.groups:
            assert set(group.views) <= set(window.views) | coming, ws.name
            assert 0 < group.size < 1
    assert [ws.shortcut for ws in WORKSPACES] == [f"Ctrl+{i}" for i in range(1, 6)]


def test_the_first_start_shows_explore(window):
    assert window.workspaces.current.name == "Explore"
    assert window.workspaces.actions["Explore"].isChecked()
    assert not window.token_dock.isHidden() and not window.inspector_dock.isHidden()
    assert window.merge_dock.isHidden() and window.chat_dock.isHidden() and not window.compare.active


def test_the_shortcuts_switch_workspaces(window, qtbot):
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    for i, ws in reversed(list(enumerate(WORKSPACES, start=1))):
        qtbot.keyClick(window.editor, getattr(Qt.Key, f"Key_{i}"), Qt.KeyboardModifier.ControlModifier)
        assert window.workspaces.current is ws
        assert window.workspaces.actions[ws.name].isChecked()
        assert window.compare.active == ws.compare


def test_the_bar_holds_one_button_per_workspace(window):
    from PySide6.QtWidgets import QToolBar

    bar = window.findChild(QToolBar, "workspace_toolbar")
    assert [a.text() for a in bar.actions()] == [ws.name for ws in WORKSPACES]
    bar.actions()[3].trigger()
    assert window.workspaces.current.name == "Train"
    assert not window.training_dock.isHidden() and not window.plots_dock.isHidden()
    assert window.dockWidgetArea(window.training_dock) == LEFT


def test_each_workspace_remembers_a_moved_dock_and_reset_restores_it(window, qtbot):
    window.addDockWidget(LEFT, window.token_dock)  # the user drags Token IDs to the left
    window.workspaces.switch("Learn")
    assert window.token_dock.isHidden()
    window.workspaces.switch("Explore")
    assert window.dockWidgetArea(window.token_dock) == LEFT and not window.token_dock.isHidden()
    window.workspaces.reset_action.trigger()
    assert window.dockWidgetArea(window.token_dock) == RIGHT
    assert window.chunk_dock in window.tabifiedDockWidgets(window.token_dock)
    assert window.settings.value(keys.workspace_layout("Explore")) is None  # the default again


@pytest.mark.parametrize("name", ["Explore", "Learn"])
def test_the_docks_take_their_share_of_the_window(window, qtbot, name):
    window.workspaces.switch(name)
    ws = window.workspaces.current
    for group in ws.groups:  # its share, or what its views need when that is more
        present = [window.views[v] for v in group.views if v in window.views]
        dock = present[0]
        # (a view made when first shown tells its minimum once made: `want` is asked each time)
        if group.area == "bottom":
            def want():
                return max(group.size * window.height(), *(d.minimumSizeHint().height() for d in present))
            qtbot.waitUntil(lambda: abs(dock.height() - want()) < 0.05 * window.height())
        else:
            def want():
                return max(group.size * window.width(), *(d.minimumSizeHint().width() for d in present))
            qtbot.waitUntil(lambda: abs(dock.width() - want()) < 0.05 * window.width())


def test_the_workspace_and_its_layout_outlive_the_window(make_window, qtbot):
    first = make_window()
    first.workspaces.switch("Learn")
    first.addDockWidget(LEFT, first.merge_dock)
    first.close()
    second = make_window()
    assert second.workspaces.current.name == "Learn"
    assert second.dockWidgetArea(second.merge_dock) == LEFT and not second.merge_dock.isHidden()
    assert second.inspector_dock.isHidden()


def test_a_view_asked_for_by_name_switches_to_a_workspace_that_holds_it(window, qtbot):
    window.show_view("plots", switch=True)
    assert window.workspaces.current.name == "Train"
    window.show_view("inspector", switch=True)  # not in Train: to Explore, the first that has it
    assert window.workspaces.current.name == "Explore"
    window.show_view("merges")  # the View menu's way: shown here, no switch
    assert window.workspaces.current.name == "Explore" and not window.merge_dock.isHidden()
    window.show_view("compare", switch=True)
    assert window.workspaces.current.name == "Compare" and window.compare.active


def test_workspace_names_are_checked():
    assert find_workspace("train").name == "Train"
    with pytest.raises(KeyError, match="the workspaces are: Explore, Compare, Learn, Train, Chat"):
        find_workspace("nonesuch")
    assert parse_args(["--workspace", "chat"]).workspace == "chat"


def screenshot(tmp_path, *args, screen: tuple[int, int] | None = None):
    """`tokexplorer --screenshot` in its own process, on a described screen of that size."""
    import json
    import os
    import subprocess
    import sys

    platform = "offscreen"
    if screen is not None:
        config = tmp_path / "screen.json"
        config.write_text(json.dumps({"screens": [{"name": "s", "x": 0, "y": 0, "width": screen[0],
                                                   "height": screen[1], "logicalDpi": 96,
                                                   "logicalBaseDpi": 96, "dpr": 1}]}))
        platform = f"offscreen:configfile={config}"
    env = dict(os.environ, QT_QPA_PLATFORM=platform)
    env.pop("DISPLAY", None)
    return subprocess.run([sys.executable, "-m", "tokexplorer", "--screenshot", str(tmp_path / "shot.png"),
                           "--settings-dir", str(tmp_path / "settings"), *args],
                          env=env, capture_output=True, text=True, timeout=120)


def test_a_first_start_on_a_1366_screen_opens_at_80_percent(tmp_path):
    from .test_screenshot import png_size

    proc = screenshot(tmp_path, "--workspace", "learn", screen=(1366, 768))
    assert proc.returncode == 0, proc.stderr
    assert png_size(tmp_path / "shot.png") == (1093, 614)


def test_an_unknown_workspace_is_named(tmp_path):
    proc = screenshot(tmp_path, "--workspace", "nonesuch")
    assert proc.returncode == 2
    assert "unknown workspace 'nonesuch'; the workspaces are: Explore, Compare, Learn, Train, Chat" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_view_menu_offers_the_workspaces_and_reset_layout(window):
    entries = {a.text().replace("&", ""): a for a in window.view_menu.actions()}
    assert entries["Reset Layout"] is window.workspaces.reset_action
    submenu = entries["Workspace"].menu()
    assert [a.text() for a in submenu.actions()] == [ws.name for ws in WORKSPACES]
