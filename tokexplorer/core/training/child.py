"""The window's trainer process: `runner`'s runs, reported over a pipe.

The window starts `main` in a spawned process (see `gui.services.training`) so that training,
which holds the interpreter lock for whole merges, never delays the window's event loop. The child
reads the corpus itself, trains with the same runner as `tokexplorer train`, and talks to the
window over a pipe:

- child -> window: ("phase", what, done, total) with done = total = -1 when it cannot count;
  ("start", merges to learn, corpus bytes); ("records", [MergeRecord, ...]) at most every
  `BATCH_SECONDS`; ("bpe_done", stopped) once the merges are all sent; ("sp_done", model bytes);
  ("error", message).
- window -> child: "stop", honoured between merges: the merges sent so far are what was learned.
- A sweep (`SweepRequest`) sends ("curve", training bytes) once its text is split off, then
  ("progress", done, total, [tokens after each merge since the last report]) at most every
  `BATCH_SECONDS`, then ("sweep_done", Sweep without reference points). Cancel ends the process.

subtle: this module runs in the child, which must start fast and never load Qt: it imports only
the core (a test checks it). It does not build tokenizers: the window does, from what it received.
"""

from __future__ import annotations

import sys
import time
import traceback

from tokexplorer.core.training.runner import Report, SweepRequest, TrainingRequest

# A batch of merge records (or a sweep's progress) at most this often: ten updates a second are
# smooth to watch, and each costs the window a few milliseconds (progress bar, log, live plot).
BATCH_SECONDS = 0.1
# ...and of at most this many records: the window reads a batch in one go (the compiled merge loop
# learns 20,000 merges in a tenth of a second, which made one message the window took 170 ms to
# read and show).
BATCH_RECORDS = 1000


def main(request: TrainingRequest | SweepRequest, conn) -> None:
    """The child's entry point: train (or sweep), report over `conn`, never raise."""
    from tokexplorer.core.child_process import exit_with_parent
    from tokexplorer.core.tokenizer import TokexplorerError

    exit_with_parent()
    try:
        if isinstance(request, SweepRequest):
            _sweep(request, conn)
        elif request.algorithm == "sentencepiece":
            _sentencepiece(request, conn)
        else:
            _bpe(request, conn)
    except TokexplorerError as exc:
        conn.send(("error", str(exc)))
    except (BrokenPipeError, EOFError, KeyboardInterrupt):
        pass  # the window has gone: nobody to tell
    except MemoryError:
        conn.send(("error", "out of memory while training; use a smaller corpus or vocab size"))
    except Exception as exc:  # a bug: tell the window, log the details
        traceback.print_exc(file=sys.stderr)
        conn.send(("error", f"internal error while training: {exc!r}"))
    finally:
        conn.close()


class PipeReport(Report):
    """A run's report as messages on the pipe to the window: merge records in batches (at most
    every BATCH_SECONDS, of at most BATCH_RECORDS), and after each batch a look for "stop"."""

    def __init__(self, conn):
        self.conn = conn
        self.records = None  # a bpe.RecordMaker, once merging starts
        self.batch: list = []
        self.last = time.monotonic()
        self.sentences_shown = 0.0

    def phase(self, what: str, done: int, total: int) -> None:
        self.conn.send(("phase", what, done, total))

    def merging(self, merges: int, trained_bytes: int, corpus_bytes: int) -> None:
        from tokexplorer.core.training.bpe import RecordMaker

        self.records = RecordMaker(trained_bytes)
        self.conn.send(("start", merges, trained_bytes))

    def merged(self, steps, done: int, total: int) -> bool:
        self.batch += self.records(steps)
        now = time.monotonic()
        if now - self.last >= BATCH_SECONDS or len(self.batch) >= BATCH_RECORDS:
            self.flush()
            self.last = now
            return self.conn.poll() and self.conn.recv() == "stop"
        return False

    def flush(self) -> None:
        """Send the records not sent yet."""
        if self.batch:
            self.conn.send(("records", self.batch))
            self.batch = []

    def sentences(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done == total:
            # subtle: the library asks for sentences until it has them all, then trains in C++
            # without a word: the phase is all there is to show.
            self.phase("training (SentencePiece reports no progress)", -1, -1)
        elif now - self.sentences_shown >= BATCH_SECONDS:
            self.sentences_shown = now
            self.phase("reading sentences", done, total)


def _bpe(request: TrainingRequest, conn) -> None:
    from tokexplorer.core.training.runner import run_bpe

    report = PipeReport(conn)
    run = run_bpe(request, report)
    report.flush()
    conn.send(("bpe_done", run.stopped))


def _sentencepiece(request: TrainingRequest, conn) -> None:
    from tokexplorer.core.training.runner import corpus_text, run_sentencepiece

    report = PipeReport(conn)
    tok = run_sentencepiece(corpus_text(request, report), request, report)
    conn.send(("sp_done", tok.model_proto))


def _sweep(request: SweepRequest, conn) -> None:
    import gc

    from tokexplorer.core.analysis.sweep import split_held_out, sweep
    from tokexplorer.core.files.textfile import NotUtf8Error, read_text_file
    from tokexplorer.core.tokenizer import TokexplorerError
    from tokexplorer.core.training.held_out import sweep_corpus

    gc.disable()  # as in a training run (runner.run_bpe)
    text = request.text or ""
    evaluation, source = None, "the corpus"
    counted = None
    try:
        if request.path is not None:
            # a UTF-8 file with a named pattern or none is counted from the file, never held
            # whole: split on its bytes for a held-out part (held_out.split_counted)
            conn.send(("phase", f"reading {request.path}", -1, -1))
            counted = sweep_corpus(request.path, request.held_out or None, request.pattern)
        if counted is not None:
            text, evaluation = counted
            n_bytes = text.n_bytes
        else:
            if request.path is not None:
                text = read_text_file(request.path)
            if request.held_out:
                text, evaluation = split_held_out(text, request.held_out)
            if request.pattern is not None:
                conn.send(("phase", "splitting into chunks", -1, -1))
            n_bytes = len(text.encode("utf-8"))
    except NotUtf8Error as exc:  # the core's message names a command-line flag
        raise TokexplorerError(
            f"{exc.path} is not UTF-8 (byte 0x{exc.byte:02X} at offset {exc.offset}): open it "
            "with File > Open, which asks for its encoding, and sweep the current text.") from None
    if request.held_out:
        source = f"held-out {request.held_out:.0%}"
    conn.send(("curve", n_bytes))
    tokens: list[int] = []  # the training text's length after each merge, not yet sent
    last = time.monotonic()

    def report(done: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= BATCH_SECONDS or done == total:
            last = now
            conn.send(("progress", done, total, tokens[:]))
            tokens.clear()

    result = sweep(text, request.sizes, pattern=request.pattern, eval_text=evaluation,
                   eval_source=source, progress=report,
                   on_merge=lambda curve: tokens.append(curve.tokens[-1]))
    conn.send(("sweep_done", result))
