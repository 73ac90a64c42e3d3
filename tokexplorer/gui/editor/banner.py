"""A message strip above the editor: the special-token refusal, a failed tokenization, and notes
about how an opened file was adapted for the editor. Shows one message at a time, with buttons:
beside the text, or under it when the strip is narrow (a workspace whose docks take the width).
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QBoxLayout, QFrame, QHBoxLayout, QLabel, QPushButton


class Banner(QFrame):
    """A dismissable message with optional action buttons; hidden when there is nothing to say."""

    STYLES = {  # kind -> (background, text, border), light theme
        "refusal": ("#fff3e0", "#4e2600", "#ffb74d"),
        "error": ("#ffebee", "#5f0000", "#e57373"),
        "note": ("#e3f2fd", "#0d2c4a", "#90caf9"),
    }
    DARK_STYLES = {
        "refusal": ("#4e3000", "#ffe0b2", "#a66b00"),
        "error": ("#4a1010", "#ffcdd2", "#a33"),
        "note": ("#0d2c4a", "#d6eaff", "#3d6e9e"),
    }

    NARROW = 640  # px: below this the buttons go under the text

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("banner")
        self.kind = ""
        self.dark = False
        self._outer = QBoxLayout(QBoxLayout.Direction.LeftToRight, self)
        self._outer.setContentsMargins(8, 4, 8, 4)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self._outer.addWidget(self.label, 1)
        layout = QHBoxLayout()  # the buttons and the close button
        self._outer.addLayout(layout)
        self._buttons: list[QPushButton] = []
        self._layout = layout
        close = QPushButton("✕")
        close.setFlat(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(self.clear)
        layout.addWidget(close)
        self.hide()

    def show_message(self, kind: str, text: str, actions: list[tuple[str, Callable[[], None]]] = ()) -> None:
        for b in self._buttons:
            b.deleteLater()
        self._buttons = []
        for label, callback in actions:
            b = QPushButton(label)
            b.clicked.connect(callback)
            self._layout.insertWidget(self._layout.count() - 1, b)
            self._buttons.append(b)
        self.kind = kind
        self.label.setText(text)
        self._style()
        self.show()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        narrow = event.size().width() < self.NARROW
        self._outer.setDirection(QBoxLayout.Direction.TopToBottom if narrow else QBoxLayout.Direction.LeftToRight)

    def set_dark(self, dark: bool) -> None:
        self.dark = dark
        if self.kind:
            self._style()

    def _style(self) -> None:
        bg, fg, border = (self.DARK_STYLES if self.dark else self.STYLES)[self.kind]
        self.setStyleSheet(f"#banner {{background:{bg}; border:1px solid {border};}}"
                           f"#banner QLabel, #banner QPushButton {{color:{fg};}}")

    def clear(self, kind: str | None = None) -> None:
        """Hide the banner (only if it shows `kind`, when given)."""
        if kind is None or kind == self.kind:
            self.kind = ""
            self.hide()
