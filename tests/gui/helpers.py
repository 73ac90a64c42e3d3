"""Helpers for the GUI tests: canned dialogs and typing that works for any Unicode text.

subtle: qtbot.keyClicks aborts the whole process on non-ASCII text (PySide6 6.11/6.12,
"ASSERT: false in qasciikey.cpp"), so `type_text` sends key events that carry the text instead.
"""

from __future__ import annotations

import multiprocessing

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
        self.changed_answer = "cancel"  # a save over a file changed on disk
        self.read_only_answer = "cancel"  # a save over a read-only file

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

    def ask_changed_on_disk(self, path):
        self.asked.append(("ask_changed_on_disk", path))
        return self.changed_answer

    def ask_read_only(self, path):
        self.asked.append(("ask_read_only", path))
        return self.read_only_answer

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


def tokenizer_for(window, name: str):
    """The tokenizer `name` of a window's picker, loaded here in the test's process, for expected
    values (the window itself holds none: its tokenizers live in the tokenizing server)."""
    from tokexplorer.core.registry import get_builtin, load_tokenizer_file

    path = window.state.catalog.path_of(name)
    return get_builtin(name) if path is None else load_tokenizer_file(path)


def drift_next_request(service, extra_edits) -> list[bool]:
    """Make the next request of a TokenizeService carry `extra_edits` (UTF-16 position, removed,
    inserted) beside the editor's own, as a bug in the editor's bookkeeping would: the server's
    copy of the text then differs from the editor's. Returns a list that gets, for each later
    request, whether it sent the whole text."""
    source, sent = service._text_source, []

    def drifting(full: bool):
        delta = source(full)
        if not sent and delta.edits is not None:
            delta = delta._replace(edits=list(delta.edits) + list(extra_edits))
        sent.append(delta.text is not None)
        return delta

    service._text_source = drifting
    return sent


def tokenized_of(name: str, text: str, policy: str = "refuse"):
    """The result a window shows for `text` in built-in `name`: made by the server's code and
    spliced by the window's, in this process (no server process)."""
    from tokexplorer.core.positions import utf16_len
    from tokexplorer.core.registry import get_builtin
    from tokexplorer.server.document_tokens import DocumentTokens
    from tokexplorer.server import protocol as p
    from tokexplorer.server.documents import Document

    request = p.Tokenize(1, 1, name, policy, p.TextDelta(text, None, 0, utf16_len(text)))
    document, tokens = Document(1), DocumentTokens()
    document.apply(request)
    tokens.sent(1, request.delta)
    return tokens.apply(document.tokenize(request, get_builtin(name)))


class ServerInThread:
    """Stands in for the server's process in tests that must reach into the server (to make a
    library panic, or a bug happen, by monkeypatching the core): the real server code
    (`tokexplorer.server.process.serve`) on a real pipe, in a thread of the test's process."""

    def __init__(self, conn):
        import threading

        from tokexplorer.server.process import serve

        self._conn = conn
        self._thread = threading.Thread(target=serve, args=(conn,), daemon=True, name="server-in-thread")
        self.pid, self.exitcode = None, None

    def start(self) -> None:
        self._thread.start()

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def join(self, timeout=None) -> None:
        self._thread.join(timeout)

    def kill(self) -> None:
        self._conn.close()


def server_in_thread(monkeypatch) -> None:
    """Windows made after this call use a server of their own, in a thread of the test's process."""
    from tokexplorer.gui.services import server_link
    from tokexplorer.server.client import ServerProcess

    class Threaded(ServerProcess):
        def _launch(self):
            conn, child = multiprocessing.Pipe()
            server = ServerInThread(child)
            server.start()
            return conn, server

    monkeypatch.setattr(server_link, "ServerProcess", Threaded)
    monkeypatch.setattr(server_link, "_server", server_link._Server())
