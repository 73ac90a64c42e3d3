"""Work off the UI thread: the editor's text tokenized by the tokenizing server, and any other
slow job of the window's own (reading a file).

`TokenizeService` turns a document's edits into `Tokenize` requests to the server. Edits are
debounced by a timer (0 ms by default: it coalesces the edits of one event-loop turn, such as a
paste or a many-step undo). Each request gets the next generation number and carries the edits
since the previous one; the server re-encodes only around them and answers with what changed,
which the service splices into its copy of the document's tokens (`DocumentTokens`) in the thread
that reads the pipe. Results of old generations are spliced in but not shown. `run_job` runs any
function in the global thread pool and reports progress, the result or the error through signals.

Workers never touch widgets: they emit signals, and the UI thread acts on them.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from typing import Callable

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QObject, QThreadPool, QTimer, Signal

from tokexplorer.core.tokenizer import DisallowedSpecialError, TokexplorerError, native_errors, native_panic
from tokexplorer.server import protocol as p
from tokexplorer.server.catalog import TokenizerCatalog
from tokexplorer.server.document_tokens import DocumentTokens, OutOfStep
from tokexplorer.gui.services.server_link import ServerLink
from tokexplorer.server.tokenized import Tokenized

HUGE_TEXT = 5_000_000  # UTF-16 units: above this, edits wait for a pause in the typing
HUGE_TEXT_DEBOUNCE_MS = 400

# The special-token policies the window offers.
POLICIES = ("refuse", "all", "none")
_documents = itertools.count(1)  # each service's document number on the server


def as_error(panic: BaseException, what: str) -> TokexplorerError:
    """A panic inside a library's native core as the error the user sees."""
    try:
        with native_errors(what):
            raise panic
    except TokexplorerError as exc:
        return exc


def report_bug(exc: BaseException, where: str, *, announce: bool = True) -> str:
    """Log an unexpected exception (with its traceback) through the crash handler; the message."""
    from tokexplorer.gui.services.crash import log_exception

    return log_exception(exc, where, announce=announce)


class TokenizeService(QObject):
    """Debounced, generation-numbered tokenization of one document's text by the server."""

    result = Signal(object)  # Tokenized of the latest generation
    refused = Signal(object)  # DisallowedSpecialError of the latest generation
    failed = Signal(str)  # a message for the user
    busy = Signal(str)  # what the server is doing for us; "" when idle

    def __init__(self, link: ServerLink, catalog: TokenizerCatalog, text_source: Callable[[bool], p.TextDelta],
                 settings_source: Callable[[], tuple[str, str]], *, debounce_ms: int = 0, parent=None):
        super().__init__(parent)
        self._link = link
        self._catalog = catalog
        self._text_source = text_source  # (full) -> TextDelta since the last call, in the UI thread
        self._settings_source = settings_source  # () -> (tokenizer name, policy)
        self.doc = next(_documents)
        self._tokens = DocumentTokens()
        self.generation = 0  # of the latest request
        self.completed = 0  # latest generation whose answer reached the UI
        self.submitted_at = 0.0  # perf_counter() of the latest request
        self._lost_change = False  # a result was dropped since the last one delivered
        self._shown = ""  # the tokenizer of the last result shown
        self._closed = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._debounce_ms = debounce_ms
        self._timer.timeout.connect(self.submit)
        link.restarted.connect(self._on_restarted)

    @property
    def idle(self) -> bool:
        """No request waiting or running."""
        return not self._timer.isActive() and self.completed == self.generation

    def awaited(self, now: float, within_s: float) -> bool:
        """An answer is due soon: a request is about to go (no debounce) or went out less than
        `within_s` before `now` (perf_counter) and has not been answered."""
        if self._timer.isActive():
            return self._timer.interval() == 0
        return self.completed != self.generation and now - self.submitted_at < within_s

    def schedule(self, length16: int = 0) -> None:
        """The text (now `length16` UTF-16 units long) changed: tokenize after the debounce
        interval, unless it changes again first.

        subtle: on a huge text each re-tokenization splices arrays of millions of tokens, a few
        hundred milliseconds; waiting for a pause in the typing keeps those out of the
        keystrokes (the edited lines show the previous colours meanwhile).
        """
        self._timer.start(self._debounce_ms if length16 < HUGE_TEXT else HUGE_TEXT_DEBOUNCE_MS)

    def submit(self, full: bool = False) -> int:
        """Tokenize the current text now; returns the request's generation."""
        self._timer.stop()
        if self._closed:
            return self.generation
        self.generation += 1
        self.submitted_at = time.perf_counter()
        gen = self.generation
        name, policy = self._settings_source()
        delta = self._text_source(full)
        if not self._catalog.is_loaded(name):
            # subtle: said now, not when the server starts: views that wait while the window is
            # busy (the token table) must not find it idle in the milliseconds before.
            self.busy.emit(f"loading {name}…")
        elif delta.length16 > 200_000 and (delta.text is not None or name != self._shown):
            self.busy.emit("tokenizing…")
        self._tokens.sent(gen, delta)
        self._link.ask(p.Tokenize(self.doc, gen, name, policy, delta), self._on_answer, lambda message: None,
                       prepare=self._tokens.apply, lane=("document", self.doc))
        return gen

    def wait_for_done(self, msecs: int = -1) -> bool:
        """Wait, handling events, until the latest request is answered (for shutdown and tests)."""
        clock = QElapsedTimer()
        clock.start()
        app = QCoreApplication.instance()
        while not self.idle and not self._link.given_up:
            if 0 <= msecs <= clock.elapsed():
                return False
            app.processEvents()
            time.sleep(0.001)
        return True

    def close(self) -> None:
        """The document is gone (a compare pane closed): the server forgets it."""
        self._closed = True
        self._timer.stop()
        self._link.ask(p.CloseDocument(self.doc))

    # --- answers, in the UI thread ---------------------------------------------------------

    def _on_restarted(self) -> None:
        self._tokens.reset()
        if not self._closed:
            self.submit(full=True)

    def _current(self, gen: int) -> bool:
        if gen != self.generation:
            return False  # stale: a newer request will answer
        self.completed = gen
        self.busy.emit("")
        return True

    def _on_answer(self, answer) -> None:
        if isinstance(answer, OutOfStep) or isinstance(answer, p.OutOfStep):
            if answer.__class__ is p.OutOfStep and answer.generation != self.generation:
                return  # a newer request went out: its answer will say
            self.submit(full=True)
            return
        if isinstance(answer, Tokenized):
            self._on_done(answer)
        elif isinstance(answer, p.Refused):
            if self._current(answer.generation):
                self.refused.emit(DisallowedSpecialError(answer.token, answer.position))
        elif isinstance(answer, p.Failed):
            if self._current(answer.generation):
                if answer.loaded:  # (the request's tokenizer: no newer request went out)
                    self._catalog.loaded(self._settings_source()[0])
                message = answer.message
                if answer.details:  # a bug in the server: logged like one in the window
                    from tokexplorer.gui.services.crash import log_error

                    message = log_error(message, answer.details, f"while tokenizing with {self._settings_source()[0]}",
                                        announce=False)
                self.failed.emit(message)

    def _on_done(self, tokenized: Tokenized) -> None:
        if not self._current(tokenized.generation):
            # subtle: the next result's changed range is relative to this dropped one, so the
            # views must treat the next result as a change of everything.
            self._lost_change = True
            return
        if self._lost_change and tokenized.changed is not None:
            tokenized = dataclasses.replace(tokenized, changed=None)
        self._lost_change = False
        name = self._shown = tokenized.tokenizer
        if self._catalog.info(name) is None:  # the server has loaded it: learn what it is
            self._link.ask(p.Describe(name), lambda info: self._catalog.loaded(name, info), lambda message: None)
        self._catalog.loaded(name)
        self.result.emit(tokenized)


class JobSignals(QObject):
    progress = Signal(int, int)  # done, total
    result = Signal(object)
    error = Signal(object)  # the exception
    finished = Signal()
    reports_progress = False  # whether `progress` has a receiver (to disconnect it afterwards)


def _unless_closed(fn, *args) -> None:
    """Run fn; if its window (and so the QObject whose signals it emits) was deleted meanwhile,
    there is nobody left to tell: drop the answer instead of printing a traceback."""
    try:
        fn(*args)
    except RuntimeError as exc:
        if "Signal source has been deleted" not in str(exc):
            raise


def _run(fn: Callable[[Callable[[int, int], None]], object], signals: JobSignals) -> None:
    """fn(progress) in a pool thread; its result or error, then `finished`, go out as signals."""
    try:
        value = fn(signals.progress.emit)
    except BaseException as exc:  # every error goes to the one handler the caller connected
        if native_panic(exc):  # subtle: not an Exception; uncaught, it would end the thread
            exc = as_error(exc, "a tokenizer")
        elif not isinstance(exc, Exception):
            raise
        elif not isinstance(exc, TokexplorerError):
            report_bug(exc, "in a background job")
        signals.error.emit(exc)
    else:
        signals.result.emit(value)
    signals.finished.emit()


_running: set[JobSignals] = set()  # keeps each job's signals alive until it has finished


def run_job(fn: Callable[[Callable[[int, int], None]], object], *, on_result: Callable[[object], None],
            on_error: Callable[[Exception], None],
            on_progress: Callable[[int, int], None] | None = None) -> JobSignals:
    """Run fn(progress) in the global thread pool; the callbacks run in the UI thread."""
    signals = JobSignals()
    signals.result.connect(on_result)
    signals.error.connect(on_error)
    signals.reports_progress = on_progress is not None
    if on_progress is not None:
        signals.progress.connect(on_progress)
    _running.add(signals)
    signals.finished.connect(lambda: _forget(signals))
    # subtle: a QRunnable of our own would have to outlive its run (autoDelete off, or its signals
    # die with it), and PySide then keeps it, and all it refers to, for ever; a plain callable is
    # wrapped in a runnable the pool deletes.
    QThreadPool.globalInstance().start(lambda: _unless_closed(_run, fn, signals))
    return signals


def _forget(signals: JobSignals) -> None:
    """Let a finished job go, with everything its callbacks refer to.

    subtle: a connection holds its Python callable from the C++ side, where the garbage collector
    cannot see it; the `finished` lambda refers to the signals, so the cycle (and every result the
    callbacks' closures hold: a text, its encoding, its chunk list) would live for ever unless the
    connections are cut.
    """
    for signal in (signals.result, signals.error, signals.finished):
        signal.disconnect()
    if signals.reports_progress:
        signals.progress.disconnect()
    _running.discard(signals)
