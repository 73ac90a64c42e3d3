"""The window's link to its tokenizing server: `ask(request, ...)` sends a request of
`server.protocol` and calls back in the UI thread with its answer, its error message or its
progress.

A `prepare` function given with a request runs on its answer in the thread that reads the pipe,
before the UI thread sees it (the editor's services splice token deltas there, so the UI thread
only swaps in the result).

If the server dies, the link starts a new one, tells every request still waiting that it failed,
sends the new server the tokenizer files and trained tokenizers the old one held (`remember`),
and emits `restarted` (each document then sends its whole text again) and `status` with a message
for the status bar. A server that dies again within `RESTART_WINDOW_S` of its start is not
started again: `status` says so and requests fail at once.
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import Callable

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal

from ..server import protocol as p
from ..server.client import ServerProcess

RESTART_WINDOW_S = 10.0


class ServerLink(QObject):
    restarted = Signal()
    status = Signal(str)  # a message for the status bar

    _arrived = Signal(object, object)  # (message, prepared value), from the reading thread
    _lost = Signal(str)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        # rid -> (on_result, on_error, on_progress, prepare)
        self._waiting: dict[int, tuple] = {}
        self._replay: list[object] = []  # registrations a new server must be told again
        self._arrived.connect(self._dispatch)
        self._lost.connect(self._on_lost)
        self.given_up = False
        self.restarts = 0
        self._process = self._start()
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.close)

    def _start(self) -> ServerProcess:
        self._started_at = time.monotonic()
        return ServerProcess(self._on_message, self._lost.emit)

    @property
    def pid(self) -> int | None:
        return self._process.pid

    def ask(self, request, on_result: Callable[[object], None] | None = None,
            on_error: Callable[[str], None] | None = None, *,
            on_progress: Callable[[int, int], None] | None = None,
            prepare: Callable[[object], object] | None = None) -> int:
        """Send `request`; the callbacks run in the UI thread. Returns the request's id."""
        rid = next(self._ids)
        if self.given_up:
            if on_error is not None:
                QTimer.singleShot(0, lambda: on_error("the tokenizing server has stopped; restart tokexplorer"))
            return rid
        with self._lock:
            self._waiting[rid] = (on_result, on_error, on_progress, prepare)
        self._process.send(p.Call(rid, request))
        return rid

    def remember(self, request) -> None:
        """A registration (a tokenizer file opened, a tokenizer trained) to send again to a
        restarted server, before anything else."""
        self._replay.append(request)

    def forget(self, rid: int) -> None:
        """Drop the callbacks of a request whose answer no longer matters."""
        with self._lock:
            self._waiting.pop(rid, None)

    def kill(self) -> None:
        """End the server process now, as a crash would (for tests)."""
        self._process.kill()

    def close(self) -> None:
        self._process.close()

    # --- the reading thread --------------------------------------------------------------

    def _on_message(self, message) -> None:
        prepared = None
        if isinstance(message, p.Answer):
            with self._lock:
                entry = self._waiting.get(message.rid)
            if entry is not None and entry[3] is not None:
                prepared = entry[3](message.value)
        self._arrived.emit(message, prepared)

    # --- the UI thread -------------------------------------------------------------------

    def _dispatch(self, message, prepared) -> None:
        with self._lock:
            entry = (self._waiting.get(message.rid) if isinstance(message, p.Progress)
                     else self._waiting.pop(message.rid, None))
        if entry is None:
            return
        on_result, on_error, on_progress, prepare = entry
        if isinstance(message, p.Progress):
            if on_progress is not None:
                on_progress(message.done, message.total)
        elif isinstance(message, p.Error):
            if on_error is not None:
                on_error(message.message)
        elif on_result is not None:
            on_result(prepared if prepare is not None else message.value)

    def _on_lost(self, why: str) -> None:
        with self._lock:
            waiting, self._waiting = self._waiting, {}
        if time.monotonic() - self._started_at < RESTART_WINDOW_S and self.restarts:
            self.given_up = True
            self.status.emit(f"{why}, again: tokenizing is off until tokexplorer is restarted "
                             "(your text is kept; save it)")
        else:
            self.restarts += 1
            self._process = self._start()
            for request in self._replay:
                self._process.send(p.Call(next(self._ids), request))
            self.status.emit(f"{why}; it was restarted and the text tokenized again")
        for _, on_error, _, _ in waiting.values():
            if on_error is not None:
                on_error("the tokenizing server stopped; try again")
        if not self.given_up:
            self.restarted.emit()
