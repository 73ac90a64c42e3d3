"""PySide6 6.12.0 on Python 3.11 drops a reference to None on every call of a method returning
nothing, and the process dies after a few thousand calls ("none_dealloc"). pyproject pins
PySide6-Essentials<6.12; this test fails if an upgrade brings the bug back, instead of users' apps
crashing (Python 3.12+ makes None immortal, which hides the bug there)."""

import sys

from PySide6.QtWidgets import QWidget


def test_void_calls_keep_none_refcount(qtbot):
    widget = QWidget()
    qtbot.addWidget(widget)
    before = sys.getrefcount(None)
    for i in range(1000):
        widget.setObjectName(f"w{i % 7}")
    after = sys.getrefcount(None)
    assert after >= before - 10, f"sys.getrefcount(None) fell by {before - after} over 1000 void calls"
