"""One training run, the same for `tokexplorer train` and for the window's trainer process.

A run reads the corpus (files, or a text it is given), splits it by the pattern, learns the merges
and says what it does through a `Report`: the phase it is in, the moment merging starts (with the
corpus's size as training sees it), and the merges as `MergeStep`s, a batch at a time (the
compiled merge loop's calls: no Python call per merge). A caller shows what it wants of that and
may stop between batches (keeping what was learned):

- the command line (`cli.commands.training`) prints the merges' progress on stderr, warns about
  text the pattern leaves out, and writes the tokenizer's files (`write_outputs`: one set, all
  together, never a partial model over a complete one);
- the window's trainer process (`child`) sends phases and batches of records over a pipe and
  stops when the window asks.

SentencePiece trains in one library call; `run_sentencepiece` gives it the options with the
special tokens and reports the sentences it reads.

It imports no Qt and no multiprocessing (the command line's start-up counts), and it does not
build the tokenizer a window shows (the tokenizing server does, from the merges).
"""

from __future__ import annotations

import gc
import operator
import time
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Sequence

from tokexplorer.core.tokenizer import TokexplorerError

if TYPE_CHECKING:
    from tokexplorer.core.backends.sentencepiece_family import SentencePieceTokenizer
    from tokexplorer.core.training.bpe import MergeStep


class TrainingRequest(NamedTuple):
    """What to train: a corpus (files, or a text), an algorithm and its settings.

    (NamedTuples here, not dataclasses: `dataclasses` imports `inspect`, which costs the command
    line's `train` more than its start-up otherwise does.)"""

    name: str  # the tokenizer's name (in the window's picker; the output prefix on the command line)
    algorithm: str  # "bpe" or "sentencepiece"
    vocab_size: int
    paths: tuple[str, ...] = ()  # corpus files, concatenated; or
    text: str | None = None  # the corpus itself
    pattern: str | None = None  # BPE: the split regex, None for bytes only (Basic)
    special_tokens: tuple[str, ...] = ()
    sp_options: dict[str, object] = {}  # SentencePiece: every option (never changed in place)
    encoding: str | None = None  # of the corpus files, when they are not UTF-8
    # BPE with a named pattern over files: the budget on the distinct chunks' MB (None: the default,
    # budgets.TRAIN_CHUNKS_LIMIT_MB); other runs hold the corpus whole (the caller checks its size)
    max_mb: float | None = None


class SweepRequest(NamedTuple):
    """A vocab-size sweep (core.analysis.sweep) of the Plots panel: a corpus (a file, or a text), the
    vocab sizes, the split pattern, and the part held out for counting (None: the whole corpus).
    The reference tokenizers are counted by the window, which holds them."""

    sizes: tuple[int, ...]
    pattern: str | None
    held_out: float | None
    path: str | None = None
    text: str | None = None


class Report:
    """What a run says while it works. Every method does nothing here: a caller overrides the ones
    it shows. A method may raise (a TokexplorerError ends the run with its message)."""

    def phase(self, what: str, done: int, total: int) -> None:
        """What the run does now; done = total = -1 when it cannot count."""

    def merging(self, merges: int, trained_bytes: int, corpus_bytes: int) -> None:
        """The corpus is read and split: `merges` to learn over `trained_bytes` (the bytes the
        pattern matches) of the corpus's `corpus_bytes`."""

    def merged(self, steps: list[MergeStep], done: int, total: int) -> bool:
        """A batch of merges was learned, the last the `done`th of `total` (`bpe.RecordMaker`
        makes them records); True stops the run here (the batch is kept)."""
        return False

    def sentences(self, done: int, total: int) -> None:
        """SentencePiece has read `done` of `total` sentences (then it trains without a word)."""


class BpeRun:
    """What a BPE run learned."""

    def __init__(self, merges: dict[tuple[int, int], int], total: int, corpus_bytes: int, trained_bytes: int,
                 tokens: int, seconds: float):
        self.merges = merges  # pair -> new id, in the order learned
        self.total = total  # merges asked for
        self.corpus_bytes = corpus_bytes  # the corpus in UTF-8
        self.trained_bytes = trained_bytes  # what the pattern matches of it (all of it without a pattern)
        self.tokens = tokens  # the trained bytes' length in tokens after the merges
        self.seconds = seconds  # from the corpus read (or, streamed, its first block) to the last merge
        self.stopped = False  # the report asked to stop
        self.interrupted = False  # Ctrl-C stopped it (only with keep_on_interrupt)

    @property
    def ran_out(self) -> bool:
        """Whether training ended before `total` because no pair was left to merge."""
        return not (self.stopped or self.interrupted) and len(self.merges) < self.total


def read_corpus(paths: Sequence[str], *, encoding: str | None = None,
                report: Report | None = None) -> str:
    """The files' texts, concatenated; a clear TokexplorerError for one that cannot be read."""
    from tokexplorer.core.files.textfile import read_text_file

    parts = []
    for i, path in enumerate(paths):
        if report is not None:
            report.phase(f"reading {path}", i, len(paths))
        parts.append(read_text_file(path, encoding=encoding))
    return "".join(parts)


def corpus_text(request: TrainingRequest, report: Report | None = None) -> str:
    """The request's corpus: its text, or its files read."""
    if request.text is not None:
        return request.text
    return read_corpus(request.paths, encoding=request.encoding, report=report)


def run_bpe(request: TrainingRequest, report: Report, *, keep_on_interrupt: bool = False) -> BpeRun:
    """Train byte-level BPE as `request` asks, telling `report`; Ctrl-C (KeyboardInterrupt) while
    merging ends the run keeping what was learned when `keep_on_interrupt`, else it propagates.

    subtle: training makes millions of containers and no reference cycles, so the cyclic collector
    would only scan them again and again (15% of the time): it is turned off here for good. A run
    is the last work of its process (the command, the window's trainer).
    """
    from tokexplorer.core.training.bpe import check_vocab_size, count_chunks, iter_batches

    gc.disable()
    n_special = len(request.special_tokens)
    total = check_vocab_size(request.vocab_size, n_special)
    corpus = _streamed_corpus(request)
    started = time.perf_counter()
    if corpus is not None:
        from tokexplorer.core.budgets import TRAIN_CHUNKS_LIMIT_MB
        from tokexplorer.core.training.counting import count_corpus

        if not corpus.size:
            raise TokexplorerError("the corpus is empty; give some text to train on")
        corpus_bytes = corpus.size
        # subtle: progress in KB: a window's progress bar takes 32-bit numbers, a corpus may pass 2 GB
        report.phase("splitting into chunks", 0, corpus_bytes // 1000)
        chunks, freq = count_corpus(corpus, request.pattern, max_unique_mb=request.max_mb or TRAIN_CHUNKS_LIMIT_MB,
                                    progress=lambda done, size: report.phase("splitting into chunks",
                                                                             done // 1000, size // 1000))
    else:
        text = corpus_text(request, report)
        if not text:
            raise TokexplorerError("the corpus is empty; give some text to train on")
        started = time.perf_counter()
        if request.pattern is None:
            chunks, freq = [text.encode("utf-8")], [1]  # (encoded once: the corpus may be 256 MB)
            corpus_bytes = len(chunks[0])
        else:
            corpus_bytes = len(text.encode("utf-8"))
            report.phase("splitting into chunks", -1, -1)
            counted = count_chunks(text, request.pattern)
            chunks, freq = [w.encode("utf-8") for w in counted], list(counted.values())
            del counted
        del text  # (the request may still hold it: the window's current text)
    trained_bytes = sum(map(operator.mul, map(len, chunks), freq))
    batches = iter_batches(chunks, freq, request.vocab_size, n_special=n_special)
    del chunks, freq
    report.merging(total, trained_bytes, corpus_bytes)
    report.phase("merging", 0, total)
    run = BpeRun({}, total, corpus_bytes, trained_bytes, trained_bytes, 0.0)
    done = 0
    try:
        for steps in batches:
            run.merges.update(zip(map(_PAIR, steps), map(_NEW_ID, steps)))
            run.tokens -= sum(map(_MERGED, steps))
            done += len(steps)
            if report.merged(steps, done, total):
                run.stopped = True
                break
    except KeyboardInterrupt:
        if not keep_on_interrupt:
            raise
        run.interrupted = True
    run.seconds = time.perf_counter() - started
    return run


_PAIR, _NEW_ID, _MERGED = operator.itemgetter(2), operator.itemgetter(3), operator.itemgetter(5)  # of a MergeStep


def streams(request: TrainingRequest) -> bool:
    """Whether a run counts its corpus a block at a time (`counting`) rather than reading it whole:
    BPE with a named pattern over UTF-8 files."""
    import codecs

    from tokexplorer.core.patterns import NAMED_PATTERNS

    try:
        utf8 = request.encoding is None or codecs.lookup(request.encoding).name == "utf-8"
    except LookupError:
        return False  # reading says the encoding is unknown
    return (utf8 and request.algorithm == "bpe" and request.text is None and bool(request.paths)
            and request.pattern in NAMED_PATTERNS.values())


def _streamed_corpus(request: TrainingRequest):
    """The request's files as a `counting.CorpusFiles` when the run streams them, else None (a
    file that is UTF-16, or may be, is read whole)."""
    if not streams(request):
        return None
    from tokexplorer.core.training.counting import open_corpus

    return open_corpus(request.paths)


def sentencepiece_options(request: TrainingRequest) -> dict[str, object]:
    """The request's SentencePiece options, its special tokens as user-defined symbols."""
    options = dict(request.sp_options)
    if request.special_tokens:
        options["user_defined_symbols"] = list(request.special_tokens)
    return options


def run_sentencepiece(text: str, request: TrainingRequest, report: Report) -> SentencePieceTokenizer:
    """Train SentencePiece on `text` (the request's corpus, read by the caller, who keeps it to
    count the result) with the request's options, telling `report` of the sentences read."""
    from tokexplorer.core.training.sentencepiece import train_sentencepiece

    report.phase("reading sentences", 0, -1)
    return train_sentencepiece(text, sentencepiece_options(request), name=request.name,
                               progress=report.sentences)


def write_outputs(files: dict[Path, bytes], prefix: str, interrupted: bool) -> tuple[list[Path], str | None]:
    """Write one output's files together; returns (paths written, the prefix used instead of
    `prefix`, or None).

    An interrupted run does not replace a complete model already at `prefix`: what it learned
    goes to PREFIX-partial instead.
    """
    import os

    from tokexplorer.core.files.minbpe import write_files

    if interrupted and any(p.exists() for p in files):
        partial = f"{prefix}-partial"
        files = {Path(partial + os.fspath(p)[len(prefix):]): data for p, data in files.items()}
        write_files(files)
        return list(files), partial
    write_files(files)
    return list(files), None


def files_saved(files: dict[Path, bytes]) -> bool:
    """Whether every file of an output set is in place with the content meant for it."""
    try:
        return all(path.read_bytes() == data for path, data in files.items())
    except OSError:
        return False

