"""Every QSettings key the application uses, and where the settings live.

Settings go to the platform's usual place, unless TOKEXPLORER_SETTINGS_DIR (or --settings-dir)
names a folder: then to an INI file there, which is how the tests keep away from the user's real
settings and from each other.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings

GEOMETRY = "window/geometry"  # QByteArray from saveGeometry
WINDOW_STATE = "window/state"  # QByteArray from saveState: docks and tool bars
TOKENIZER = "editor/tokenizer"  # picker name
POLICY = "editor/special_policy"  # "refuse", "all" or "none"
SHOW_WHITESPACE = "view/show_whitespace"  # bool
DARK = "view/dark"  # bool
TOKEN_COLOURS = "view/token_colours"  # a scheme of colours.SCHEMES
LEGEND = "view/legend"  # bool: the legend strip in the status bar is shown
MONOSPACE = "view/monospace"  # bool: the editor uses the system's fixed-width font
FONT_SIZE = "view/font_size"  # int points; 0: the default size
COMPARE = "compare/on"  # bool: the compare view is shown
COMPARE_PANES = "compare/panes"  # list of the built-in tokenizers of the panes after the first
RECENT_FILES = "files/recent"  # list of paths, newest first
MAX_RECENT = 10

ENV_DIR = "TOKEXPLORER_SETTINGS_DIR"


def open_settings() -> QSettings:
    """The application's settings store."""
    folder = os.environ.get(ENV_DIR)
    if folder:
        return QSettings(str(Path(folder) / "tokexplorer.ini"), QSettings.Format.IniFormat)
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "tokexplorer", "tokexplorer")


def settings_folder(settings: QSettings) -> Path:
    """The folder that holds the settings file (the recovery folder of gui/autosave.py is there)."""
    return Path(settings.fileName()).parent


def read_bool(settings: QSettings, key: str, default: bool) -> bool:
    """A bool setting; INI files store bools as the strings "true" / "false"."""
    value = settings.value(key, default)
    if isinstance(value, str):
        return value.lower() in ("true", "1", "yes")
    return bool(value)


def read_list(settings: QSettings, key: str) -> list[str]:
    """A list-of-strings setting; INI files give a bare string for a one-item list."""
    value = settings.value(key, [])
    if isinstance(value, str):
        return [value] if value else []
    return [str(v) for v in value or []]


def read_int(settings: QSettings, key: str, default: int) -> int:
    """An int setting; INI files store it as a string, and a hand-edited one may be anything."""
    try:
        return int(settings.value(key, default))
    except (TypeError, ValueError):
        return default
