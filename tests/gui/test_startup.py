"""Start-up on a machine that cannot show the window: a message that says what to install, never
Qt's abort."""

from __future__ import annotations

import ctypes
from pathlib import Path

from tokexplorer.gui import app

# What the dynamic loader says when Qt's X11 plugin needs a library the system lacks (seen on a
# Debian machine without libxcb-icccm4).
LOADER_ERROR = ("/venv/PySide6/Qt/plugins/platforms/libqxcb.so: libxcb-icccm.so.4: "
                "cannot open shared object file: No such file or directory")


def test_the_missing_library_is_named(monkeypatch, tmp_path):
    def fail(path, *args, **kwargs):
        raise OSError(LOADER_ERROR)

    monkeypatch.setattr(ctypes, "CDLL", fail)
    assert app.missing_x11_library(tmp_path / "libqxcb.so") == "libxcb-icccm.so.4 is missing"


def test_a_library_that_loads_is_fine():
    import PySide6

    qt_core = sorted((Path(PySide6.__file__).parent / "Qt" / "lib").glob("libQt6Core.so*"))
    assert qt_core, "PySide6 ships libQt6Core"
    assert app.missing_x11_library(qt_core[0]) is None


def test_no_window_without_its_libraries(monkeypatch, capsys):
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.setattr(app, "missing_x11_library", lambda: "libxcb-cursor.so.0 is missing")
    assert app.run_gui([]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "libxcb-cursor.so.0 is missing" in err
    assert "apt install libxcb-cursor0" in err and "Traceback" not in err
