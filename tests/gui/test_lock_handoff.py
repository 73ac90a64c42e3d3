"""While a window is open, busy background threads hand the interpreter lock to the window's
thread every millisecond (gui/lock_handoff.py), and Python's own interval is back once every
window has closed."""

from __future__ import annotations

import sys

from tokexplorer.gui import lock_handoff


def test_the_interval_while_windows_are_open(make_window, monkeypatch):
    saved = sys.getswitchinterval()
    monkeypatch.setattr(lock_handoff, "_windows", 0)  # as if none were open (another test's may be)
    sys.setswitchinterval(0.005)  # Python's default
    try:
        first, second = make_window(), make_window()
        assert sys.getswitchinterval() == lock_handoff.INTERVAL_S
        first.editor.document().setModified(False)
        assert first.close()
        assert sys.getswitchinterval() == lock_handoff.INTERVAL_S  # one window is still open
        second.editor.document().setModified(False)
        assert second.close()
        assert sys.getswitchinterval() == 0.005
    finally:
        sys.setswitchinterval(saved)
