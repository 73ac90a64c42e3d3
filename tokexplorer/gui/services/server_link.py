"""The window's link to the tokenizing server: `ask(request, ...)` sends a request of
`server.protocol` and calls back in the UI thread with its answer, its error message or its
progress.

One server process serves every window of the application (`_Server`): it starts with the first
link and ends when the application quits, so a second window (or the next test) finds the
built-in tokenizers loaded. Request ids are unique across links, and each answer goes back to the
link that asked.

A `prepare` function given with a request runs on its answer in the thread that reads the pipe,
before the UI thread sees it (the editor's services splice token deltas there, so the UI thread
only swaps in the result).

If the server dies, a new one is started, every request still waiting is told it failed, the new
server is sent the tokenizer files and trained tokenizers the old one held (`remember`), and each
link emits `restarted` (each document then sends its whole text again) and `status` with a message
for the status bar. A server that dies again within `RESTART_WINDOW_S` of its start is not started
again: `status` says so and requests fail at once.
"""

from __future__ import annotations

import atexit
import collections
import itertools
import threading
import time
import weakref
from typing import Callable

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal
from shiboken6 import isValid

from tokexplorer.server import protocol as p
from tokexplorer.server.client import ServerProcess

RESTART_WINDOW_S = 10.0


class _Server:
    """The one server process of the application, and the links that use it."""

    def __init__(self) -> None:
        self.ids = itertools.count(1)
        self.lock = threading.Lock()
        self.owners: dict[int, "ServerLink"] = {}  # rid -> the link that asked
        self.replay: list[object] = []  # registrations a new server must be told again
        self.links: weakref.WeakSet[ServerLink] = weakref.WeakSet()
        self.restarts = 0
        self.given_up = False
        self.process: ServerProcess | None = None
        self.started_at = 0.0
        self.relay: _Relay | None = None

    def ensure(self) -> None:
        if self.process is not None and not self.process.alive:  # died while no window was left to tell
            self.process.close(timeout=0.1)
            self.process = None
        if self.relay is None:
            self.relay = _Relay()
        if self.process is None and not self.given_up:
            self.started_at = time.monotonic()
            self.process = ServerProcess(self.on_message, self.on_lost)
            if self.restarts == 0:
                # subtle: before multiprocessing's own exit handler ends the process, so that its
                # going is not taken for a crash
                atexit.register(self.close)
                app = QCoreApplication.instance()
                if app is not None:
                    app.aboutToQuit.connect(self.close)

    def close(self) -> None:
        if self.process is not None:
            self.process.close()
            self.process = None

    # --- the reading thread --------------------------------------------------------------

    def on_message(self, message) -> None:
        with self.lock:
            link = (self.owners.get(message.rid) if isinstance(message, p.Progress)
                    else self.owners.pop(message.rid, None))
        if link is not None:
            self.relay.arrived.emit(link, message, link._prepared(message))

    def on_lost(self, why: str) -> None:
        with self.lock:
            self.owners.clear()
        self.relay.lost.emit(why)  # handled in the UI thread (`restart`)

    # --- the UI thread -------------------------------------------------------------------

    def restart(self, why: str) -> None:
        if not any(isValid(link) for link in list(self.links)):
            return  # no window is left to tell: the next link's `ensure` starts a new server
        dead, self.process = self.process, None
        if dead is not None:
            dead.close(timeout=0.1)
        if self.restarts and time.monotonic() - self.started_at < RESTART_WINDOW_S:
            self.given_up = True
            message = (f"{why}, again: tokenizing is off until tokexplorer is restarted "
                       "(your text is kept; save it)")
        else:
            self.restarts += 1
            self.ensure()
            for request in self.replay:
                self.process.send(p.Call(next(self.ids), request))
            message = f"{why}; it was restarted and the text tokenized again"
        for link in list(self.links):
            if isValid(link):
                link._on_restarted(message)
            else:  # its window was deleted: Python still holds the wrapper
                self.links.discard(link)


class _Relay(QObject):
    """Carries what the reading thread reads to the UI thread. It lives as long as the process:
    a signal emitted from another thread on a link that the UI thread is deleting at that moment
    could crash, so the reading thread emits only here, and the UI thread checks that the link
    is still alive before handing it the message."""

    arrived = Signal(object, object, object)  # (link, message, prepared value)
    lost = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.arrived.connect(self._deliver)  # (slots of this object: queued to the UI thread)
        self.lost.connect(self._restart)

    def _deliver(self, link: "ServerLink", message, prepared) -> None:
        if isValid(link):
            link._dispatch(message, prepared)

    def _restart(self, why: str) -> None:
        _server.restart(why)


_server = _Server()


class ServerLink(QObject):
    restarted = Signal()
    status = Signal(str)  # a message for the status bar

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._lock = threading.Lock()
        # rid -> (on_result, on_error, on_progress, prepare)
        self._waiting: dict[int, tuple] = {}
        # a `lane` -> the ids of its requests still waiting, oldest first (see `ask`)
        self._lanes: dict[object, collections.deque[int]] = {}
        _server.links.add(self)
        _server.ensure()

    @property
    def given_up(self) -> bool:
        return _server.given_up

    @property
    def restarts(self) -> int:
        return _server.restarts

    @property
    def pid(self) -> int | None:
        return None if _server.process is None else _server.process.pid

    def ask(self, request, on_result: Callable[[object], None] | None = None,
            on_error: Callable[[str], None] | None = None, *,
            on_progress: Callable[[int, int], None] | None = None,
            prepare: Callable[[object], object] | None = None, lane: object = None) -> int:
        """Send `request`; the callbacks run in the UI thread. Returns the request's id.

        `lane`: requests the server answers in order and may leave unanswered when a later one of
        the same lane supersedes them (a document's `Tokenize`): an answer in the lane drops the
        callbacks of the lane's earlier requests, which will never be answered."""
        if _server.given_up or _server.process is None:
            if on_error is not None:
                QTimer.singleShot(0, lambda: on_error("the tokenizing server has stopped; restart tokexplorer"))
            return 0
        with _server.lock:  # (before the answer can arrive)
            rid = next(_server.ids)
            _server.owners[rid] = self
            with self._lock:
                self._waiting[rid] = (on_result, on_error, on_progress, prepare)
                if lane is not None:
                    self._lanes.setdefault(lane, collections.deque()).append(rid)
        _server.process.send(p.Call(rid, request))
        return rid

    def remember(self, request) -> None:
        """A registration (a tokenizer file opened, a tokenizer trained) to send again to a
        restarted server, before anything else."""
        _server.replay.append(request)

    def forget(self, rid: int) -> None:
        """Drop the callbacks of a request whose answer no longer matters."""
        with self._lock:
            self._waiting.pop(rid, None)

    def kill(self) -> None:
        """End the server process now, as a crash would (for tests)."""
        if _server.process is not None:
            _server.process.kill()

    # --- the reading thread --------------------------------------------------------------

    def _prepared(self, message) -> object:
        """What the request's `prepare` makes of its answer (None without one). Only the link's
        Python state is read, so this holds even while the UI thread deletes the link."""
        if not isinstance(message, p.Answer):
            return None
        with self._lock:
            entry = self._waiting.get(message.rid)
        if entry is None or entry[3] is None:
            return None
        return entry[3](message.value)

    # --- the UI thread -------------------------------------------------------------------

    def _dispatch(self, message, prepared) -> None:
        with self._lock:
            entry = (self._waiting.get(message.rid) if isinstance(message, p.Progress)
                     else self._waiting.pop(message.rid, None))
            gone = () if isinstance(message, p.Progress) else self._superseded(message.rid)
        if gone:
            with _server.lock:  # (not within the link's lock: `ask` takes the two the other way round)
                for rid in gone:
                    _server.owners.pop(rid, None)
        if entry is None:
            return
        on_result, on_error, on_progress, prepare = entry
        if isinstance(message, p.Progress):
            if on_progress is not None:
                on_progress(message.done, message.total)
        elif isinstance(message, p.Error):
            text = message.message
            if message.details:  # a bug in the server: logged, and announced, like one in the window
                from tokexplorer.gui.services.crash import log_error

                text = log_error(text, message.details, "in the tokenizing server")
            if on_error is not None:
                on_error(text)
        elif on_result is not None:
            on_result(prepared if prepare is not None else message.value)

    def _superseded(self, rid: int) -> list[int]:
        """Request `rid` has its answer: the earlier requests of its lane, whose callbacks are
        dropped here (under the link's lock)."""
        for rids in self._lanes.values():
            if rids and rids[0] <= rid and rid in rids:
                gone = []
                while rids[0] != rid:
                    gone.append(rids.popleft())
                    self._waiting.pop(gone[-1], None)
                rids.popleft()
                return gone
        return []

    def _on_restarted(self, message: str) -> None:
        with self._lock:
            waiting, self._waiting = self._waiting, {}
            self._lanes = {}
        self.status.emit(message)
        for _, on_error, _, _ in waiting.values():
            if on_error is not None:
                on_error("the tokenizing server stopped; try again")
        if not _server.given_up:
            self.restarted.emit()
