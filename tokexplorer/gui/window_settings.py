"""What the window remembers between runs: geometry and docks, the tokenizer and policy, the view
options (whitespace, theme, colours, legend, font), and the compare panes.

Read once when the window is made and written when it closes; the keys are in `settings.py`. A
`--screenshot` or benchmark run gets a throw-away settings folder, so it never writes the user's.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtWidgets import QApplication

from tokexplorer.gui import settings as keys
from tokexplorer.gui.services.worker import POLICIES


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
        else:
            w.resize(1100, 720)
            w.resizeDocks([w.token_dock], [340], Qt.Orientation.Horizontal)
            w.resizeDocks([w.inspector_dock], [300], Qt.Orientation.Vertical)
        window_state = st.value(keys.WINDOW_STATE)
        if isinstance(window_state, QByteArray) and not window_state.isEmpty():
            w.restoreState(window_state)
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

    def save(self) -> None:
        w, st, state = self.window, self.settings, self.window.state
        st.setValue(keys.GEOMETRY, w.saveGeometry())
        st.setValue(keys.WINDOW_STATE, w.saveState())
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
        st.sync()
