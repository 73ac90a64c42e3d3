"""Every QSettings key the application uses, and where the settings live.

Settings go to the platform's usual place, unless TOKEXPLORER_SETTINGS_DIR (or --settings-dir)
names a folder: then to an INI file there, which is how the tests keep away from the user's real
settings and from each other.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from PySide6.QtCore import QSettings

GEOMETRY = "window/geometry"  # QByteArray from saveGeometry
WORKSPACE = "window/workspace"  # name of the workspace shown (gui/workspaces.py)
TOKENIZER = "editor/tokenizer"  # picker name
POLICY = "editor/special_policy"  # "refuse", "all" or "none"
SHOW_WHITESPACE = "view/show_whitespace"  # bool
DARK = "view/dark"  # bool
TOKEN_COLOURS = "view/token_colours"  # a scheme of colours.SCHEMES
LEGEND = "view/legend"  # bool: the legend strip in the status bar is shown
MONOSPACE = "view/monospace"  # bool: the editor uses the system's fixed-width font
FONT_SIZE = "view/font_size"  # int points; 0: the default size
INSPECTOR_NUMBERS = "view/inspector_numbers"  # "decimal" or "hex": how the inspector writes bytes
COMPARE = "compare/on"  # bool: the compare view is shown
COMPARE_PANES = "compare/panes"  # list of the built-in tokenizers of the panes after the first
RECENT_FILES = "files/recent"  # list of paths, newest first
SAVE_FOLDER = "files/tokenizer_folder"  # str: the folder a trained tokenizer was last saved to
EXPORT_FOLDER = "files/export_folder"  # str: the folder a plot or its numbers were last exported to
MAX_RECENT = 10

ENV_DIR = "TOKEXPLORER_SETTINGS_DIR"


def workspace_layout(name: str) -> str:
    """The key of a workspace's layout: QByteArray from saveState, its docks and tool bars."""
    return f"window/layout/{name.lower()}"


def open_settings() -> QSettings:
    """The application's settings store, made private first (`keep_private`)."""
    folder = os.environ.get(ENV_DIR)
    if folder:
        settings = QSettings(str(Path(folder) / "tokexplorer.ini"), QSettings.Format.IniFormat)
    else:
        settings = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "tokexplorer", "tokexplorer")
    keep_private(settings)
    return settings


def keep_private(settings: QSettings) -> None:
    """The settings folder 0700 and the settings file 0600, whatever the umask: the recent files
    name the user's files, and the folder holds the recovery folder (unsaved text) and the crash log.

    The file is created empty (0600) if it is not there yet, or chmod-ed: QSettings writes through
    QSaveFile, which gives the new file the old one's mode, so it stays 0600. A settings folder
    that is not this user's, or cannot be changed, is left as it is (QSettings is as quiet when
    it cannot write); the recovery folder inside refuses to work in a folder that is not private.
    """
    path = Path(settings.fileName())
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = path.parent.stat()  # a user's own symlinked settings folder is theirs to keep
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            return
        if stat.S_IMODE(st.st_mode) != 0o700:
            os.chmod(path.parent, 0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o600)  # never truncates
        try:
            if hasattr(os, "fchmod") and stat.S_ISREG(os.fstat(fd).st_mode):
                os.fchmod(fd, 0o600)
        finally:
            os.close(fd)
    except OSError:
        pass


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
