"""Helpers for the GUI tests: canned dialogs and typing that works for any Unicode text.

subtle: qtbot.keyClicks aborts the whole process on non-ASCII text (PySide6 6.11/6.12,
"ASSERT: false in qasciikey.cpp"), so `type_text` sends key events that carry the text instead.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication


class FakeDialogs:
    """Canned answers instead of modal dialogs; records what was asked."""

    def __init__(self):
        self.asked: list[tuple[str, object]] = []
        self.unsaved_answer = "discard"
        self.encoding_answer: str | None = "latin-1"
        self.paths: dict[str, str | None] = {}
        self.restore_answer = "restore"
        self.stop_training_answer = True
        self.stop_sweep_answer = True
        self.unsaved_tokenizers_answer = "discard"

    def open_text_path(self, folder):
        self.asked.append(("open_text_path", folder))
        return self.paths.get("open_text")

    def open_tokenizer_path(self, folder):
        self.asked.append(("open_tokenizer_path", folder))
        return self.paths.get("open_tokenizer")

    def open_corpus_paths(self, folder):
        self.asked.append(("open_corpus_paths", folder))
        return self.paths.get("open_corpus", [])

    def save_tokenizer_path(self, suggested, formats):
        self.asked.append(("save_tokenizer_path", suggested))
        return self.paths.get("save_tokenizer")  # (path, format key) or None

    def save_path(self, suggested):
        self.asked.append(("save_path", suggested))
        return self.paths.get("save")

    def export_path(self, suggested, file_filter):
        self.asked.append(("export_path", suggested))
        return self.paths.get("export")

    def ask_unsaved(self, name):
        self.asked.append(("ask_unsaved", name))
        return self.unsaved_answer

    def ask_restore(self, name, when, chars):
        self.asked.append(("ask_restore", (name, when, chars)))
        return self.restore_answer

    def ask_stop_training(self, what, lost):
        self.asked.append(("ask_stop_training", (what, lost)))
        return self.stop_training_answer

    def ask_stop_sweep(self, lost):
        self.asked.append(("ask_stop_sweep", lost))
        return self.stop_sweep_answer

    def ask_unsaved_tokenizers(self, names):
        self.asked.append(("ask_unsaved_tokenizers", names))
        return self.unsaved_tokenizers_answer

    def choose_encoding(self, error):
        self.asked.append(("choose_encoding", error))
        return self.encoding_answer

    def show_info(self, title, rich_text):
        self.asked.append(("show_info", rich_text))

    def show_details(self, title, text, details):
        self.asked.append(("show_details", (text, details)))


def type_text(widget, text: str) -> None:
    """Type `text` into `widget` one character at a time, as key events carrying the text."""
    for ch in text:
        key = Qt.Key.Key_Return if ch == "\n" else Qt.Key.Key_unknown
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            QApplication.sendEvent(widget, QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier, ch))


def settled(window) -> bool:
    from tokexplorer.gui.app import settled as app_settled

    return app_settled(window)


def wait_settled(qtbot, window, timeout: int = 30_000) -> None:
    qtbot.waitUntil(lambda: settled(window), timeout=timeout)
