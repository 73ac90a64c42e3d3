"""The find bar under the editor: type to find, Enter for the next match, Shift+Enter for the
previous one, Escape to close. The search wraps around the end of the text.

It moves the editor's cursor (selecting the match) and nothing else: the tokens, their colours and
the text stay as they are. Qt's own `QTextDocument.find` does the searching, so positions are Qt's,
except in a text whose long lines the editor holds as pieces: Qt would not see a match across a
soft break, so the tokenized text itself is searched (the state's result, when it is current) and
the match selected through its positions.
"""

from __future__ import annotations

import regex
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QTextCursor, QTextDocument
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from tokexplorer.gui.editor.editor import TokenEditor
from tokexplorer.gui.editor.selection import code_point_at16, utf16_at
from tokexplorer.gui.state import AppState
from tokexplorer.server.tokenized import Tokenized


class FindBar(QWidget):
    def __init__(self, editor: TokenEditor, state: AppState, parent=None):
        super().__init__(parent)
        self.setObjectName("find_bar")
        self._editor = editor
        self._state = state
        self.field = QLineEdit()
        self.field.setToolTip('Text to find (Enter: next, Shift+Enter: previous, Esc: close)')
        self.field.setPlaceholderText("Find in the text")
        self.field.setClearButtonEnabled(True)
        self.case = QCheckBox("Match case")
        self.case.setToolTip('Find only text with the same upper and lower case')
        self.status = QLabel("")
        previous, following, close = QToolButton(), QToolButton(), QToolButton()
        previous.setText("▲")
        previous.setToolTip("Previous match (Shift+Enter, Shift+F3)")
        following.setText("▼")
        following.setToolTip("Next match (Enter, F3)")
        close.setText("✕")
        close.setToolTip("Close (Esc)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addWidget(QLabel("Find:"))
        layout.addWidget(self.field, 1)
        layout.addWidget(previous)
        layout.addWidget(following)
        layout.addWidget(self.case)
        layout.addWidget(self.status)
        layout.addWidget(close)
        self.field.installEventFilter(self)
        self.field.returnPressed.connect(self.find_next)
        self.field.textEdited.connect(self._on_edited)
        previous.clicked.connect(self.find_previous)
        following.clicked.connect(self.find_next)
        close.clicked.connect(self.close_bar)
        self.hide()

    def open(self) -> None:
        """Show the bar with the editor's selection (if it is on one line) as the text to find."""
        selected = self._editor.textCursor().selectedText()
        if selected and "\u2029" not in selected:
            self.field.setText(selected)
        self.show()
        self.field.setFocus()
        self.field.selectAll()

    def close_bar(self) -> None:
        self.hide()
        self._editor.setFocus()

    def find_next(self) -> bool:
        return self._find(backward=False)

    def find_previous(self) -> bool:
        return self._find(backward=True)

    def find_again(self, backward: bool = False) -> None:
        """F3 / Shift+F3: the next or previous match; with nothing to find yet, open the bar."""
        if not self.field.text():
            self.open()
        else:
            self._find(backward)

    def eventFilter(self, watched, event) -> bool:
        """Escape closes; Shift+Enter finds backwards (the field alone would find forwards)."""
        if watched is self.field and event.type() == QEvent.Type.KeyPress:
            if event.key() == Qt.Key.Key_Escape:
                self.close_bar()
                return True
            if (event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
                    and event.modifiers() & Qt.KeyboardModifier.ShiftModifier):
                self.find_previous()
                return True
        return super().eventFilter(watched, event)

    def _on_edited(self) -> None:
        # Find as you type, from where the current match starts, so that typing more letters
        # extends the match in place instead of jumping to the next one.
        cursor = self._editor.textCursor()
        cursor.setPosition(cursor.selectionStart())
        self._editor.setTextCursor(cursor)
        self.find_next()

    def _find(self, backward: bool) -> bool:
        needle = self.field.text()
        if not needle:
            self.status.setText("")
            return False
        result = self._state.result
        if result is not None and len(result.soft) and self._editor.tokens_current:
            return self._find_in_text(result, needle, backward)
        flags = QTextDocument.FindFlag(0)
        if backward:
            flags |= QTextDocument.FindFlag.FindBackward
        if self.case.isChecked():
            flags |= QTextDocument.FindFlag.FindCaseSensitively
        if self._editor.find(needle, flags):
            self.status.setText("")
            return True
        # Wrap around: search again from the other end, keeping the cursor if nothing is found.
        kept = self._editor.textCursor()
        cursor = QTextCursor(self._editor.document())
        cursor.movePosition(QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start)
        self._editor.setTextCursor(cursor)
        if self._editor.find(needle, flags):
            self.status.setText("wrapped")
            return True
        self._editor.setTextCursor(kept)
        self.status.setText("not found")
        return False

    def _find_in_text(self, result: Tokenized, needle: str, backward: bool) -> bool:
        """Find in the tokenized text (where a soft break is nothing), from the cursor, wrapping."""
        text = result.encoding.text
        flags = (regex.REVERSE if backward else 0) | (0 if self.case.isChecked() else regex.IGNORECASE)
        pattern = regex.compile(regex.escape(needle), flags)
        cursor = self._editor.textCursor()
        at = code_point_at16(result, cursor.selectionStart() if backward else cursor.selectionEnd())
        match = pattern.search(text, 0, at) if backward else pattern.search(text, at)
        self.status.setText("")
        if match is None:
            match = pattern.search(text)
            self.status.setText("wrapped" if match is not None else "not found")
        if match is None:
            return False
        cursor.setPosition(utf16_at(result, match.start()))
        cursor.setPosition(utf16_at(result, match.end()), QTextCursor.MoveMode.KeepAnchor)
        self._editor.setTextCursor(cursor)
        return True
