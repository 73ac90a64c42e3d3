"""Work off the UI thread: tokenizing the editor's text, and any other slow job (reading a file).

`TokenizeService` turns edits into tokenization requests. Edits are debounced by a timer (0 ms
by default: it coalesces the edits of one event-loop turn, such as a paste or a many-step undo;
typing faster than the worker is absorbed by the queue instead). Each request gets the next
generation number; a single worker thread runs them in order and skips any request that a newer
one has already superseded, and results of old generations are dropped on arrival. Requests carry
the edits since the previous one, which the worker applies to its own copy of the text
(`positions.TextMirror`), and the worker keeps the previous encoding so an edit re-encodes only the
chunks around it (`Retokenizer`). `run_job` runs any function in the global thread pool and reports progress, the
result or the error through signals.

Workers never touch widgets: they emit signals, and the UI thread acts on them.
"""

from __future__ import annotations

import dataclasses
import sys
import time
import traceback
from typing import Callable, NamedTuple

import numpy as np
from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal

from ..core.encoding import Encoding
from ..core.incremental import IncrementalEncoder
from ..core.streaming import whole_text_refusal
from ..core.tokenizer import (DisallowedSpecialError, Tokenizer, TokexplorerError, native_errors, native_panic,
                              special_spans)
from .catalog import TokenizerCatalog
from ..core.token_colours import colour_indices, update_colours
from ..core.positions import TextMirror, code_points
from .tokenized import Tokenized

HUGE_TEXT = 5_000_000  # UTF-16 units: above this, edits wait for a pause in the typing
HUGE_TEXT_DEBOUNCE_MS = 400

# The special-token policies the window offers -> allowed_special for the core.
POLICIES: dict[str, object] = {"refuse": None, "all": "all", "none": "none"}
PARKED = 3  # encoders kept for switching back to their tokenizers
PARKED_TOKENS = 2_000_000  # ...of texts up to this many tokens (a few MB of text)


class Retokenizer:
    """Encodes the editor's text, re-encoding only around the edit when the tokenizer and policy are
    the ones of the previous call (`IncrementalEncoder`), and splicing the colours likewise.

    Under "refuse" the text is encoded as plain text (allowed_special "none", which gives the same
    tokens wherever no special token is spelled) and the places that spell one are reported
    alongside, so a refusal keeps the picture instead of emptying it.

    The encoders of the last few tokenizers used are kept (up to PARKED, of texts up to
    PARKED_TOKENS tokens), so that switching back to one brings its tokens up to date with an
    edit, or not at all, instead of encoding the whole text again.

    Not thread-safe: the service calls it from its single worker thread only.
    """

    def __init__(self) -> None:
        self._encoder: IncrementalEncoder | None = None
        self._policy = ""
        self._colours = np.zeros(0, dtype=np.uint8)
        # (tokenizer, policy) -> (its encoder, its colours): the ones switched away from, oldest first
        self._parked: dict[tuple[int, str], tuple[IncrementalEncoder, np.ndarray]] = {}
        self._spans: tuple[tuple[int, int], ...] | None = None  # special-token spans of the last text
        self._length = 0  # the last text's length

    def run(self, tok: Tokenizer, policy: str, text: str, *, fresh: bool = False
            ) -> tuple[Encoding, np.ndarray, tuple[int, int] | None, tuple[tuple[int, int], ...]]:
        """(encoding, colour indices, code-point range whose tokens or colours changed or None for
        everything, code-point spans that spell a special token the policy refuses).

        `fresh`: the text is a new one (a file was opened), not worth comparing with the last.
        """
        encoding, colours, changed = self._encode(tok, "none" if policy == "refuse" else policy, text, fresh)
        if policy != "refuse":
            self._spans = None  # the next "refuse" searches the whole text
            return encoding, colours, changed, ()
        return encoding, colours, changed, self._special_spans(tok, text, changed)

    def _special_spans(self, tok: Tokenizer, text: str, changed: tuple[int, int] | None):
        """Where `text` spells a special token: found again only around the changed range (a
        search of a 1 MB text for every special token costs ~10 ms a keystroke)."""
        specials = tok.special_tokens
        old, old_length = self._spans, self._length
        self._length = len(text)
        if changed is None or old is None or not specials:
            self._spans = special_spans(specials, text)
            return self._spans
        longest = max(map(len, specials))
        c0, c1 = changed
        lo = max(0, c0 - longest)
        shift = len(text) - old_length
        # Spans starting before lo end before c0 and those starting from c1 on lie after the
        # changed range: both in text that did not change.
        middle = tuple((s + lo, e + lo) for s, e in special_spans(specials, text[lo:c1 + longest]) if s + lo < c1)
        self._spans = (tuple(sp for sp in old if sp[0] < lo) + middle
                       + tuple((s + shift, e + shift) for s, e in old if s + shift >= c1))
        return self._spans

    def _encode(self, tok: Tokenizer, policy: str, text: str, fresh: bool):
        encoder = self._encoder
        switched = encoder is None or encoder.tokenizer is not tok or policy != self._policy
        if fresh:
            self._parked.clear()
        elif switched:
            back = self._parked.pop((id(tok), policy), None)  # (before parking: it must not be evicted)
            if encoder is not None:
                self._park(encoder, self._policy, self._colours)
            if back is not None:  # (the encoder holds its tokenizer: the id is still its)
                self._encoder, self._policy, self._colours = back[0], policy, back[1]
                encoding, colours, _ = self._edit(back[0], text)
                return encoding, colours, None  # another tokenizer was shown: everything changed
        if fresh or switched:
            encoder = IncrementalEncoder(tok, text, allowed_special=POLICIES[policy])
            self._encoder, self._policy = encoder, policy
            encoding = encoder.encoding
            self._colours = colour_indices(encoding.id_array)
            return encoding, self._colours, None
        return self._edit(encoder, text)

    def _park(self, encoder: IncrementalEncoder, policy: str, colours: np.ndarray) -> None:
        if len(encoder.encoding) > PARKED_TOKENS:
            return  # (a long text's tokens take hundreds of MB: encoded again if wanted)
        self._parked[(id(encoder.tokenizer), policy)] = (encoder, colours)
        while len(self._parked) > PARKED:
            del self._parked[next(iter(self._parked))]

    def _edit(self, encoder: IncrementalEncoder, text: str):
        encoding, changed = encoder.update(text)
        first = int(np.searchsorted(encoding.ends, changed[0], side="right"))
        stop = max(first, int(np.searchsorted(encoding.starts, changed[1], side="left")))
        self._colours, lo, hi = update_colours(self._colours, encoding.id_array, first, stop)
        if hi > lo:  # a recoloured neighbour counts as changed too
            changed = (min(changed[0], int(encoding.starts[lo])), max(changed[1], int(encoding.ends[hi - 1])))
        return encoding, self._colours, changed


def as_error(panic: BaseException, what: str) -> TokexplorerError:
    """A panic inside a library's native core as the error the user sees."""
    try:
        with native_errors(what):
            raise panic
    except TokexplorerError as exc:
        return exc


def report_bug(exc: BaseException, where: str, *, announce: bool = True) -> str:
    """Log an unexpected exception (with its traceback) through the crash handler; the message."""
    from .crash import log_exception

    return log_exception(exc, where, announce=announce)


class TextDelta(NamedTuple):
    """What a request carries: the whole text, or the edits since the previous request (UTF-16
    position, removed units, inserted text); `mark` counts the editor's edits so far. To check the
    worker's copy: `length16`, the text's length in UTF-16 units, and `probes`, bits of the text
    as (UTF-16 position, text) around the edits and elsewhere (an edit put in the wrong place
    can leave the length right and the text wrong). `soft16`: the UTF-16 positions of the text
    where the editor holds a soft break (`positions.SourceMap`), for the tokens' editor spans."""

    text: str | None
    edits: list[tuple[int, int, str]] | None
    mark: int
    length16: int
    probes: tuple[tuple[int, str], ...] = ()
    soft16: tuple[int, ...] = ()


class TokenizeService(QObject):
    """Debounced, generation-numbered tokenization of the editor's text in one worker thread."""

    result = Signal(object)  # Tokenized of the latest generation
    refused = Signal(object)  # DisallowedSpecialError of the latest generation
    failed = Signal(str)  # a message for the user
    busy = Signal(str)  # what the worker is doing; "" when idle

    # From the worker thread (queued to the UI thread): generation and payload.
    _done = Signal(int, object)
    _refused = Signal(int, object)
    _failed = Signal(int, str)
    _status = Signal(int, str)
    _resync = Signal(int)

    def __init__(self, catalog: TokenizerCatalog, text_source: Callable[[bool], TextDelta],
                 settings_source: Callable[[], tuple[str, str]], *, debounce_ms: int = 0, parent=None,
                 pool: QThreadPool | None = None):
        super().__init__(parent)
        self._catalog = catalog
        self._text_source = text_source  # (full) -> TextDelta since the last call, in the UI thread
        self._settings_source = settings_source  # () -> (tokenizer name, policy)
        # One thread, so requests run one at a time and in order (the Retokenizer is stateful);
        # several services may share one (`pool`: a one-thread pool), e.g. the compare panes.
        self._pool = pool if pool is not None else QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._retokenizer = Retokenizer()
        self._mirror = TextMirror()  # the editor's text as the worker knows it (worker thread only)
        self.generation = 0  # of the latest request
        self.completed = 0  # latest generation whose answer reached the UI
        self.submitted_at = 0.0  # perf_counter() of the latest request
        self._lost_change = False  # a result was dropped since the last one delivered
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._debounce_ms = debounce_ms
        self._timer.timeout.connect(self.submit)
        self._done.connect(self._on_done)
        self._refused.connect(self._on_refused)
        self._failed.connect(self._on_failed)
        self._status.connect(self._on_status)
        self._resync.connect(lambda gen: gen == self.generation and self.submit(full=True))

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

        subtle: on a huge text each re-tokenization splices arrays of millions of tokens in the
        worker, holding the interpreter lock for a few hundred milliseconds; waiting for a pause
        in the typing keeps those stalls out of the keystrokes (the edited lines show the previous
        colours meanwhile).
        """
        self._timer.start(self._debounce_ms if length16 < HUGE_TEXT else HUGE_TEXT_DEBOUNCE_MS)

    def submit(self, full: bool = False) -> int:
        """Tokenize the current text now; returns the request's generation."""
        self._timer.stop()
        self.generation += 1
        self.submitted_at = time.perf_counter()
        gen = self.generation
        name, policy = self._settings_source()
        delta = self._text_source(full)
        if not self._catalog.is_loaded(name):
            # subtle: said now, not when the worker starts: views that wait while the window is
            # busy (the token table) must not find it idle in the milliseconds before.
            self.busy.emit(f"loading {name}…")
        self._pool.start(lambda: _unless_closed(self._work, gen, name, policy, delta))
        return gen

    def wait_for_done(self, msecs: int = -1) -> bool:
        """Block until the worker is idle (for shutdown and tests)."""
        return self._pool.waitForDone(msecs)

    # --- worker thread -------------------------------------------------------------------

    def _work(self, gen: int, name: str, policy: str, delta: TextDelta) -> None:
        # Every request's edits are applied, even a superseded one's: the next builds on them.
        try:
            if delta.text is not None:
                self._mirror.reset(delta.text)
            else:
                for position, removed, inserted in delta.edits:
                    self._mirror.apply(position, removed, inserted)
            in_step = self._mirror.len16 == delta.length16 and self._mirror.agrees(delta.probes)
        except Exception:  # a bug, but one the user need not see: the whole text fixes it
            traceback.print_exc(file=sys.stderr)
            in_step = False
        if not in_step and (delta.text is None or self._mirror.len16 > delta.length16):
            what = (f"{self._mirror.len16} != {delta.length16} UTF-16 units" if self._mirror.len16 != delta.length16
                    else "same length, other text")
            print(f"tokexplorer: the worker's copy of the text is out of step ({what}); resending it",
                  file=sys.stderr)
            self._resync.emit(gen)
            return
        if not in_step:
            # subtle: the whole text disagrees too (Qt holds units Python cannot see, such as a
            # lone surrogate put in by other code than the editor's paste); asking again would
            # loop for ever, so tokenize what Python sees and say so.
            print(f"tokexplorer: the editor's text has {delta.length16 - self._mirror.len16} UTF-16 "
                  "units Python cannot see; positions after them may be off", file=sys.stderr)
        if gen != self.generation:
            return  # a newer request is queued behind this one
        text, mark = self._mirror.text, delta.mark
        try:
            tok = self._catalog.get(name)  # (loading it, if it is not: `submit` said so)
            if gen != self.generation:
                return
            too_big = whole_text_refusal(tok, len(text))
            if too_big is not None:  # encoded whole, it would take many GB
                self._failed.emit(gen, f"{too_big}; open a part of the text, or pick a tokenizer that "
                                       "reads a text in pieces (gpt2, cl100k_base, o200k_base)")
                return
            if len(text) > 200_000:
                self._status.emit(gen, "tokenizing…")
            t0 = time.perf_counter()
            encoding, colours, changed, refused = self._retokenizer.run(tok, policy, text,
                                                                        fresh=delta.text is not None)
            tokenized = Tokenized.build(gen, name, policy, encoding, colours, mark=mark, changed=changed,
                                        seconds=time.perf_counter() - t0, refused=refused,
                                        soft=code_points(text, delta.soft16))
        except DisallowedSpecialError as exc:
            self._refused.emit(gen, exc)
        except TokexplorerError as exc:
            self._failed.emit(gen, str(exc))
        except BaseException as exc:
            if native_panic(exc):  # subtle: not an Exception; uncaught, it would end the thread
                self._failed.emit(gen, str(as_error(exc, name)))
                return
            if not isinstance(exc, Exception):
                raise
            # a bug: keep the window alive, tell the user, log the details
            self._failed.emit(gen, report_bug(exc, f"while tokenizing with {name}", announce=False))
        else:
            self._done.emit(gen, tokenized)

    # --- back in the UI thread -----------------------------------------------------------

    def _current(self, gen: int) -> bool:
        if gen != self.generation:
            return False  # stale: a newer request will answer
        self.completed = gen
        self.busy.emit("")
        return True

    def _on_done(self, gen: int, tokenized: Tokenized) -> None:
        if not self._current(gen):
            # subtle: the next result's changed range is relative to this dropped one, so the
            # views must treat the next result as a change of everything.
            self._lost_change = True
            return
        if self._lost_change and tokenized.changed is not None:
            tokenized = dataclasses.replace(tokenized, changed=None)
        self._lost_change = False
        self.result.emit(tokenized)

    def _on_refused(self, gen: int, exc: DisallowedSpecialError) -> None:
        if self._current(gen):
            self.refused.emit(exc)

    def _on_failed(self, gen: int, message: str) -> None:
        if self._current(gen):
            self.failed.emit(message)

    def _on_status(self, gen: int, message: str) -> None:
        if gen == self.generation:
            self.busy.emit(message)


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
