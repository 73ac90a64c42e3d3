"""Counting a corpus's chunks under a named split pattern without holding the corpus: a block of
the files at a time, the blocks counted in worker processes and their counts merged in order.

The result is what `bpe.count_chunks` gives for the files' text read whole: each distinct chunk
(here as UTF-8 bytes, what the merge loop takes) with its occurrences, in order of first
occurrence (the merge loop's tie rule depends on that order). It holds because

- the blocks are cut only where the pattern ends a chunk whatever follows (after a newline with
  a non-space before it and a letter after it, `patterns.piece_spans`' rule, for every named
  pattern; GPT-4's and o200k's also after the last newline before a letter or an indented line:
  see `_is_cut`), so a block splits exactly as it does inside the whole text;
- a block's count (`ChunkCounts`) lists its chunks in order of first occurrence, and adding the
  blocks' counts in block order keeps the first block's place for a chunk seen again later.

Memory is that of the distinct chunks (the merged count) plus a block per worker, not the
corpus: the files are never read whole. `max_unique_mb` is the budget on the distinct chunks'
bytes, checked as each block's count is merged; past it counting stops with one line saying so.

Why processes, not threads (measured on this 2-core machine, 20 MB of source code and docs, GPT-4
pattern): one thread splits and counts at about 5 MB/s; `bpe.count_chunks`' threads, with the
`regex` module's matching done with the interpreter lock released, took 7.7 s of wall time for
4.8 s of CPU, slower than one thread (3.9 s): building the chunk strings needs the lock, so the
threads take turns. Worker processes share nothing and run on every core (two workers used 5.0 s
of CPU where one process used 4.4 s). They are spawned (the app spawns everywhere, so macOS and
Windows behave the same) and import only this module and the patterns. When one core would count
the corpus sooner than they start (`_parallel_pays`: 1.1 MB of English, 8 MB of ASCII code), or
in a daemon process (the window's trainer, which may not have children), the blocks are counted
in this process, one at a time. Inside a block, a piece that is all ASCII (most of source
code and English prose) is split and counted with no Python object per chunk by the compiled
`_count.ChunkCounts` under GPT-4's pattern (tinyshakespeare's 1.1 MB in 10 ms, where `regex`
took 0.15 s), and under GPT-2's and o200k's by the standard library's `re` with the pattern's
ASCII form, three times faster than `regex` (`ascii_twin`); other pieces by `regex`. Without the
compiled module, `PyChunkCounts` counts the same in Python.

Files that are UTF-16, or may be (a NUL in their first 64 KB), are not read here: `open_corpus`
says so, and the caller reads those whole. A stretch of the corpus with no place to cut (under GPT-2, a file of
CRLF lines or whose lines all start with a space) is one block, held whole by its worker.
"""

from __future__ import annotations

import codecs
import functools
import os
from collections import Counter
from typing import Callable, NamedTuple, Sequence

from tokexplorer.core.patterns import GPT4_SPLIT_PATTERN, O200K_SPLIT_PATTERN
from tokexplorer.core.tokenizer import TokexplorerError

# Blocks: about this many bytes each (cut at the next safe place), at least BLOCK_MIN and at most
# BLOCK_MAX: four blocks a worker or more keep the workers busy to the end; a worker's memory is
# its block's text plus the chunks of a `patterns.PIECE_SIZE` piece of it.
BLOCK_MIN = 1 << 20
BLOCK_MAX = 8 << 20
# Worker processes count a corpus when they save time (`_parallel_pays`), measured on this 2-core
# machine, GPT-4 pattern: two halve one core's counting at best, but starting them (a spawned
# interpreter importing this module, until it counts) takes SPAWN_SECONDS (0.3-0.4 s for a pool of
# two measured with both cores busy; half that taken for a quiet machine), and their counts come
# back pickled and are merged here, RETURN_SECONDS_PER_MB of corpus (30 MB of ASCII source code:
# 0.6 s in this process, 1.0 s with two workers). One core's seconds a MB: ASCII text by the
# compiled split 0.011, by an `ascii_twin` 0.07, other text by `regex` 0.24 (the shared corpora's
# 7.4 MB of pieces with a non-ASCII character; on a busy machine).
SPAWN_SECONDS = 0.15
RETURN_SECONDS_PER_MB = 0.015
SECONDS_PER_MB = {"compiled": 0.011, "twin": 0.07, "regex": 0.24}
# The patterns cut by `_is_cut`'s loose rule (their regexes): GPT-4's and o200k's.
LOOSE_PATTERNS = frozenset({GPT4_SPLIT_PATTERN, O200K_SPLIT_PATTERN})
# Set to 1, it makes training count and merge in Python, not in the compiled modules (`bpe.merge_loop`).
PURE_PYTHON_VARIABLE = "TOKEXPLORER_PURE_PYTHON"
# How far a cut is looked for at a time (bytes read).
CUT_WINDOW = 1 << 16  # (more than AFTER)


class CorpusFiles(NamedTuple):
    """The corpus as one stream of UTF-8 bytes: the files end to end, each without its UTF-8
    byte-order mark (as `textfile.read_text_file` reads them). Offsets are in this stream."""

    paths: tuple[str, ...]
    skips: tuple[int, ...]  # bytes of a byte-order mark at the start of each file
    sizes: tuple[int, ...]  # bytes of each file after its byte-order mark

    @property
    def size(self) -> int:
        return sum(self.sizes)

    def read(self, offset: int, n: int) -> bytes:
        """Up to `n` bytes of the stream from `offset`."""
        parts = []
        start = 0
        for path, skip, size in zip(self.paths, self.skips, self.sizes):
            a, b = max(offset, start), min(offset + n, start + size)
            if a < b:
                with open(path, "rb") as f:
                    f.seek(skip + a - start)
                    parts.append(f.read(b - a))
            start += size
        return b"".join(parts)

    def where(self, offset: int) -> tuple[str, int]:
        """The file and the offset in it (a byte-order mark included) of a stream offset."""
        start = 0
        for path, skip, size in zip(self.paths, self.skips, self.sizes):
            if offset < start + size:
                return path, skip + offset - start
            start += size
        return self.paths[-1], self.skips[-1] + self.sizes[-1]


def open_corpus(paths: Sequence[str]) -> CorpusFiles | None:
    """The files as a stream, checked as `read_text_file` checks them (missing, a folder or a
    device: one clear error); None when one of them is UTF-16 or looks like it, or has bytes yet
    tells a size of 0 (a /proc file), so cannot be streamed by its size (the caller reads such a
    corpus whole, and refuses or decodes it as the reader does)."""
    from tokexplorer.core.files.file_budget import open_regular

    skips, sizes = [], []
    for path in paths:
        f, size = open_regular(path, what="text file")
        try:
            with f:
                head = f.read(1 << 16)
        except OSError as exc:
            raise TokexplorerError(f"cannot read {path}: {exc.strerror or exc}") from None
        if head and not size:
            return None  # it has bytes yet tells no size (a /proc file): read whole
        skip = len(codecs.BOM_UTF8) if head.startswith(codecs.BOM_UTF8) else 0
        if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or b"\0" in head:
            return None  # UTF-16, or what may be: the whole-text reader decides
        skips.append(skip)
        sizes.append(size - skip)
    return CorpusFiles(tuple(map(os.fspath, paths)), tuple(skips), tuple(sizes))


# How far past a newline `_is_cut` looks: the character after it, or a run of spaces and tabs (up
# to INDENT_MAX) and the character after that.
INDENT_MAX = 64
AFTER = INDENT_MAX + 4


def _is_cut(data: bytes, n: int, loose: bool) -> bool:
    """Whether the stream may be cut after the newline at data[n], so that the pattern splits both
    sides as it splits the whole. False where a character is not valid UTF-8 (decoding the block
    reports it), and at the data's end.

    Every named pattern: a non-space character before the newline and a letter after it
    (`patterns.piece_spans`' rule, on bytes). GPT-4 and o200k (`loose`) also: a letter after it
    whatever comes before, or spaces and tabs then an ASCII non-space character (an indented line).

    subtle: those two end a chunk at the last newline of a whitespace run (`\\s*[\\r\\n]`, and at a
    block's end `\\s++$` or `\\s*[\\r\\n]+`, take the run up to it either way), and no chunk starts
    inside the run and takes the newline with what follows. GPT-2 has neither: its `\\s+(?!\\S)`
    joins a newline to the indentation after it, and to a blank line before a letter leaves the
    last newline alone, where a block's end would keep the run whole.
    """
    if n < 1 or n + 1 >= len(data):
        return False
    after = n + 1
    if loose:
        while after < len(data) and after - n <= INDENT_MAX and data[after] in b" \t":
            after += 1
        if after >= len(data) or after - n > INDENT_MAX:
            return False
        if after > n + 1:
            return 0x21 <= data[after] <= 0x7E
    lead = data[after]
    width = 1 if lead < 0x80 else 2 if 0xC0 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else 4 if 0xF0 <= lead < 0xF8 else 0
    try:
        letter = data[after:after + width].decode("utf-8") if width else ""
    except UnicodeDecodeError:
        return False
    if len(letter) != 1 or not letter.isalpha():
        return False
    if loose:
        return True
    j = n - 1
    while j > n - 4 and j > 0 and 0x80 <= data[j] < 0xC0:
        j -= 1
    try:
        before = data[j:n].decode("utf-8")
    except UnicodeDecodeError:
        return False
    return len(before) == 1 and not before.isspace()


def next_cut(corpus: CorpusFiles, offset: int, loose: bool) -> int:
    """The first place at or after `offset` where the stream may be cut (`_is_cut`), or its end."""
    size = corpus.size
    if offset <= 0:
        return 0
    at = max(offset - 1, 1)  # where a newline before a cut at `offset` or later may be
    while at < size:
        base = max(at - 4, 0)  # with the character before the newline
        data = corpus.read(base, CUT_WINDOW)
        last = base + len(data) >= size
        end = len(data) if last else len(data) - AFTER - 1  # with what follows the newline
        i = at - base
        while (n := data.find(b"\n", i, end)) >= 0:
            if _is_cut(data, n, loose):
                return base + n + 1
            i = n + 1
        if last:
            break
        at = base + end
    return size


def plan_blocks(corpus: CorpusFiles, block_size: int, loose: bool) -> list[tuple[int, int]]:
    """The stream cut into (start, end) blocks of about `block_size` bytes at safe places."""
    size = corpus.size
    blocks, start = [], 0
    while start < size:
        end = next_cut(corpus, start + block_size, loose)
        blocks.append((start, end))
        start = end
    return blocks


def count_block(corpus: CorpusFiles, pattern: str, start: int, end: int) -> tuple[list[bytes], list[int], int]:
    """The chunks of one block (UTF-8 bytes, in order of first occurrence), their occurrences, and
    -1; or ([], [], offset) when the block is not valid UTF-8 there: run by a worker, so it raises
    nothing of its own (an exception's arguments may not survive the trip back).

    The block is split a piece of about PIECE_BYTES at a time (cut as blocks are): an ASCII piece
    by the compiled split for GPT-4's pattern (`_count.c`) or by the pattern's `ascii_twin`, any
    other piece by the `regex` module."""
    data = corpus.read(start, end - start)
    try:
        data.decode("utf-8")  # (checked whole: the first bad byte is the one reported)
    except UnicodeDecodeError as exc:
        return [], [], start + exc.start
    counts = chunk_counts()
    split = counts.split_gpt4 if pattern == GPT4_SPLIT_PATTERN else None
    twin = ascii_twin(pattern)
    loose = pattern in LOOSE_PATTERNS
    a = 0
    while a < len(data):
        b = _next_cut_in(data, a + PIECE_BYTES, loose)
        if split is None or not split(data, a, b):
            piece = data[a:b]
            if twin is not None and piece.isascii():
                counts.add(twin.findall(piece))
            else:
                from tokexplorer.core.patterns import compile_pattern  # (`regex`: only for such text)

                counts.add(compile_pattern(pattern).findall(piece.decode("utf-8")))
        a = b
    return counts.chunks(), counts.counts(), -1


def chunk_counts():
    """An empty count of distinct chunks: the compiled `_count.ChunkCounts`, or its Python twin
    `PyChunkCounts` where it is not built (or TOKEXPLORER_PURE_PYTHON is set, as for the merge loop)."""
    if os.environ.get(PURE_PYTHON_VARIABLE, "") in ("", "0"):
        try:
            from tokexplorer.core.training._count import ChunkCounts
        except ImportError:
            pass
        else:
            return ChunkCounts()
    return PyChunkCounts()


class PyChunkCounts:
    """`_count.ChunkCounts` (see `_count.c`) in Python: distinct chunks (UTF-8 bytes) and their
    occurrences, in order of first occurrence. `split_gpt4` splits with GPT-4's `ascii_twin`."""

    def __init__(self):
        self._counts: Counter[bytes] = Counter()
        self.unique_bytes = 0  # the distinct chunks' bytes

    def split_gpt4(self, data: bytes, start: int, end: int) -> bool:
        piece = data[start:end]
        if not piece.isascii():
            return False
        self.add(ascii_twin(GPT4_SPLIT_PATTERN).findall(piece))
        return True

    def add(self, chunks) -> None:
        part = Counter(c.encode("utf-8") if isinstance(c, str) else c for c in chunks)
        part.pop(b"", None)
        self.add_counts(list(part), list(part.values()))

    def add_counts(self, chunks: list[bytes], counts: list[int]) -> None:
        part: Counter[bytes] = Counter()
        for chunk, n in zip(chunks, counts):
            if chunk and n:
                part[chunk] += n
        self.unique_bytes += sum(len(c) for c in part if c not in self._counts)
        self._counts.update(part)

    def chunks(self) -> list[bytes]:
        return list(self._counts)

    def counts(self) -> list[int]:
        return list(self._counts.values())


# A block is split in pieces of about this many bytes (a piece's chunk list is about 15 times its
# text; an ASCII piece splits 3 times faster than one with a single other character).
PIECE_BYTES = 1 << 16


def _next_cut_in(data: bytes, at: int, loose: bool) -> int:
    """The first place at or after `at` where `data` (a block) may be cut, or its end."""
    n = data.find(b"\n", max(at - 1, 1))
    while n >= 0 and not _is_cut(data, n, loose):
        n = data.find(b"\n", n + 1)
    return len(data) if n < 0 else n + 1


# The `re` forms of the named patterns for ASCII text, where they match exactly what the `regex`
# forms match (tests/core/test_streamed_counting.py checks it): letters A-Z and a-z (upper and lower
# case for o200k), digits 0-9, and the `regex` module's whitespace, which is narrower than `re`'s
# (not \x1c-\x1f). `re` is the standard library's engine, about 3 times faster on such text.
_SPACE = r"[\t\n\x0b\x0c\r ]"
_NOT_SPACE = r"[^\t\n\x0b\x0c\r ]"
_ASCII_FORMS = {
    "gpt2": (r"'(?:[sdmt]|ll|ve|re)| ?[A-Za-z]++| ?[0-9]++| ?[^\t\n\x0b\x0c\r A-Za-z0-9]++"
             rf"|{_SPACE}++$|{_SPACE}+(?!{_NOT_SPACE})|{_SPACE}"),
    "gpt4": (r"'(?i:[sdmt]|ll|ve|re)|[^\r\nA-Za-z0-9]?+[A-Za-z]++|[0-9]{1,3}+"
             r"| ?[^\t\n\x0b\x0c\r A-Za-z0-9]++[\r\n]*+"
             rf"|{_SPACE}++$|{_SPACE}*[\r\n]|{_SPACE}+(?!{_NOT_SPACE})|{_SPACE}"),
    "o200k": "|".join([
        r"[^\r\nA-Za-z0-9]?[A-Z]*[a-z]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"[^\r\nA-Za-z0-9]?[A-Z]+[a-z]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"[0-9]{1,3}",
        r" ?[^\t\n\x0b\x0c\r A-Za-z0-9]+[\r\n/]*",
        rf"{_SPACE}*[\r\n]+",
        rf"{_SPACE}+(?!{_NOT_SPACE})",
        rf"{_SPACE}+",
    ]),
}


@functools.lru_cache(maxsize=None)
def ascii_twin(pattern: str):
    """The `re` form of a named pattern (its regex) for ASCII text as bytes, compiled (its chunks
    are bytes: no decoding, no encoding), or None (another pattern; or a Python before 3.11, whose
    `re` has no possessive quantifiers)."""
    import re

    from tokexplorer.core.patterns import NAMED_PATTERNS

    name = next((n for n, p in NAMED_PATTERNS.items() if p == pattern and n in _ASCII_FORMS), None)
    if name is None:
        return None
    try:
        return re.compile(_ASCII_FORMS[name].encode("ascii"))
    except re.error:
        return None


def _count_task(task: tuple) -> tuple[list[bytes], list[int], int]:
    return count_block(*task)


def count_corpus(corpus: CorpusFiles, pattern: str, *, max_unique_mb: float | None = None,
                 workers: int | None = None, block_size: int | None = None,
                 progress: Callable[[int, int], None] | None = None) -> tuple[list[bytes], list[int]]:
    """The corpus's distinct chunks under a named `pattern` (its regex), as UTF-8 bytes in order of
    first occurrence, and their occurrences (two lists: what the merge loop takes). `progress(done, total)` is told the bytes counted
    after each block. Past `max_unique_mb` MB of distinct chunks, a TokexplorerError says so.

    `workers` processes (default: the machine's cores; 1 counts in this process) count blocks of
    `block_size` bytes (default: from the corpus's size, see BLOCK_MIN).
    """
    size = corpus.size
    if workers is None:
        workers = _workers() if _parallel_pays(corpus, pattern) else 1
    if block_size is None:
        block_size = min(BLOCK_MAX, max(BLOCK_MIN, size // (4 * workers) + 1))
    blocks = plan_blocks(corpus, block_size, loose=pattern in LOOSE_PATTERNS)
    tasks = [(corpus, pattern, a, b) for a, b in blocks]
    budget = None if max_unique_mb is None else max_unique_mb * 1e6
    counts = chunk_counts()
    workers = min(workers, len(tasks))
    pool = None
    if workers > 1:
        import multiprocessing

        pool = multiprocessing.get_context("spawn").Pool(workers)
    try:
        results = pool.imap(_count_task, tasks) if pool is not None else map(_count_task, tasks)
        for (start, end), (chunks, ns, bad) in zip(blocks, results):
            if bad >= 0:
                _not_utf8(corpus, bad)
            counts.add_counts(chunks, ns)
            del chunks, ns
            if budget is not None and counts.unique_bytes > budget:
                raise TokexplorerError(unique_over_budget(counts.unique_bytes, end, size, max_unique_mb))
            if progress is not None:
                progress(end, size)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    return counts.chunks(), counts.counts()


def _parallel_pays(corpus: CorpusFiles, pattern: str, samples: int = 16) -> bool:
    """Whether counting the corpus in worker processes takes less time than in this one: one core's
    time estimated from the corpus's size and the share of `samples` pieces spread over it that
    are ASCII (split without `regex`), halved, against the workers' start and return.
    Measured: tinyshakespeare (1.1 MB) and 8 MB of ASCII code count here (8 MB: 0.86 s for the whole
    `train`, 1.64 s with workers), the shared corpora's 9 MB, mostly not ASCII, in workers (2.82 s,
    3.17 s here).

    >>> _parallel_pays(CorpusFiles(("x",), (0,), (100_000,)), GPT4_SPLIT_PATTERN)  # (not read: too small)
    False
    """
    mb = corpus.size / 1e6
    cost = SPAWN_SECONDS + mb * RETURN_SECONDS_PER_MB
    if mb * SECONDS_PER_MB["regex"] / 2 <= cost:
        return False  # whatever the text
    step = corpus.size // samples
    ascii_share = sum(corpus.read(i * step, PIECE_BYTES).isascii() for i in range(samples)) / samples
    compiled = pattern == GPT4_SPLIT_PATTERN and not isinstance(chunk_counts(), PyChunkCounts)
    fast = "compiled" if compiled else "twin" if ascii_twin(pattern) is not None else "regex"
    one_core = mb * (ascii_share * SECONDS_PER_MB[fast] + (1 - ascii_share) * SECONDS_PER_MB["regex"])
    return one_core / 2 > cost


def _workers() -> int:
    """Worker processes for a large corpus: one a core, or none (1: this process) in a daemon
    process, which may not have children.

    (multiprocessing is imported only here: a small corpus's command does without it.)"""
    import multiprocessing

    return 1 if multiprocessing.current_process().daemon else os.cpu_count() or 1


def _not_utf8(corpus: CorpusFiles, offset: int):
    from tokexplorer.core.files.textfile import NotUtf8Error

    path, at = corpus.where(offset)
    with open(path, "rb") as f:
        f.seek(at)
        byte = f.read(1)[0]
    raise NotUtf8Error(path, at, byte)


def unique_over_budget(unique: int, done: int, size: int, limit_mb: float) -> str:
    """The one line that stops counting over the distinct chunks' budget."""
    from tokexplorer.core.budgets import training_peak_gb

    return (f"the corpus's distinct chunks passed {limit_mb:g} MB after {done / 1e6:,.0f} MB of its "
            f"{size / 1e6:,.0f} MB, over BPE training's budget of {limit_mb:g} MB of distinct chunks "
            f"(memory near {training_peak_gb('bpe-stream', limit_mb):.1f} GB at its peak); train on a "
            f"part, or pass a larger --max-mb (about {unique / done * size / 1e6 * 1.2:,.0f} "
            "if the rest is like what was read)")
