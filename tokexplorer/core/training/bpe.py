"""Byte-level BPE training with minbpe's semantics, fast: a compiled merge loop, or pure Python.

Basic (bytes only, `pattern=None`) and Regex (the text split into chunks by a pattern first; pairs
never cross chunks). The merges are those minbpe would learn for the same text, vocab size and
pattern, in the same order, ties included: minbpe picks `max(stats, key=stats.get)`, i.e. among
the pairs with the highest count, the one that occurs first in the current token stream.

Training is a generator, `iter_train`, yielding one `MergeStep` per merge, so a caller can show
progress and stop between merges keeping what was learned; `train` exhausts it into a tokenizer.
`iter_batches` gives the same steps a batch at a time, for a caller with work per batch.
When no pair is left (every chunk is a single token) training stops early: the steps end
before `total`, and the tokenizer's `n_vocab` is the size reached.

How it is fast: Regex counts each distinct chunk once, with its multiplicity (Basic is one chunk
counted once). The distinct chunks are laid end to end as one stream, a doubly linked list over byte
positions that never links across chunks, with pair -> positions lists and weighted pair counts, so
a merge touches only its occurrences and their neighbours, however long a chunk is (a Chinese
sentence is one GPT-4 chunk). The best pair comes from a lazy max-heap keyed (count, first
occurrence): a pair that exists can only lose occurrences (new adjacencies always involve the new
token), so a stale heap entry is never worse than the truth: pop, re-check, push back if it changed.
In a stream large enough to be worth numpy's import, the first merges, each with hundreds of
occurrences or more, run vectorised with numpy on views of the same arrays; the rest, and every
merge of a small stream, run in plain Python, where small merges are cheaper.

Which merge loop runs (`merge_loop()` says, and `tokexplorer train` prints it): the same algorithm
compiled, `_merge.c` (built by `pip install`, or `python setup.py build_ext --inplace` in a source
checkout), when it is built: in Python the merge loop is most of a training run, and it spends
that time in the interpreter, not in the work (compiled: 5 to 10 times faster). Otherwise the
Python loop here, which is also the compiled one's reference: tests/core/test_compiled_merge.py
runs both on the same inputs and asks for the same steps. Setting TOKEXPLORER_PURE_PYTHON=1 forces
the Python loop (and `counting`'s Python count). The build is optional (no compiler: the install still works, training is
slower); the compiled loop takes streams under 2**31 bytes and chunk counts under 2**32, and hands
anything larger to Python.

It does not encode (see `backends.trained_bpe`) nor read or write files (see `files.minbpe`).
It runs past 400 lines because the pure-Python and the compiled loops, and the streaming of big
corpora to them, are one algorithm with one set of tie rules: split, they would drift apart.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import operator
import os
import threading
import time
from array import array
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Iterable, Iterator, Mapping, NamedTuple, Sequence

from tokexplorer.core.patterns import (
    NAMED_PATTERNS,
    SPLIT_TIMEOUT_FLOOR,
    SPLIT_TIMEOUT_PER_MB,
    compile_pattern,
    piece_spans,
    resolve_pattern,
)
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.training.counting import PURE_PYTHON_VARIABLE

if TYPE_CHECKING:
    from tokexplorer.core.backends.trained_bpe import BPETokenizer

# numpy (and the tokenizer) are imported where they are used: reading and splitting a corpus need
# neither, so `tokexplorer train` imports them in a thread meanwhile.


class MergeStep(NamedTuple):
    """One merge: `step` of `total` (1-based), `pair` merged into `new_id`, seen `count` times
    (minbpe's count, which picks the pair), of which `merged` were rewritten: fewer when the pair
    overlaps itself ("aaa" counts (a, a) twice and merges it once). The text shrinks by `merged`
    tokens."""

    step: int
    total: int
    pair: tuple[int, int]
    new_id: int
    count: int
    merged: int


MAX_VOCAB_SIZE = (1 << 31) - 1  # ids are 32-bit signed integers in tiktoken and SentencePiece


def check_vocab_size(vocab_size: int, n_special: int = 0) -> int:
    """The number of merges for a vocab size that includes `n_special` special tokens.

    >>> check_vocab_size(276)
    20
    >>> check_vocab_size(258, 1)
    1
    """
    if vocab_size > MAX_VOCAB_SIZE:
        raise TokexplorerError(f"vocab size {vocab_size:,} is too large: the most is {MAX_VOCAB_SIZE:,} "
                               "(training stops earlier anyway when no pair is left to merge)")
    if vocab_size < 256 + n_special:
        raise TokexplorerError(
            f"vocab size {vocab_size} is too small: the 256 byte tokens"
            + (f" and {n_special} special token(s)" if n_special else "")
            + f" need at least {256 + n_special}"
        )
    return vocab_size - 256 - n_special


def iter_train(
    text: str, vocab_size: int, *, pattern: str | None = None, n_special: int = 0
) -> Iterator[MergeStep]:
    """Learn merges one at a time; `pattern` None is Basic, else a pattern name or regex.

    `n_special` special tokens are kept out of the vocab size (they take the last ids).

    >>> [s.pair for s in iter_train("aaabdaaabac", 259)]
    [(97, 97), (256, 97), (257, 98)]
    """
    total = check_vocab_size(vocab_size, n_special)
    if not text:
        raise TokexplorerError("the corpus is empty; give some text to train on")
    if pattern is None:
        return _train_stream([text.encode("utf-8")], [1], total)
    return iter_train_chunks(count_chunks(text, resolve_pattern(pattern)), vocab_size, n_special=n_special)


def iter_train_chunks(chunks: Mapping[str, int], vocab_size: int, *, n_special: int = 0
                      ) -> Iterator[MergeStep]:
    """Learn merges over chunks already counted by `count_chunks` (chunk -> occurrences, in order
    of first occurrence): what `iter_train` does after splitting, for a caller that shows the
    split as a step of its own.

    >>> [s.pair for s in iter_train_chunks({"ab": 2, "b": 1}, 257)]
    [(97, 98)]
    """
    total = check_vocab_size(vocab_size, n_special)
    return _train_stream([w.encode("utf-8") for w in chunks], list(chunks.values()), total)


def iter_batches(chunks: list[bytes], freq: list[int], vocab_size: int, *, n_special: int = 0
                 ) -> Iterator[list[MergeStep]]:
    """The merge steps over distinct chunks (UTF-8, in order of first occurrence; chunk i counting
    freq[i] times) a batch at a time: the compiled loop's calls (up to COMPILED_BATCH merges each),
    for a caller with work to do per batch rather than per merge (`runner.run_bpe`).

    >>> [[s.pair for s in batch] for batch in iter_batches([b"abc"], [2], 258)]
    [[(97, 98), (256, 99)]]
    """
    return _step_batches(chunks, freq, check_vocab_size(vocab_size, n_special))


class MergeRecord(NamedTuple):
    """A merge as a view shows it: the new token's id (its rank), the pair, the new token's bytes,
    minbpe's count of the pair, and the corpus's length in tokens after the merge."""

    rank: int
    pair: tuple[int, int]
    token: bytes
    count: int
    tokens: int


def iter_records(steps: Iterable[MergeStep], corpus_bytes: int) -> Iterator[MergeRecord]:
    """Merge steps as records, for a corpus of `corpus_bytes` bytes (each merged occurrence
    shortens it by one token).

    >>> [r[2:] for r in iter_records(iter_train("aaabdaaabac", 258), 11)]
    [(b'aa', 4, 9), (b'aaa', 2, 7)]
    """
    records = RecordMaker(corpus_bytes)
    for step in steps:
        yield from records([step])


class RecordMaker:
    """Batches of merge steps, in order, made into records (`iter_records` a batch at a time, for a
    caller given batches: `iter_batches`), with no Python call per merge but the new token's
    concatenation (the one step that depends on the merges before it).

    >>> records = RecordMaker(6)
    >>> [[r.token for r in records(batch)] for batch in iter_batches([b"abc"], [2], 258)]
    [[b'ab', b'abc']]
    """

    def __init__(self, corpus_bytes: int):
        self.vocab = [bytes([i]) for i in range(256)]  # id -> bytes
        self.tokens = corpus_bytes  # after the merges so far

    def __call__(self, batch: list[MergeStep]) -> list[MergeRecord]:
        vocab = self.vocab
        pairs = list(map(_PAIR, batch))
        for a, b in pairs:
            vocab.append(vocab[a] + vocab[b])
        after = list(itertools.accumulate(map(_MERGED, batch), operator.sub, initial=self.tokens))
        self.tokens = after[-1]
        return list(map(_make_record, zip(map(_NEW_ID, batch), pairs, vocab[len(vocab) - len(batch):],
                                          map(_COUNT, batch), after[1:])))


_PAIR, _NEW_ID, _COUNT, _MERGED = (operator.itemgetter(MergeStep._fields.index(f))
                                   for f in ("pair", "new_id", "count", "merged"))
_make_record = functools.partial(tuple.__new__, MergeRecord)  # from its fields, without a Python call


def preview_chunks(sample: str, pattern: str, *, timeout: float = 0.25, limit: int = 200) -> list[str]:
    """The first `limit` chunks of a sample under a pattern, for a live preview: time-boxed and
    run with the interpreter lock released (`concurrent`), so a runaway pattern neither freezes
    a window nor outlives the box. Raises TokexplorerError for an invalid or runaway pattern.

    >>> preview_chunks("hello world!!", "gpt2")
    ['hello', ' world', '!!']
    """
    compiled = compile_pattern(check_pattern(pattern))
    chunks = []
    try:
        for m in compiled.finditer(sample, timeout=timeout, concurrent=True):
            chunk = m.group(compiled.groups)  # as findall in count_chunks: the group if there is one
            if chunk:
                chunks.append(chunk)
                if len(chunks) >= limit:
                    break
    except TimeoutError:
        raise TokexplorerError(
            f"the split pattern took more than {timeout:g} s on a {len(sample):,}-character sample "
            "(catastrophic backtracking?); simplify the pattern"
        ) from None
    return chunks


def check_pattern(pattern: str) -> str:
    """A split pattern's regex (a name resolved), refused if invalid or if it has more than one
    capturing group (minbpe's findall would then yield tuples, not chunks).

    >>> check_pattern("(a)(b)")
    Traceback (most recent call last):
    ...
    tokexplorer.core.tokenizer.TokexplorerError: the split pattern '(a)(b)' has 2 capturing groups; make them non-capturing, (?:...), so that each match is one chunk
    """
    regex = resolve_pattern(pattern)
    groups = compile_pattern(regex).groups
    if groups > 1:
        raise TokexplorerError(
            f"the split pattern {pattern!r} has {groups} capturing groups; make them "
            "non-capturing, (?:...), so that each match is one chunk"
        )
    return regex


def count_chunks(text: str, pattern: str) -> Counter[str]:
    """Each distinct chunk and its occurrences, in order of first occurrence (time-boxed).

    Memory stays near the distinct chunks' size, not the text's chunk list (about 15 times the
    text): a named pattern splits pieces of the text, each thread counting its own contiguous run
    of pieces with the `regex` module's matching done with the interpreter lock released
    (`concurrent`); the runs' counts are added in order, so first occurrences keep their order.
    Another pattern cannot be cut, so its matches are counted as they are found. (Measured on a
    busy 2-core machine the threads took turns rather than sharing the cores: corpus files are
    counted in worker processes instead, by `counting.count_corpus`.)

    >>> count_chunks("the cat the", r"\\S+")
    Counter({'the': 2, 'cat': 1})
    """
    pattern = check_pattern(pattern)  # a name becomes its regex
    compiled = compile_pattern(pattern)
    words: Counter[str] = Counter()
    timeout = None
    try:
        if pattern not in NAMED_PATTERNS.values():
            timeout = SPLIT_TIMEOUT_FLOOR + SPLIT_TIMEOUT_PER_MB * len(text) / 1e6
            words.update(_matches(compiled, text, timeout))
        else:
            threads = min(os.cpu_count() or 1, COUNT_THREADS)
            size = max(COUNT_PIECE_MIN, min(COUNT_PIECE_MAX, -(-len(text) // (2 * threads))))
            for counts in _count_runs(compiled, text, piece_spans(text, size=size), threads):
                words.update(counts)
    except TimeoutError:
        raise TokexplorerError(
            f"the split pattern took more than {timeout:.0f} s on {len(text)} characters "
            "(catastrophic backtracking?); simplify the pattern"
        ) from None
    words.pop("", None)
    return words


def _matches(compiled, text: str, timeout: float) -> Iterator[str]:
    """What minbpe's `findall` returns, one match at a time: the match, or its one capturing
    group (empty when the group did not take part; `check_pattern` refuses more groups)."""
    whole = compiled.groups == 0
    for m in compiled.finditer(text, timeout=timeout, concurrent=True):
        yield m[0] if whole else m[1] or ""


def _count_runs(compiled, text: str, spans: list[tuple[int, int]], threads: int) -> Iterator[Counter[str]]:
    """The chunk counts of each of up to `threads` contiguous runs of `spans`, in order, each
    counted by its own thread one piece at a time.

    (Plain threads: concurrent.futures costs more to import than a small corpus takes to split.)
    """
    def count(run: list[tuple[int, int]]) -> Counter[str]:
        counts: Counter[str] = Counter()
        for a, b in run:
            counts.update(compiled.findall(text[a:b], concurrent=True))
        return counts

    size = -(-len(spans) // max(threads, 1))
    runs = [spans[i:i + size] for i in range(0, len(spans), size)]
    if len(runs) <= 1:
        yield from map(count, runs)
        return
    results: list[Counter[str] | None] = [None] * len(runs)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            results[i] = count(runs[i])
        except BaseException as exc:  # re-raised in the caller's thread below
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(len(runs))]
    for w in workers:
        w.start()
    for i, w in enumerate(workers):
        w.join()
        if errors:
            raise errors[0]
        yield results[i]
        results[i] = None


COUNT_THREADS = 4  # threads that split a text with a named pattern, at most
COUNT_PIECE_MIN = 1 << 16  # characters: smaller pieces are not worth a thread
COUNT_PIECE_MAX = 1 << 22  # characters: a piece's chunk list is about 15 times its text (smaller pieces: slower)


def train(
    text: str,
    vocab_size: int,
    *,
    pattern: str | None = None,
    special_tokens: dict[str, int] | list[str] | None = None,
    name: str = "trained",
) -> BPETokenizer:
    """Train to `vocab_size` (special tokens included) and return the tokenizer.

    Special tokens given as a list take the ids after the merges; as a dict, their ids are checked.

    >>> tok = train("aaabdaaabac", 259)
    >>> tok.merges
    {(97, 97): 256, (256, 97): 257, (257, 98): 258}
    >>> tok.encode("aaabdaaabac").ids
    [258, 100, 258, 97, 99]
    """
    specials = special_tokens or {}
    n_special = len(specials)
    check_vocab_size(vocab_size, n_special)
    merges = {s.pair: s.new_id for s in iter_train(text, vocab_size, pattern=pattern,
                                                   n_special=n_special)}
    from tokexplorer.core.backends.trained_bpe import BPETokenizer

    return BPETokenizer(merges, resolve_pattern(pattern) if pattern is not None else None,
                        assign_special_ids(specials, 256 + len(merges)), name=name)


def assign_special_ids(special_tokens: dict[str, int] | list[str], first_free: int) -> dict[str, int]:
    """Special-token ids: a list takes ids from `first_free`; a dict's ids must not collide.

    >>> assign_special_ids(["<|endoftext|>", "<|pad|>"], 300)
    {'<|endoftext|>': 300, '<|pad|>': 301}
    """
    if not isinstance(special_tokens, dict):
        special_tokens = {t: first_free + i for i, t in enumerate(special_tokens)}
    seen: dict[int, str] = {}
    for token, token_id in special_tokens.items():
        if not token:
            raise TokexplorerError("a special token cannot be empty")
        if token_id < first_free:
            raise TokexplorerError(
                f"special token {token!r} has id {token_id}, which is a byte or merged token "
                f"(ids below {first_free}); give it an id of {first_free} or more"
            )
        if token_id in seen:
            raise TokexplorerError(
                f"special tokens {seen[token_id]!r} and {token!r} both have id {token_id}; "
                "give each its own id"
            )
        seen[token_id] = token
    return dict(special_tokens)


# --- the stream of distinct chunks -----------------------------------------------------------


def merge_loop() -> str:
    """Which merge loop training runs, and why: "compiled", or "pure Python (...)"."""
    if os.environ.get(PURE_PYTHON_VARIABLE, "") not in ("", "0"):
        return f"pure Python ({PURE_PYTHON_VARIABLE} is set)"
    try:
        from tokexplorer.core.training import _merge  # noqa: F401
    except ImportError:
        return "pure Python (the compiled module is not built)"
    return "compiled"



def _train_stream(chunks: list[bytes], freq: list[int], total: int) -> Iterator[MergeStep]:
    """Merge steps over distinct chunks (in order of first occurrence), chunk i counting freq[i]
    times, by the compiled loop when there is one (see the module docstring), else in Python."""
    return itertools.chain.from_iterable(_step_batches(chunks, freq, total))


def _step_batches(chunks: list[bytes], freq: list[int], total: int) -> Iterator[list[MergeStep]]:
    """`_train_stream`'s steps in batches: the compiled loop's calls, or the Python loop's steps
    COMPILED_BATCH at a time."""
    if merge_loop() == "compiled":
        from tokexplorer.core.training._merge import Merger

        try:
            return _train_compiled(Merger(chunks, freq, total))
        except OverflowError:
            pass  # over the compiled loop's 32-bit numbers (2**31 bytes, a chunk counted 2**32 times)
    return _batched(_train_python(chunks, freq, total))


def _batched(steps: Iterator[MergeStep]) -> Iterator[list[MergeStep]]:
    """Steps of the Python loop in batches as the compiled loop gives them: up to COMPILED_BATCH,
    fewer when they take long (a caller stops between batches)."""
    batch: list[MergeStep] = []
    started = time.perf_counter()
    for step in steps:
        batch.append(step)
        if len(batch) >= COMPILED_BATCH or time.perf_counter() - started >= BATCH_SECONDS:
            yield batch
            batch = []
            started = time.perf_counter()
    if batch:
        yield batch


# Merges asked of the compiled loop per call (it returns fewer when they are large, so that a call
# stays in the milliseconds: the caller can stop between calls).
COMPILED_BATCH = 64
# The Python loop's batches end after this long too.
BATCH_SECONDS = 0.01


def _train_compiled(merger) -> Iterator[list[MergeStep]]:
    """Batches of merge steps from a `_merge.Merger`: the same as `_train_python`'s."""
    # The merger gives a MergeStep's fields: made into one without a Python call per merge.
    make = functools.partial(tuple.__new__, MergeStep)
    while batch := merger.merge(COMPILED_BATCH):
        yield list(map(make, batch))


def _train_python(chunks: list[bytes], freq: list[int], total: int) -> Iterator[MergeStep]:
    """Merge steps over distinct chunks (in order of first occurrence), chunk i counting freq[i]
    times, in Python: the reference of the compiled loop. Basic is one chunk counted once.

    The chunks are laid end to end as one stream, a doubly linked list over byte positions that
    never links across a chunk boundary; each position carries its chunk's multiplicity.
    subtle: minbpe breaks ties by first occurrence in the whole text; distinct chunks in order of
    first occurrence, laid end to end, order those occurrences the same way, so a position in
    this stream is the tie key.
    """
    data = b"".join(chunks)
    size = len(data)
    m = 256 + total + 1  # pair (a, b) is the int a * m + b: cheaper to hash than a tuple
    lengths = list(map(len, chunks))
    del chunks  # the stream holds them now
    if size >= NUMPY_STREAM_MIN:
        tokens, nxt, prv, weight, counts, positions = _stream_numpy(data, lengths, freq, m)
    else:
        tokens, nxt, prv, weight, counts, positions = _stream_python(data, lengths, freq, m)
    unit = all(f == 1 for f in freq)  # then a pair's count is its number of positions
    # numpy views of the same memory, for merges with many occurrences (see _merge_many); None
    # once merges are small, or from the start for a small stream (tokens is then a list)
    views: tuple | None = None
    if isinstance(tokens, array):
        import numpy as np

        views = tuple(np.frombuffer(x, dtype=np.int64) for x in (tokens, nxt, prv, weight))

    def first_position(p: int) -> int:
        a, b = divmod(p, m)
        where = positions[p]
        i = 0
        while True:
            pos = where[i]
            if tokens[pos] == a:
                q = nxt[pos]
                if q >= 0 and tokens[q] == b:
                    if i:
                        del where[:i]  # stale for good: a pair is never made again where it was
                    return pos
            i += 1

    # The heap holds ints, (cap - count, first position, pair) packed in bit fields, so that the
    # smallest is the most frequent pair seen first; ints compare much faster than tuples.
    pair_bits = (m * m).bit_length()
    count_shift = pair_bits + max(size, 1).bit_length()
    cap = 1 << max(size * max(freq, default=1), 1).bit_length()
    pair_mask = (1 << pair_bits) - 1
    position_mask = (1 << (count_shift - pair_bits)) - 1
    low_mask = (1 << count_shift) - 1  # the position and pair fields
    heap = [((cap - n) << count_shift) | (positions[p][0] << pair_bits) | p for p, n in counts.items()]
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    for step in range(1, total + 1):
        while heap:
            key = pop(heap)
            p = key & pair_mask
            n = counts.get(p, 0)
            if n <= 0:
                counts.pop(p, None)
                continue
            if n != cap - (key >> count_shift):
                # The count fell: re-file it, keeping the position (never later than the truth,
                # so still fine for the lazy heap); the position is checked when it counts.
                push(heap, ((cap - n) << count_shift) | (key & low_mask))
                continue
            at = first_position(p)
            if at != (key >> pair_bits) & position_mask:
                push(heap, ((cap - n) << count_shift) | (at << pair_bits) | p)
                continue
            break
        else:
            return
        a, b = divmod(p, m)
        new = 255 + step
        # new pair -> its positions, ascending; counted once the merge is done
        created: defaultdict[int, list[int]] = defaultdict(list)
        candidates = positions.pop(p)
        if views is not None and len(candidates) < VECTOR_MERGE_MIN:
            # Merges only get smaller (the best count never grows, and a pair's positions are
            # listed when it is made): from now on Python is faster, and a list reads faster.
            tokens = tokens.tolist()
            views = None
        done = 0  # occurrences rewritten, weighted
        if views is not None and a != b:
            done = _merge_many(views, candidates, a, b, new, m, counts, created)
            candidates = ()
        for pos in candidates:
            # subtle: occurrences are visited left to right and re-checked, so an overlapping
            # one ("aaa" merging (a, a)) is skipped exactly as a left-to-right rewrite skips it.
            if tokens[pos] != a:
                continue
            q = nxt[pos]
            if q < 0 or tokens[q] != b:
                continue
            f = weight[pos]
            done += f
            left = prv[pos]
            right = nxt[q]
            if left >= 0:
                t = tokens[left]
                if t == new:
                    # subtle: the occurrence just before ("abab" merging (a, b)) made the pair
                    # (new, a) here, its last one; it becomes (new, new) instead.
                    created[t * m + a].pop()
                else:
                    counts[t * m + a] -= f
                created[t * m + new].append(left)
            if right >= 0:
                t = tokens[right]
                counts[b * m + t] -= f
                created[new * m + t].append(pos)
                prv[right] = pos
            tokens[pos] = new
            tokens[q] = -1
            nxt[pos] = right
        del counts[p]
        for k, where in created.items():
            if where:
                counts[k] = n_k = len(where) if unit else sum(map(weight.__getitem__, where))
                positions[k] = where if len(where) < 32 else array("q", where)
                # where[0] may be stale, i.e. earlier than the truth: fine for the lazy heap.
                push(heap, ((cap - n_k) << count_shift) | (where[0] << pair_bits) | k)
        yield MergeStep(step, total, (a, b), new, n, done)


def _stream_python(data: bytes, lengths: list[int], freq: list[int], m: int) -> tuple:
    """The stream's starting state in plain Python, for a small stream (numpy would cost more to
    import than it saves; lists index faster than arrays): tokens, nxt, prv and weight (lists),
    pair -> count, and pair -> ascending positions."""
    size = len(data)
    tokens = list(data)
    nxt = list(range(1, size + 1))
    prv = list(range(-1, size - 1))
    weight: list[int] = []
    codes = [a * m + b for a, b in zip(data, data[1:])]  # the pair starting at each position
    end = 0
    for n, f in zip(lengths, freq):
        weight += [f] * n  # position -> occurrences of its chunk
        end += n
        nxt[end - 1] = -1
        if end < size:
            prv[end] = -1
            codes[end - 1] = -1  # no pair across chunks
    grouped: defaultdict[int, list[int]] = defaultdict(list)  # pair -> positions, ascending
    for pos, code in enumerate(codes):
        grouped[code].append(pos)
    grouped.pop(-1, None)
    unit = all(f == 1 for f in freq)
    counts = {p: len(w) if unit else sum(map(weight.__getitem__, w)) for p, w in grouped.items()}
    return tokens, nxt, prv, weight, counts, dict(grouped)


def _stream_numpy(data: bytes, lengths: list[int], freq: list[int], m: int) -> tuple:
    """The stream's starting state, vectorised (a large stream): as `_stream_python`, with
    tokens an array, so that the first, large merges can run on numpy views of it."""
    import numpy as np

    size = len(data)
    tokens = array("q", np.frombuffer(data, dtype=np.uint8).astype(np.int64).tobytes())
    # subtle: arrays, not lists: a list of a million distinct ints costs 36 bytes an entry.
    nxt = array("q", np.arange(1, size + 1).tobytes())  # position -> next live one in its chunk, or -1
    prv = array("q", np.arange(-1, size - 1).tobytes())  # position -> previous live one, or -1
    ends = np.cumsum(np.asarray(lengths, dtype=np.int64))
    for end in ends.tolist():
        nxt[end - 1] = -1
        if end < size:
            prv[end] = -1
    weight = np.repeat(np.asarray(freq, dtype=np.int64), lengths)  # position -> occurrences
    counts: dict[int, int] = {}  # pair -> occurrences in the whole text
    # pair -> ascending positions (an array or a list), some no longer valid
    positions: dict[int, Sequence[int]] = {}
    if size >= 2:
        raw = np.frombuffer(data, dtype=np.uint8).astype(np.uint16)
        inside = np.ones(size - 1, dtype=bool)  # a pair starts here (not at a chunk's last byte)
        inside[ends[:-1] - 1] = False
        at = np.flatnonzero(inside)
        codes = (raw[at] << 8) | raw[at + 1]  # initial pairs are bytes: 16 bits, radix-sortable
        order = np.argsort(codes, kind="stable")  # stable: positions stay ascending per pair
        ordered = codes[order]
        if len(ordered):
            bounds = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
            firsts = np.concatenate(([0], bounds))
            sums = np.add.reduceat(weight[at[order]], firsts).tolist()
            ranges = zip(firsts.tolist(), [*bounds.tolist(), len(ordered)])
            sorted_at = array("q", at[order].tobytes())  # slices of it: 8 bytes a position
            for (i, j), code, n in zip(ranges, ordered[firsts].tolist(), sums):
                p = (code >> 8) * m + (code & 255)
                counts[p] = n
                positions[p] = sorted_at[i:j]
    return tokens, nxt, prv, array("q", weight.tobytes()), counts, positions


# Streams of this many bytes or more (the distinct chunks laid end to end) start and make their
# first, large merges with numpy; smaller ones run in plain Python and never import it (the
# import costs more than numpy saves them: a small corpus trains in a fraction of a second).
NUMPY_STREAM_MIN = 1 << 16


# Merges of a pair listed at this many positions or more run vectorised (numpy), not in Python.
VECTOR_MERGE_MIN = 200


def _merge_many(views, candidates: Sequence[int], a: int, b: int, new: int, m: int,
                counts: dict[int, int], created: defaultdict[int, list[int]]) -> int:
    """The Python merge loop of `_train_stream` done with numpy, for a pair of two different
    tokens (so occurrences cannot overlap): the same writes, count deltas and new pairs. Returns
    the occurrences rewritten, weighted.

    subtle: occurrence k's right neighbour may be occurrence k+1 ("abab"): the loop first makes
    (new, a) there and then turns it into (new, new); here that pair is made directly.
    """
    import numpy as np

    tokens, nxt, prv, weight = views
    at = np.asarray(candidates, dtype=np.int64)
    right_of = nxt[at]
    ok = (tokens[at] == a) & (right_of >= 0)
    ok[ok] = tokens[right_of[ok]] == b
    at, q = at[ok], right_of[ok]
    if not len(at):
        return 0
    f = weight[at]
    left, right = prv[at], nxt[q]
    after_prev = np.zeros(len(at), dtype=bool)  # the left neighbour is the previous occurrence
    after_prev[1:] = left[1:] == q[:-1]
    has_left = (left >= 0) & ~after_prev
    has_right = right >= 0
    # Pairs that disappear, with their weights.
    gone = np.concatenate((tokens[left[has_left]] * m + a, b * m + tokens[right[has_right]]))
    gone_f = np.concatenate((f[has_left], f[has_right]))
    codes, inverse = np.unique(gone, return_inverse=True)
    for code, n in zip(codes.tolist(), np.bincount(inverse, weights=gone_f).astype(np.int64).tolist()):
        counts[code] -= n
    # Pairs that appear, at their left token's position.
    before_next = np.zeros(len(at), dtype=bool)
    before_next[:-1] = after_prev[1:]
    made_right = has_right & ~before_next
    made = np.concatenate((tokens[left[has_left]] * m + new,
                           np.full(int(after_prev.sum()), new * m + new, dtype=np.int64),
                           new * m + tokens[right[made_right]]))
    made_at = np.concatenate((left[has_left], at[:-1][after_prev[1:]], at[made_right]))
    # The writes (after reading every neighbour above).
    tokens[at] = new
    tokens[q] = -1
    nxt[at] = right
    prv[right[has_right]] = at[has_right]
    order = np.lexsort((made_at, made))
    made, made_at = made[order], made_at[order]
    bounds = np.flatnonzero(made[1:] != made[:-1]) + 1
    made_at = made_at.tolist()
    for i, j, code in zip([0, *bounds.tolist()], [*bounds.tolist(), len(made)],
                          made[np.concatenate(([0], bounds))].tolist() if len(made) else []):
        created[code] = made_at[i:j]
    return int(f.sum())
