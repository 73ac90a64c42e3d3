"""A label behind a `LayoutFence` in a status bar: a new text of the same width lays out nothing
above the fence; a wider one gets its room."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QMainWindow

from tokexplorer.gui.widgets.fitting_label import FittingLabel
from tokexplorer.gui.widgets.layout_fence import LayoutFence


class LayoutRequests(QObject):
    def __init__(self):
        super().__init__()
        self.count = 0

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.count += 1
        return False


def status_bar_with(label: FittingLabel, fenced: bool, qtbot) -> tuple[QMainWindow, LayoutRequests]:
    window = QMainWindow()
    qtbot.addWidget(window)
    window.resize(1400, 300)
    window.statusBar().addPermanentWidget(LayoutFence(label) if fenced else label)
    label.set_forms(["1,000 tokens · 5,000 characters", "1,000 tokens"])
    window.show()
    qtbot.waitExposed(window)
    QApplication.processEvents()  # the layouts of showing the window
    requests = LayoutRequests()
    window.installEventFilter(requests)
    return window, requests


@pytest.mark.parametrize("fenced", [True, False])
def test_new_counts_of_the_same_width_lay_out_nothing_above_the_fence(qtbot, fenced):
    """Behind the fence, no layout request reaches the window; without it, each new text sends
    one (what the fence is for: if Qt stops doing this, the fence can go)."""
    label = FittingLabel()
    window, requests = status_bar_with(label, fenced, qtbot)
    for n in range(1_001, 1_011):
        label.set_forms([f"{n:,} tokens · 5,000 characters", f"{n:,} tokens"])
        QApplication.processEvents()
        assert label.text() == f"{n:,} tokens · 5,000 characters"
    assert requests.count == 0 if fenced else requests.count >= 10


def test_a_wider_text_gets_its_room_behind_the_fence(qtbot):
    label = FittingLabel()
    window, _ = status_bar_with(label, True, qtbot)
    narrow = label.width()
    wide = "1,000,000 tokens · 5,000,000 characters · 5,000,000 bytes · 5.00 bytes/token"
    label.set_forms([wide, "1,000,000 tokens"])
    qtbot.waitUntil(lambda: label.text() == wide)
    assert label.width() > narrow and label.contentsRect().width() >= label.text_width(wide)
