"""Training in the background for the window: one spawned process per service at a time, its
reports turned into signals; the trained tokenizer is built, and the sweep's reference points are
counted, by the tokenizing server (the window holds no tokenizer).

Why a process: training holds the interpreter lock for whole merges; in a thread the window's
event loop would be late by up to tens of milliseconds (testing-notes.md). The child
(`core.training.child.main`) sends merge records in batches at most every 100 ms; a socket notifier on
the pipe wakes the UI thread only when a batch is there. Starting the child (which writes the
request, possibly a whole text, into a pipe) runs in a pool thread too. `ChildService` holds what
the two services share: start, drain, end (`shutdown`: the window calls it when it closes; a child
whose window dies without calling it exits by itself, see `core.child_process.exit_with_parent`).

`TrainingService` signals (the plots and the workbench listen to the same ones):
- `phase(what, done, total)`: what the trainer does; done = total = -1 when it cannot count.
- `started(merges, corpus_bytes)`: BPE has split the corpus and starts merging.
- `records(list[MergeRecord])`: the merges just learned, in order: rank (the new id), pair, the new
  token's bytes, the pair's count, and the corpus's length in tokens after the merge.
- `finished(TrainingResult)`: the tokenizer of everything learned (on Cancel: of the merges so far),
  offered to the server and the picker (through the `offer` function `start` was given, the
  state's `add_trained`) and described by the server: its name and `TokenizerInfo`.
- `failed(message)`: a message for the user; nothing was learned.

`SweepService` (the Plots panel's vocab-size sweep): `phase`, `progress(done, total, curve)` with
the training text's compression curve so far, `finished(Sweep)` with the reference points
counted (a `ReferencePoints` request to the server), `failed(message)`; Cancel ends the child (a
sweep keeps nothing half done).

It does not touch widgets, and reaches the catalog only through the `offer` function it is given.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QCoreApplication, QObject, QSocketNotifier, QTimer, Signal
from shiboken6 import isValid

from tokexplorer.core.training.bpe import MergeRecord, assign_special_ids
from tokexplorer.core.analysis.sweep import CompressionCurve, Sweep
from tokexplorer.core.patterns import NAMED_PATTERNS
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.server.protocol import ReferencePoints, TokenizerInfo, TrainedBpe, TrainedSentencePiece
from tokexplorer.core.training.child import main as child_main
from tokexplorer.core.training.runner import SweepRequest, TrainingRequest
from tokexplorer.gui.services.worker import run_job

if TYPE_CHECKING:
    from tokexplorer.gui.services.server_link import ServerLink

# (base name, trained tokenizer, on_done(info), on_error(message)) -> its name in the picker:
# the state's `add_trained`.
Offer = Callable[[str, "TrainedBpe | TrainedSentencePiece", Callable[[TokenizerInfo], None],
                  Callable[[str], None]], str]


DRAIN_SECONDS = 0.008  # of reports handled in one turn of the window's event loop


def while_alive(owner: QObject, fn):
    """`fn`, or nothing once the Qt object `owner` is deleted: a worker's answer may arrive after
    its window has closed."""
    def call(*args):
        if isValid(owner):
            fn(*args)
    return call


@dataclass(frozen=True)
class TrainingResult:
    request: TrainingRequest
    name: str  # the trained tokenizer's name in the picker (and in the server)
    info: TokenizerInfo  # what the server says of it
    stopped: bool  # cancelled: the tokenizer holds the merges learned until then
    seconds: float  # from Train to the result


class ChildService(QObject):
    """One child process at a time running `core.training.child.main(request, pipe)`; every message it
    sends goes to `_handle`, in the UI thread. Subclasses start runs with `_spawn` and end them with
    `_finish_run` (or `_fail`)."""

    phase = Signal(str, int, int)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._ctx = multiprocessing.get_context("spawn")
        self._process = None
        self._conn = None
        self._notifier: QSocketNotifier | QTimer | None = None  # wakes _drain when the pipe has data
        self._request = None  # of the run under way, or None
        self._t0 = 0.0
        self._generation = 0  # of the current run: answers of a cancelled start are dropped
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    @property
    def running(self) -> bool:
        return self._request is not None

    def shutdown(self) -> None:
        """End any child (the window is closing)."""
        self._generation += 1
        self._end_child()
        if self.running:
            self._finish_run()

    def _spawn(self, request) -> None:
        if self.running:
            raise TokexplorerError("a training run is under way; cancel it first")
        self._generation += 1
        gen = self._generation
        self._request = request
        self._t0 = time.perf_counter()
        self.phase.emit("starting the trainer", -1, -1)

        def spawn(progress):
            parent_end, child_end = self._ctx.Pipe()
            # subtle: not a daemon, so that its corpus is counted in worker processes of its own
            # (a daemon may have no children); it ends with the window all the same: `shutdown`
            # kills it, and it exits when the window's process goes (core.child_process).
            process = self._ctx.Process(target=child_main, args=(request, child_end), daemon=False,
                                        name="tokexplorer-training")
            process.start()
            child_end.close()  # the child holds it now; EOF here means the child has gone
            return process, parent_end

        def spawned(pc) -> None:
            if isValid(self):
                self._on_spawned(gen, *pc)
            else:  # the window closed meanwhile
                pc[0].kill()

        run_job(spawn, on_result=spawned,
                on_error=while_alive(self, lambda exc: gen == self._generation
                                     and self._fail(f"cannot start training: {exc}")))

    def _finish_run(self) -> None:
        self._request = None

    def _on_spawned(self, gen: int, process, conn) -> None:
        if gen != self._generation:  # cancelled meanwhile
            process.kill()
            conn.close()
            return
        self._process, self._conn = process, conn
        if sys.platform == "win32":
            # subtle: Windows pipes are not sockets, so no notifier can watch them: poll instead.
            self._notifier = QTimer(self)
            self._notifier.setInterval(20)
            self._notifier.timeout.connect(self._drain)
            self._notifier.start()
        else:
            self._notifier = QSocketNotifier(conn.fileno(), QSocketNotifier.Type.Read, self)
            self._notifier.activated.connect(self._drain)

    def _drain(self) -> None:
        """Handle the reports waiting in the pipe (called when it is readable), for up to
        DRAIN_SECONDS: the rest on the next turn of the event loop (the notifier fires again)."""
        conn = self._conn
        until = time.perf_counter() + DRAIN_SECONDS
        try:
            while conn is not None and conn is self._conn and conn.poll() and time.perf_counter() < until:
                self._handle(conn.recv())
        except (EOFError, OSError):
            if self._conn is conn and self.running:
                self._fail("the trainer stopped unexpectedly (out of memory?)")

    def _handle(self, message: tuple) -> None:
        raise NotImplementedError

    def _fail(self, message: str) -> None:
        self._end_child()
        self._finish_run()
        self._generation += 1
        self.failed.emit(message)

    def _end_child(self) -> None:
        if self._notifier is not None:
            if isinstance(self._notifier, QTimer):
                self._notifier.stop()
            else:
                self._notifier.setEnabled(False)  # before its pipe closes
            self._notifier.deleteLater()
            self._notifier = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        process, self._process = self._process, None
        if process is not None:
            process.kill()  # it has said all it will say (or it is no longer wanted)
            # subtle: reaping waits for the kernel to free the child's memory (hundreds of ms
            # for a big corpus): never in the UI thread; unreaped, it would stay a zombie.
            threading.Thread(target=process.join, daemon=True, name="reap-trainer").start()


class TrainingService(ChildService):
    started = Signal(int, int)
    records = Signal(object)
    finished = Signal(object)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._merges: dict[tuple[int, int], int] = {}  # learned so far, in order
        self._merging = False  # the child is in its merge loop (it can stop and keep them)
        self._offer: Offer | None = None  # of the run under way
        self._unsent: list[MergeRecord] = []  # records read, not yet emitted

    @property
    def merges_so_far(self) -> int:
        return len(self._merges)

    def start(self, request: TrainingRequest, offer: Offer) -> None:
        """Train in a new child process; the answers arrive as signals. The result is handed to
        `offer` (the state's `add_trained`), which has the server build it."""
        if self.running:
            raise TokexplorerError("a training run is under way; cancel it first")
        self._merges, self._unsent = {}, []
        self._merging = False
        self._offer = offer
        self._spawn(request)

    def cancel(self) -> None:
        """Stop: while merging, keep what was learned (the child stops between merges); before
        that (reading, splitting, SentencePiece's training) nothing is learned yet: end the child."""
        if not self.running:
            return
        if self._merging and self._conn is not None:
            try:
                self._conn.send("stop")
                return
            except OSError:
                pass
        self._end_child()
        self._finish_run()
        self._generation += 1
        self.failed.emit("cancelled before anything was learned")

    def _end_child(self) -> None:
        self._merging = False
        super()._end_child()

    # --- the child's reports -------------------------------------------------------------

    def _send_records(self) -> None:
        if self._unsent:
            batch, self._unsent = self._unsent, []
            self.records.emit(batch)

    def _handle(self, message: tuple) -> None:
        kind = message[0]
        if kind == "records":
            batch: list[MergeRecord] = message[1]
            for r in batch:
                self._merges[r.pair] = r.rank
            # (the batches read in one turn of the event loop go out together: the workbench's log
            # and the live plot update once a turn, not once a batch)
            if not self._unsent:
                QTimer.singleShot(0, self, self._send_records)
            self._unsent += batch
            return
        self._send_records()  # (every record before what follows it)
        if kind == "phase":
            self.phase.emit(*message[1:])
        elif kind == "start":
            self._merging = True
            self.started.emit(*message[1:])
        elif kind == "bpe_done":
            self._build_bpe(stopped=message[1])
        elif kind == "sp_done":
            self._build_sentencepiece(message[1])
        elif kind == "error":
            self._fail(message[1])

    # --- the result ----------------------------------------------------------------------

    def _build_bpe(self, *, stopped: bool) -> None:
        request, merges = self._request, self._merges
        self._end_child()
        specials = assign_special_ids(list(request.special_tokens), 256 + len(merges))
        description = "byte-level BPE trained here, " + ("bytes only" if request.pattern is None else "regex split")
        n_vocab = 256 + len(merges) + len(specials)
        if stopped or n_vocab != request.vocab_size:  # named by what it holds, not what was asked
            self._request = request = request._replace(name=run_name(request, n_vocab, stopped=stopped))
        self._build(TrainedBpe(merges, request.pattern, specials, description), stopped)

    def _build_sentencepiece(self, model: bytes) -> None:
        request = self._request
        self._end_child()
        description = f"SentencePiece {request.sp_options.get('model_type', 'bpe')} trained here"
        self._build(TrainedSentencePiece(model, description), False)

    def _build(self, trained: TrainedBpe | TrainedSentencePiece, stopped: bool) -> None:
        """Offer the result; the server builds it (in its process) and describes it."""
        gen, request = self._generation, self._request
        self.phase.emit("building the tokenizer", -1, -1)

        def done(info: TokenizerInfo) -> None:  # info.name: its name in the picker
            if gen == self._generation:
                self._finish_run()
                self.phase.emit("stopped" if stopped else "done", 1, 1)
                self.finished.emit(TrainingResult(request, info.name, info, stopped, time.perf_counter() - self._t0))

        self._offer(request.name, trained, while_alive(self, done),
                    while_alive(self, lambda message: gen == self._generation and self._fail(message)))


def run_name(request: TrainingRequest, n_vocab: int | None = None, *, stopped: bool = False) -> str:
    """A training run's name in the picker: its kind, its vocab size (`n_vocab`, what it holds,
    when known: a run stopped early, or one that ran out of pairs, holds fewer than asked for) and
    its corpus.

    >>> run_name(TrainingRequest("", "bpe", 50000, ("/c/tinyshakespeare.txt",), pattern=NAMED_PATTERNS["gpt4"]))
    'BPE gpt4 50000 (tinyshakespeare)'
    >>> run_name(TrainingRequest("", "bpe", 50000, text="hi"), 12152, stopped=True)
    'BPE bytes 12152 (text, stopped early)'
    """
    if request.algorithm == "sentencepiece":
        kind = f"SP {request.sp_options.get('model_type', 'bpe')}"
    elif request.pattern is None:
        kind = "BPE bytes"
    else:
        kind = "BPE " + next((key for key in ("gpt4", "gpt2", "o200k") if NAMED_PATTERNS[key] == request.pattern),
                             "custom")
    source = Path(request.paths[0]).stem if request.paths else "text"
    size = request.vocab_size if n_vocab is None else n_vocab
    return f"{kind} {size} ({source}{', stopped early' if stopped else ''})"


class SweepService(ChildService):
    """The Plots panel's vocab-size sweep in a child process: training and the trained sizes'
    counts there, the reference tokenizers' counts in the tokenizing server (which holds them,
    some only in memory)."""

    progress = Signal(int, int, object)  # done, total, CompressionCurve so far (a snapshot)
    finished = Signal(object)  # Sweep

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._curve: CompressionCurve | None = None
        self._references: ReferencePoints | None = None  # asked of the server once the child is done
        self._server: ServerLink | None = None

    def start(self, request: SweepRequest, references: ReferencePoints, server: "ServerLink") -> None:
        """Sweep in a new child process. Once it is done, `server` counts `references` (the same
        evaluation text, by the reference tokenizers)."""
        self._curve = None
        self._references, self._server = references, server
        self._spawn(request)

    def cancel(self) -> None:
        """Stop now: a sweep half done is no sweep; the child ends."""
        if self.running:
            self._fail("Cancelled.")

    def _handle(self, message: tuple) -> None:
        kind = message[0]
        if kind == "phase":
            self.phase.emit(*message[1:])
        elif kind == "curve":
            self._curve = CompressionCurve(message[1])
        elif kind == "progress":
            done, total, tokens = message[1:]
            self._curve.tokens.extend(tokens)
            self.progress.emit(done, total, self._curve.snapshot() if tokens else None)
        elif kind == "sweep_done":
            self._count_references(message[1])
        elif kind == "error":
            self._fail(message[1])

    def _count_references(self, result: Sweep) -> None:
        self._end_child()
        gen = self._generation
        self.phase.emit("counting the reference tokenizers", -1, -1)

        def done(refs) -> None:
            if gen == self._generation:
                self._finish_run()
                self.finished.emit(dataclasses.replace(result, references=refs))

        self._server.ask(self._references, while_alive(self, done),
                         while_alive(self, lambda message: gen == self._generation and self._fail(message)),
                         on_progress=while_alive(self, lambda i, n: gen == self._generation
                                                 and self.phase.emit("counting the reference tokenizers", i, n)))
