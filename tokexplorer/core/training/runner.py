"""Training in a child process: what the training workbench asks for, and the child's side.

The window starts `main` in a spawned process (see `training_service`) so that training, which
holds the interpreter lock for whole merges, never delays the window's event loop. The child
reads the corpus itself, trains with the core, and talks to the window over a pipe:

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

import gc
import sys
import time
import traceback
from dataclasses import dataclass, field

# A batch of merge records (or a sweep's progress) at most this often: ten updates a second are
# smooth to watch, and each costs the window a few milliseconds (progress bar, log, live plot).
BATCH_SECONDS = 0.1
# ...and of at most this many records: the window reads a batch in one go (the compiled merge loop
# learns 20,000 merges in a tenth of a second, which made one message the window took 170 ms to
# read and show).
BATCH_RECORDS = 1000


@dataclass(frozen=True)
class TrainingRequest:
    """What to train: a corpus (files, or a text), an algorithm and its settings."""

    name: str  # the tokenizer's name in the picker
    algorithm: str  # "bpe" or "sentencepiece"
    vocab_size: int
    paths: tuple[str, ...] = ()  # corpus files, concatenated; or
    text: str | None = None  # the corpus itself
    pattern: str | None = None  # BPE: the split regex, None for bytes only (Basic)
    special_tokens: tuple[str, ...] = ()
    sp_options: dict[str, object] = field(default_factory=dict)  # SentencePiece: every option


@dataclass(frozen=True)
class SweepRequest:
    """A vocab-size sweep (core/sweep.py) of the Plots panel: a corpus (a file, or a text), the
    vocab sizes, the split pattern, and the part held out for counting (None: the whole corpus).
    The reference tokenizers are counted by the window, which holds them."""

    sizes: tuple[int, ...]
    pattern: str | None
    held_out: float | None
    path: str | None = None
    text: str | None = None


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


def _corpus(request: TrainingRequest, conn) -> str:
    if request.text is not None:
        return request.text
    from tokexplorer.core.files.textfile import read_text_file

    parts = []
    for i, path in enumerate(request.paths):
        conn.send(("phase", f"reading {path}", i, len(request.paths)))
        parts.append(read_text_file(path))
    return "".join(parts)


def _bpe(request: TrainingRequest, conn) -> None:
    from tokexplorer.core.training.bpe import (chunk_bytes, check_vocab_size, count_chunks, iter_records,
                                     iter_train, iter_train_chunks)
    from tokexplorer.core.tokenizer import TokexplorerError

    # Training makes millions of containers and no reference cycles: the cyclic collector would
    # only scan them again and again (15% of the time). This process ends after training.
    gc.disable()
    n_special = len(request.special_tokens)
    total = check_vocab_size(request.vocab_size, n_special)
    text = _corpus(request, conn)
    if not text:
        raise TokexplorerError("the corpus is empty; give some text to train on")
    if request.pattern is None:
        n_bytes = len(text.encode("utf-8"))
        steps = iter_train(text, request.vocab_size, n_special=n_special)
    else:
        conn.send(("phase", "splitting into chunks", -1, -1))
        chunks = count_chunks(text, request.pattern)
        n_bytes = chunk_bytes(chunks)
        steps = iter_train_chunks(chunks, request.vocab_size, n_special=n_special)
    del text
    conn.send(("start", total, n_bytes))
    conn.send(("phase", "merging", 0, total))
    batch: list = []
    last = time.monotonic()
    stopped = False
    for record in iter_records(steps, n_bytes):
        batch.append(record)
        now = time.monotonic()
        if now - last >= BATCH_SECONDS or len(batch) >= BATCH_RECORDS:
            conn.send(("records", batch))
            batch, last = [], now
            if conn.poll() and conn.recv() == "stop":
                stopped = True
                break
    if batch:
        conn.send(("records", batch))
    conn.send(("bpe_done", stopped))


def _sweep(request: SweepRequest, conn) -> None:
    from tokexplorer.core.analysis.sweep import split_held_out, sweep
    from tokexplorer.core.files.textfile import NotUtf8Error, read_text_file
    from tokexplorer.core.tokenizer import TokexplorerError

    gc.disable()  # as in _bpe
    text = request.text or ""
    if request.path is not None:
        conn.send(("phase", f"reading {request.path}", 0, 1))
        try:
            text = read_text_file(request.path)
        except NotUtf8Error as exc:  # the core's message names a command-line flag
            raise TokexplorerError(
                f"{exc.path} is not UTF-8 (byte 0x{exc.byte:02X} at offset {exc.offset}): open it with "
                "File > Open, which asks for its encoding, and sweep the current text.") from None
    evaluation, source = None, "the corpus"
    if request.held_out:
        text, evaluation = split_held_out(text, request.held_out)
        source = f"held-out {request.held_out:.0%}"
    if request.pattern is not None:
        conn.send(("phase", "splitting into chunks", -1, -1))
    conn.send(("curve", len(text.encode("utf-8"))))
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


def _sentencepiece(request: TrainingRequest, conn) -> None:
    from tokexplorer.core.training.sentencepiece import train_sentencepiece

    text = _corpus(request, conn)
    options = dict(request.sp_options)
    if request.special_tokens:
        options["user_defined_symbols"] = list(request.special_tokens)
    last = 0.0

    def progress(done: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        if done == total:
            # subtle: the library asks for sentences until it has them all, then trains in C++
            # without a word: the phase is all there is to show.
            conn.send(("phase", "training (SentencePiece reports no progress)", -1, -1))
        elif now - last >= BATCH_SECONDS:
            last = now
            conn.send(("phase", "reading sentences", done, total))

    conn.send(("phase", "reading sentences", 0, -1))
    tok = train_sentencepiece(text, options, name=request.name, progress=progress)
    conn.send(("sp_done", tok.model_proto))
