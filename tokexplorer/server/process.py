"""The tokenizing server's process: `serve(conn)` reads requests from the window's pipe and answers
them until the window says `Stop` or goes away.

Threads: the main thread reads the pipe. Each document's `Tokenize` requests queue for that
document's own thread, which applies every request's edits in order but tokenizes only for the
newest one waiting (a request a newer one superseded is not answered); other requests run in a
small pool. Answers are sent under one lock, so each is whole on the pipe; a book's worth of
tokens is sent as raw frames after its answer (`columns.frames_of`), not pickled.

A request that fails with a user error (a bad file, a refused special token) is answered with its
message; anything else is a bug, answered with its summary and traceback, which the window logs
(`gui.crash`) and shows. Nothing here ends the process but `Stop` or the window's pipe closing.
"""

from __future__ import annotations

import collections
import dataclasses
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection

from tokexplorer.core.tokenizer import DisallowedSpecialError
from tokexplorer.server import protocol as p
from tokexplorer.server.columns import BULK_TOKENS, framed, frames_of
from tokexplorer.server.documents import Document, user_error
from tokexplorer.server.handlers import handle
from tokexplorer.server.tokenizers import Tokenizers

QUERY_THREADS = 2


class Server:
    """The server's state: tokenizers, documents, and the pipe back to the window."""

    def __init__(self, conn: Connection):
        self.conn = conn
        self.tokenizers = Tokenizers()
        self.documents: dict[int, Document] = {}
        self._send_lock = threading.Lock()
        self._queues: dict[int, collections.deque] = {}
        self._wake: dict[int, threading.Condition] = {}
        self._pool = ThreadPoolExecutor(QUERY_THREADS, thread_name_prefix="query")
        self.stopping = False

    def send(self, message) -> None:
        frames = ()
        if (isinstance(message, p.Answer) and isinstance(message.value, p.TokensChanged)
                and len(message.value.new) >= BULK_TOKENS):
            # subtle: a book's tokens pickled whole would be a second copy of them in each process
            spec, frames = frames_of(message.value.new)
            message = p.Answer(message.rid, dataclasses.replace(message.value, new=spec))
        elif isinstance(message, p.Answer):  # a book's chunk spans, likewise
            value, frames = framed(message.value)
            if frames:
                message = p.Answer(message.rid, value)
        with self._send_lock:
            try:
                self.conn.send(message)
                for frame in frames:
                    self.conn.send_bytes(frame)
            except (OSError, EOFError, BrokenPipeError):
                self.stopping = True  # the window has gone

    # --- reading ---------------------------------------------------------------------------

    def run(self) -> None:
        while not self.stopping:
            try:
                call = self.conn.recv()
            except (EOFError, OSError):
                break
            if isinstance(call, p.Stop):
                break
            request = call.request
            if isinstance(request, (p.OpenTokenizerFile, p.AddTrained)):
                self.tokenizers.register(request)  # now: a document's next request may use it
            if isinstance(request, p.Tokenize):
                self._queue(call)
            else:
                self._pool.submit(self._answer, call)
        self.stopping = True
        for wake in list(self._wake.values()):
            with wake:
                wake.notify()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _queue(self, call: p.Call) -> None:
        doc = call.request.doc
        if doc not in self._queues:
            self._queues[doc] = collections.deque()
            self._wake[doc] = threading.Condition()
            self.documents.setdefault(doc, Document(doc))
            threading.Thread(target=self._document_loop, args=(doc,), daemon=True, name=f"doc-{doc}").start()
        wake = self._wake[doc]
        with wake:
            self._queues[doc].append(call)
            wake.notify()

    # --- a document's requests ----------------------------------------------------------

    def _document_loop(self, doc: int) -> None:
        queue, wake = self._queues[doc], self._wake[doc]
        while not self.stopping:
            with wake:
                while not queue and not self.stopping:
                    wake.wait()
                calls = list(queue)
                queue.clear()
            if calls:
                self._tokenize(doc, calls)

    def _tokenize(self, doc: int, calls: list[p.Call]) -> None:
        document = self.documents.setdefault(doc, Document(doc))
        in_step = True
        for call in calls:  # every request's edits, even a superseded one's: the next builds on them
            in_step = document.apply(call.request) and in_step
        call = calls[-1]
        request = call.request
        if not in_step:
            self.send(p.Answer(call.rid, document.out_of_step(request)))
            return
        try:
            tok = self.tokenizers.get(request.tokenizer)
            answer = document.tokenize(request, tok)
        except DisallowedSpecialError as exc:
            answer = p.Refused(doc, request.generation, exc.token, exc.position)
        except BaseException as exc:  # noqa: B902 - a library's panic is not an Exception
            error = user_error(exc)
            if error is None:
                if not isinstance(exc, Exception):
                    raise
                answer = p.Failed(doc, request.generation, *_bug(exc))
            else:
                answer = p.Failed(doc, request.generation, str(error))
            document.forget()  # the next answer starts afresh
        self.send(p.Answer(call.rid, answer))

    # --- other requests ------------------------------------------------------------------

    def _answer(self, call: p.Call) -> None:
        def progress(done: int, total: int) -> None:
            self.send(p.Progress(call.rid, done, total))

        try:
            value = handle(call.request, self, progress)
        except BaseException as exc:  # noqa: B902
            error = user_error(exc)
            if error is None:
                if not isinstance(exc, Exception):
                    raise
                self.send(p.Error(call.rid, *_bug(exc)))
            else:
                self.send(p.Error(call.rid, str(error)))
        else:
            self.send(p.Answer(call.rid, value))


def _bug(exc: BaseException) -> tuple[str, str]:
    """A bug's one-line summary and its traceback, for the window to log and show."""
    return f"{type(exc).__name__}: {exc}", "".join(traceback.format_exception(exc))


def serve(conn: Connection) -> None:
    """The server process's entry point (started with the `spawn` method)."""
    server = Server(conn)
    try:
        server.run()
    finally:
        conn.close()
