"""Training in the background for the window: one spawned process per service at a time, its
reports turned into signals, and the trained tokenizer (or the sweep's reference points) computed
off the UI thread.

Why a process: training holds the interpreter lock for whole merges; in a thread the window's
event loop would be late by up to tens of milliseconds (testing-notes.md). The child
(`training_child.main`) sends merge records in batches at most every 100 ms; a socket notifier on
the pipe wakes the UI thread only when a batch is there. Starting the child (which writes the
request, possibly a whole text, into a pipe) runs in a pool thread too. `ChildService` holds what
the two services share: start, drain, end (`shutdown`: the window calls it when it closes; a child
whose window dies without calling it exits by itself, see `core.child_process.exit_with_parent`).

`TrainingService` signals (the plots and the workbench listen to the same ones):
- `phase(what, done, total)`: what the trainer does; done = total = -1 when it cannot count.
- `started(merges, corpus_bytes)`: BPE has split the corpus and starts merging.
- `records(list[MergeRecord])`: the merges just learned, in order: rank (the new id), pair, the new
  token's bytes, the pair's count, and the corpus's length in tokens after the merge.
- `finished(TrainingResult)`: the tokenizer of everything learned (on Cancel: of the merges so far).
- `failed(message)`: a message for the user; nothing was learned.

`SweepService` (the Plots panel's vocab-size sweep): `phase`, `progress(done, total, curve)` with
the training text's compression curve so far, `finished(Sweep)` with the reference points
counted, `failed(message)`; Cancel ends the child (a sweep keeps nothing half done).

It does not touch widgets nor the catalog: the workbench adds the result to the picker.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QCoreApplication, QObject, QSocketNotifier, QTimer, Signal
from shiboken6 import isValid

from ..core.bpe_training import MergeRecord
from ..core.sweep import CompressionCurve, Sweep, reference_points
from ..core.tokenizer import Tokenizer, TokexplorerError
from .training_child import SweepRequest, TrainingRequest, main as child_main
from .worker import run_job


def while_alive(owner: QObject, fn):
    """`fn`, or nothing once the Qt object `owner` is deleted: a worker's answer may arrive after
    its window has closed."""
    def call(*args):
        if isValid(owner):
            fn(*args)
    return call


def save_formats(tok: Tokenizer) -> dict[str, str]:
    """The formats a trained tokenizer can be saved in: key -> file-dialog filter."""
    if tok.family == "bpe":
        # subtle: only minbpe's .model keeps the split pattern; readers of the other two assume one
        return {"minbpe": "minbpe model, pattern and special tokens kept (*.model *.vocab)",
                "tiktoken": "tiktoken ranks, read back with the GPT-4 split (*.tiktoken)",
                "gpt2": "GPT-2 encoder.json + vocab.bpe in a new folder, read back with the GPT-2 split (*)"}
    return {"sentencepiece": "SentencePiece model (*.model *.vocab)"}


def save_tokenizer(tok: Tokenizer, path: str | os.PathLike, fmt: str) -> list[Path]:
    """Write a trained tokenizer in a format of `save_formats` (atomically); returns the files.
    minbpe and SentencePiece write PREFIX.model and PREFIX.vocab (a .model or .vocab ending of the
    path is the prefix's); GPT-2 writes a folder."""
    from ..core.minbpe_files import save_gpt2, save_minbpe, save_tiktoken
    from ..core.sentencepiece_training import save_sentencepiece

    path = Path(path)
    prefix = path.with_suffix("") if path.suffix in (".model", ".vocab") else path
    if fmt == "minbpe":
        return save_minbpe(tok, prefix)
    if fmt == "tiktoken":
        return [save_tiktoken(tok, path if path.suffix == ".tiktoken" else f"{path}.tiktoken")]
    if fmt == "gpt2":
        return save_gpt2(tok, path)
    if fmt == "sentencepiece":
        return save_sentencepiece(tok, prefix)
    raise TokexplorerError(f"unknown format {fmt!r}; choose one of {', '.join(save_formats(tok))}")


@dataclass(frozen=True)
class TrainingResult:
    request: TrainingRequest
    tokenizer: Tokenizer
    stopped: bool  # cancelled: the tokenizer holds the merges learned until then
    seconds: float  # from Train to the result


class ChildService(QObject):
    """One child process at a time running `training_child.main(request, pipe)`; every message it
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
            process = self._ctx.Process(target=child_main, args=(request, child_end), daemon=True,
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
        """Handle every report waiting in the pipe (called when it is readable)."""
        conn = self._conn
        try:
            while conn is not None and conn is self._conn and conn.poll():
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

    @property
    def merges_so_far(self) -> int:
        return len(self._merges)

    def start(self, request: TrainingRequest) -> None:
        """Train in a new child process; the answers arrive as signals."""
        if self.running:
            raise TokexplorerError("a training run is under way; cancel it first")
        self._merges = {}
        self._merging = False
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

    def _handle(self, message: tuple) -> None:
        kind = message[0]
        if kind == "records":
            batch: list[MergeRecord] = message[1]
            for r in batch:
                self._merges[r.pair] = r.rank
            self.records.emit(batch)
        elif kind == "phase":
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
        self.phase.emit("building the tokenizer", -1, -1)

        def build(progress):
            from ..core.bpe_tokenizer import BPETokenizer
            from ..core.bpe_training import assign_special_ids

            specials = assign_special_ids(list(request.special_tokens), 256 + len(merges))
            return BPETokenizer(merges, request.pattern, specials, name=request.name,
                                source="trained here",
                                description="byte-level BPE trained here, " + (
                                    "bytes only" if request.pattern is None else "regex split"))

        self._build(build, stopped)

    def _build_sentencepiece(self, model: bytes) -> None:
        request = self._request
        self._end_child()
        self.phase.emit("building the tokenizer", -1, -1)

        def build(progress):
            from ..core.sentencepiece_backend import SentencePieceTokenizer

            return SentencePieceTokenizer(
                model, name=request.name, source="trained here",
                description=f"SentencePiece {request.sp_options.get('model_type', 'bpe')} trained here")

        self._build(build, False)

    def _build(self, build, stopped: bool) -> None:
        gen, request = self._generation, self._request

        def done(tok) -> None:
            if gen == self._generation:
                self._finish_run()
                self.phase.emit("stopped" if stopped else "done", 1, 1)
                self.finished.emit(TrainingResult(request, tok, stopped, time.perf_counter() - self._t0))

        run_job(build, on_result=while_alive(self, done),
                on_error=while_alive(self, lambda exc: gen == self._generation and self._fail(str(exc))))


class SweepService(ChildService):
    """The Plots panel's vocab-size sweep in a child process: training and the trained sizes'
    counts there, the reference tokenizers' counts here (in a pool thread: the window holds them,
    some only in memory)."""

    progress = Signal(int, int, object)  # done, total, CompressionCurve so far (a snapshot)
    finished = Signal(object)  # Sweep

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._curve: CompressionCurve | None = None
        self._references = None  # () -> (the text the sweep counts, reference tokenizers)

    def start(self, request: SweepRequest,
              references: Callable[[], tuple[str, list[Tokenizer]]]) -> None:
        """Sweep in a new child process. Once it is done, `references()` gives, in a pool thread,
        the text the sweep counted and the reference tokenizers that count it too."""
        self._curve = None
        self._references = references
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
        gen, references = self._generation, self._references
        self.phase.emit("counting the reference tokenizers", -1, -1)

        def count(progress):
            return reference_points(*references(), progress=progress)

        def done(refs) -> None:
            if gen == self._generation:
                self._finish_run()
                self.finished.emit(dataclasses.replace(result, references=refs))

        run_job(count, on_result=while_alive(self, done),
                on_progress=while_alive(self, lambda i, n: gen == self._generation
                                        and self.phase.emit("counting the reference tokenizers", i, n)),
                on_error=while_alive(self, lambda exc: gen == self._generation and self._fail(str(exc))))
