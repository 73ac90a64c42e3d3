"""The window's named views (`MainWindow.show_view`, `tokexplorer --view`) and `--select`."""

from __future__ import annotations

import pytest

from tokexplorer.gui.app import select_code_points

from .helpers import wait_settled


def on_screen(widget) -> bool:
    # subtle: Qt keeps a tabbed dock that is not the current tab visible, moved off the window.
    return widget.isVisible() and not widget.visibleRegion().isEmpty()


def test_show_view_brings_a_tabbed_dock_to_the_front(window, qtbot):
    window.show_view("chunks")
    qtbot.waitUntil(lambda: on_screen(window.chunk_view) and not on_screen(window.token_table))
    window.show_view("ids")
    qtbot.waitUntil(lambda: on_screen(window.token_table) and not on_screen(window.chunk_view))
    window.token_dock.hide()
    window.show_view("ids")
    qtbot.waitUntil(lambda: on_screen(window.token_table))


def test_an_unknown_view_names_the_known_ones(window):
    with pytest.raises(KeyError, match="the views are: editor, ids, chunks"):
        window.show_view("nonesuch")


def test_select_takes_code_points_past_astral_characters(window, qtbot):
    window.documents.set_text("a😀bc 𝕏yz")
    wait_settled(qtbot, window)
    assert select_code_points(window, 2, 4)
    assert window.editor.textCursor().selectedText() == "bc"
    assert select_code_points(window, 6, 8)
    assert window.editor.textCursor().selectedText() == "yz"
    assert not select_code_points(window, 3, 99)
