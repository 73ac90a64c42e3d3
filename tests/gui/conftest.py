"""Fixtures for the GUI tests: settings kept in a temporary folder, and main windows with canned
dialogs (tests/gui/helpers.py)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from .helpers import FakeDialogs, settled


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path, monkeypatch):
    """Every test gets its own settings folder; the developer's settings are never touched."""
    folder = tmp_path / "settings"
    folder.mkdir()
    monkeypatch.setenv("TOKEXPLORER_SETTINGS_DIR", str(folder))
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))
    return folder


@pytest.fixture
def make_window(qtbot):
    """Build main windows with FakeDialogs; waits until each has loaded its tokenizer."""
    from tokexplorer.gui.main_window import MainWindow

    def make(**kwargs):
        window = MainWindow(dialogs=kwargs.pop("dialogs", FakeDialogs()), **kwargs)
        qtbot.addWidget(window)
        window.show()
        qtbot.waitUntil(lambda: settled(window), timeout=30_000)
        return window

    return make


@pytest.fixture
def window(make_window):
    return make_window()
