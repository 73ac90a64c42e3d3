"""What the window remembers between runs: its geometry, its workspace and each workspace's docks
(gui/workspaces.py), the tokenizer and policy, the view options (whitespace, theme, colours,
legend, font), and the compare panes.

Read once when the window is made and written when it closes; the keys are in `settings.py`. A
`--screenshot` or benchmark run gets a throw-away settings folder, so it never writes the user's.

The window fits its screen: the first start opens it at 80 % of the screen's available geometry,
centred, and a saved geometry larger than the screen it comes back on is shrunk to fit. Qt's
offscreen platform (tests, screenshots without a display) has no real screen, only an 800×800
stand-in, so there the first start takes `OFFSCREEN_SIZE` and nothing is shrunk, unless a screen is
described to it (`real_screen`).
"""

from __future__ import annotations

import os

from PySide6.QtCore import QByteArray, QRect, QSize, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from tokexplorer.gui import settings as keys
from tokexplorer.gui.services.worker import POLICIES


SCREEN_SHARE = 0.8  # of the available geometry, at the first start
OFFSCREEN_SIZE = QSize(1100, 720)


def first_geometry(available: QRect, share: float = SCREEN_SHARE) -> QRect:
    """The window at the first start: `share` of the available geometry, centred in it.

    >>> first_geometry(QRect(0, 0, 1366, 740)).getRect()
    (136, 74, 1093, 592)
    """
    rect = QRect(0, 0, round(available.width() * share), round(available.height() * share))
    rect.moveCenter(available.center())
    return rect


def fitted(geometry: QRect, available: QRect) -> QRect:
    """`geometry` shrunk to the available geometry where larger, and moved inside it.

    >>> fitted(QRect(100, 50, 2400, 1300), QRect(0, 0, 1366, 740)).getRect()
    (0, 0, 1366, 740)
    >>> fitted(QRect(100, 50, 800, 600), QRect(0, 0, 1366, 740)).getRect()
    (100, 50, 800, 600)
    """
    size = geometry.size().boundedTo(available.size())
    rect = QRect(geometry.topLeft(), size)
    rect.moveLeft(min(max(rect.left(), available.left()), available.right() - size.width() + 1))
    rect.moveTop(min(max(rect.top(), available.top()), available.bottom() - size.height() + 1))
    return rect


def real_screen() -> bool:
    """Whether the screen is one to fit: any but the offscreen platform's stand-in (a screen
    described by QT_QPA_PLATFORM=offscreen:configfile=FILE counts, as screenshots use)."""
    return (QGuiApplication.platformName() != "offscreen"
            or "configfile=" in os.environ.get("QT_QPA_PLATFORM", ""))


def system_dark() -> bool:
    return QApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


class WindowSettings:
    """Restores a `MainWindow` from its QSettings and saves it back."""

    def __init__(self, window, settings):
        self.window, self.settings = window, settings
        self.dark_chosen = settings.value(keys.DARK) is not None  # else the system's theme is followed
        self.first_run = settings.value(keys.GEOMETRY) is None  # never closed before: app.py welcomes

    def choose_dark(self) -> None:
        """The user picked a theme (View > Dark Theme): stop following the system's."""
        self.dark_chosen = True

    def restore(self) -> None:
        w, st, state = self.window, self.settings, self.window.state
        geometry = st.value(keys.GEOMETRY)
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            w.restoreGeometry(geometry)
            if real_screen() and not w.isMaximized():
                screen = QGuiApplication.screenAt(w.geometry().center()) or w.screen()
                w.setGeometry(fitted(w.geometry(), screen.availableGeometry()))
        elif real_screen():
            w.setGeometry(first_geometry(w.screen().availableGeometry()))
        else:
            w.resize(OFFSCREEN_SIZE)
        w.workspaces.restore()  # after the geometry: the docks' sizes are shares of the window's
        name = str(st.value(keys.TOKENIZER, state.tokenizer))
        if name in state.catalog.names():
            state.set_tokenizer(name)
        policy = str(st.value(keys.POLICY, "refuse"))
        if policy in POLICIES:
            state.set_policy(policy)
        state.set_show_whitespace(keys.read_bool(st, keys.SHOW_WHITESPACE, False))
        state.set_dark(keys.read_bool(st, keys.DARK, False) if self.dark_chosen else system_dark())
        QApplication.styleHints().colorSchemeChanged.connect(
            lambda: self.dark_chosen or state.set_dark(system_dark()))
        state.set_token_colours(str(st.value(keys.TOKEN_COLOURS, state.token_colours)))
        w.legend_action.setChecked(keys.read_bool(st, keys.LEGEND, True))
        w.legend.setVisible(w.legend_action.isChecked())
        state.set_font(monospace=keys.read_bool(st, keys.MONOSPACE, False),
                       size=keys.read_int(st, keys.FONT_SIZE, 0))
        w.compare.restore(keys.read_list(st, keys.COMPARE_PANES), keys.read_bool(st, keys.COMPARE, False))
        w.inspector.set_base(str(st.value(keys.INSPECTOR_NUMBERS, "decimal")))

    def save(self) -> None:
        w, st, state = self.window, self.settings, self.window.state
        st.setValue(keys.GEOMETRY, w.saveGeometry())
        w.workspaces.save_layout()
        if state.catalog.is_builtin(state.tokenizer):  # others may be gone next time
            st.setValue(keys.TOKENIZER, state.tokenizer)
        st.setValue(keys.POLICY, state.policy)
        st.setValue(keys.SHOW_WHITESPACE, state.show_whitespace)
        if self.dark_chosen:
            st.setValue(keys.DARK, state.dark)
        st.setValue(keys.TOKEN_COLOURS, state.token_colours)
        st.setValue(keys.LEGEND, w.legend_action.isChecked())
        st.setValue(keys.MONOSPACE, state.monospace)
        st.setValue(keys.FONT_SIZE, state.font_size)
        st.setValue(keys.COMPARE, w.compare.active)
        st.setValue(keys.COMPARE_PANES, [n for n in w.compare.names[1:] if state.catalog.is_builtin(n)])
        st.setValue(keys.INSPECTOR_NUMBERS, w.inspector.base)
        st.sync()
