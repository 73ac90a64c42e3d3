"""BPE by hand: the lecture's `get_stats` and `merge`, one merge at a time, on a text or on a list of
integers typed in.

- `pair_counts(ids)` counts adjacent pairs in order of first occurrence (a dict, as `get_stats`);
  `sorted_counts(counts)` is that dict as `sorted(((v, k) for k, v in stats.items()),
  reverse=True)` prints it; `merge(ids, pair, new_id)` replaces each occurrence left to right.
- `BpeByHand` runs merges on a text's UTF-8 bytes, whole (`none`) or cut into the GPT-2 / GPT-4
  regex chunks first (pairs are counted within a chunk, never across two). Each merge takes the
  top pair as minbpe does, `max(stats, key=stats.get)`: among equal counts, the pair met first in
  the current sequence. The sorted table breaks the same tie the other way (the largest pair
  first), so a step whose top count is shared records the tied pairs (`MergeStep.tied`): that is
  where the two readings differ and the tie rule decides.
- `merge_typed` is the lecture's `merge([5, 6, 6, 7, 9, 1], (6, 7), 99)` on numbers typed as text.

How it stays fast on a big text (20 merges on 1 MB in about a second): the sequence is a linked
list over byte positions (a chunk's last position links to nothing), each pair keeps the positions
where it occurred, and a merge visits only its own occurrences and their neighbours, adjusting the
counts there. The counts sit in a lazy max-heap keyed (count, pair), so the sorted table's first
rows are a few pops, not a sort of every pair. An occurrence, once gone, never comes back (a
position only ever takes a new id), so stale positions and heap entries are skipped when met.
tests/core/test_bpe_by_hand.py checks every step against the plain lecture loop.

It trains no tokenizer (see `core.training.bpe`) and draws nothing: the `lesson bpe` command and the
BPE-by-hand view show what it returns.
"""

from __future__ import annotations

import heapq
import re
import threading
from array import array
from dataclasses import dataclass, field
from typing import Callable, NamedTuple, Sequence

import numpy as np

from tokexplorer.core.patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, split
from tokexplorer.core.tokenizer import TokexplorerError

Pair = tuple[int, int]

FIRST_NEW_ID = 256  # merge k (from 0) makes token 256 + k, as in the lecture
TOP_PAIRS = 10  # rows of the sorted table kept with each step
MAX_TEXT_BYTES = 10_000_000  # a longer text is refused (the linked list costs ~40 bytes a byte)
MAX_TYPED_IDS = 100_000  # numbers in a typed list
PATTERNS = {"none": None, "gpt2": GPT2_SPLIT_PATTERN, "gpt4": GPT4_SPLIT_PATTERN}


def pair_counts(ids: Sequence[int]) -> dict[Pair, int]:
    """How often each adjacent pair occurs, in order of first occurrence (the lecture's get_stats).

    >>> pair_counts([1, 2, 3, 1, 2])
    {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    """
    counts: dict[Pair, int] = {}
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def sorted_counts(counts: dict[Pair, int]) -> list[tuple[int, Pair]]:
    """(count, pair), largest count first and, among equal counts, the largest pair first: what
    `sorted(((v, k) for k, v in stats.items()), reverse=True)` prints.

    >>> sorted_counts({(1, 2): 2, (2, 3): 1, (3, 1): 1})
    [(2, (1, 2)), (1, (3, 1)), (1, (2, 3))]
    """
    return sorted(((v, k) for k, v in counts.items()), reverse=True)


def merge(ids: Sequence[int], pair: Pair, new_id: int) -> list[int]:
    """`ids` with every occurrence of `pair`, read left to right, replaced by `new_id`.

    >>> merge([5, 6, 6, 7, 9, 1], (6, 7), 99)
    [5, 6, 99, 9, 1]
    >>> merge([1, 1, 1], (1, 1), 2)  # subtle: left to right, so the first two merge
    [2, 1]
    """
    out: list[int] = []
    i, n = 0, len(ids)
    while i < n:
        if i + 1 < n and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def parse_ids(text: str, what: str = "the list") -> list[int]:
    """Whole numbers from 0, written with commas or spaces between them, brackets allowed.

    >>> parse_ids("[5, 6, 6, 7, 9, 1]")
    [5, 6, 6, 7, 9, 1]
    """
    body = text.strip().strip("[]()").strip()
    words = [w for w in re.split(r"[,\s]+", body) if w]
    bad = [w for w in words if not re.fullmatch(r"[0-9]{1,18}", w)]
    if bad:
        raise TokexplorerError(f"{what}: {bad[0]!r} is not a whole number from 0; write numbers "
                               "separated by commas, e.g. 5, 6, 6, 7, 9, 1")
    if len(words) > MAX_TYPED_IDS:
        raise TokexplorerError(f"{what} has {len(words):,} numbers; at most {MAX_TYPED_IDS:,} are merged by hand")
    return [int(w) for w in words]


def parse_pair(text: str) -> Pair:
    """Two whole numbers, e.g. '6, 7' or '(6, 7)'.

    >>> parse_pair("(6, 7)")
    (6, 7)
    """
    ids = parse_ids(text, "the pair")
    if len(ids) != 2:
        raise TokexplorerError(f"the pair needs two numbers, e.g. 6, 7 (got {len(ids)})")
    return ids[0], ids[1]


@dataclass(frozen=True)
class TypedMerge:
    """A typed list, its pair counts (sorted as the lecture prints them) and the list after merging
    `pair` into `new_id`."""

    ids: tuple[int, ...]
    counts: tuple[tuple[int, Pair], ...]
    pair: Pair
    new_id: int
    merged: tuple[int, ...]


def merge_typed(ids: str, pair: str, new_id: str) -> TypedMerge:
    """The lecture's `merge` on numbers typed as text.

    >>> merge_typed("5, 6, 6, 7, 9, 1", "6, 7", "99").merged
    (5, 6, 99, 9, 1)
    """
    numbers = parse_ids(ids)
    the_pair = parse_pair(pair)
    new = parse_ids(new_id, "the new id")
    if len(new) != 1:
        raise TokexplorerError("the new id is one whole number, e.g. 99")
    return TypedMerge(tuple(numbers), tuple(sorted_counts(pair_counts(numbers))), the_pair, new[0],
                      tuple(merge(numbers, the_pair, new[0])))


class MergeStep(NamedTuple):
    """One merge: `pair` (seen `count` times) became `new_id`, leaving `length` ids.

    `top` is the sorted table before the merge (up to TOP_PAIRS rows). `tied` lists, in order of
    first occurrence, the pairs that shared the top count, when more than one did (else empty):
    minbpe took the first of them, `pair`; the sorted table lists the largest pair first.
    """

    pair: Pair
    count: int
    new_id: int
    length: int
    top: tuple[tuple[int, Pair], ...]
    tied: tuple[Pair, ...] = ()

    @property
    def table_first(self) -> Pair:
        """The pair the sorted table puts first (differs from `pair` where the tie rule decided)."""
        return self.top[0][1]


@dataclass(frozen=True)
class ByHandSnapshot:
    """Where a BPE-by-hand run stands, for a view: the merges so far, the sorted table of the
    current pair counts, and the start of the current sequence with the next pair's occurrences."""

    pattern: str
    n_bytes: int  # UTF-8 bytes of the text: the length before any merge
    length: int  # ids now
    steps: tuple[MergeStep, ...]
    table: tuple[tuple[int, Pair], ...]  # the current counts, sorted, up to the rows asked for
    n_pairs: int  # distinct pairs now
    next_pair: Pair | None  # the pair the next merge takes (None: no pair is left)
    next_tied: tuple[Pair, ...]  # the pairs sharing its count, first occurrence first, if several
    head: tuple[int, ...]  # the sequence's first ids
    chunk_starts: tuple[int, ...]  # indices in `head` where a regex chunk starts (none for `none`)
    marks: tuple[int, ...]  # indices in `head` where the next merge would replace `next_pair`
    vocab: dict[int, bytes] = field(default_factory=dict)  # each new id's bytes

    @property
    def ratio(self) -> float:
        """Compression so far: bytes per id."""
        return self.n_bytes / self.length if self.length else 0.0

    def token_bytes(self, token_id: int) -> bytes:
        return bytes([token_id]) if token_id < FIRST_NEW_ID else self.vocab[token_id]


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise TokexplorerError(f"the text has a lone surrogate (U+{ord(text[exc.start]):04X}) at character "
                               f"{exc.start:,}, which UTF-8 cannot encode: remove it") from None


class BpeByHand:
    """The lecture's merge loop on one text, a merge at a time (see the module's docstring).

    >>> lesson = BpeByHand("aaabdaaabac")
    >>> [(s.pair, s.count, s.new_id, s.length) for s in lesson.run(3)]
    [((97, 97), 4, 256, 9), ((256, 97), 2, 257, 7), ((257, 98), 2, 258, 5)]
    """

    def __init__(self, text: str, pattern: str = "none"):
        if pattern not in PATTERNS:
            raise TokexplorerError(f"unknown pre-split {pattern!r}: use {', '.join(PATTERNS)}")
        data = _utf8(text)
        if len(data) > MAX_TEXT_BYTES:
            raise TokexplorerError(
                f"the text is {len(data):,} bytes; BPE by hand takes at most {MAX_TEXT_BYTES:,} "
                "(10 MB): use a smaller part of it")
        self.pattern = pattern
        self.n_bytes = len(data)
        self.steps: list[MergeStep] = []
        self.vocab: dict[int, bytes] = {}  # new id -> its bytes
        if PATTERNS[pattern] is None or not text:
            starts = [0] if data else []
        else:
            # The chunks' bytes end to end, and where each chunk starts. (Text that no match
            # covered would be in no chunk, as in minbpe; these two patterns cover all of it.)
            spans = split(text, PATTERNS[pattern])
            chunks = [text[a:b].encode("utf-8") for a, b in spans]
            data = b"".join(chunks)
            lengths = np.fromiter(map(len, chunks), dtype=np.int64, count=len(chunks))
            starts = (np.cumsum(lengths) - lengths).tolist()
        self._build(np.frombuffer(data, dtype=np.uint8).astype(np.int64), starts)

    def _build(self, ids: np.ndarray, starts: list[int]) -> None:
        n = len(ids)
        self.length = n
        self._starts = starts
        self._ids = array("q", ids.tobytes())  # the id at each live position
        nxt = np.arange(1, n + 1, dtype=np.int64)
        prv = np.arange(-1, n - 1, dtype=np.int64)
        first = np.zeros(n, dtype=bool)
        first[starts] = True
        nxt[np.flatnonzero(first[1:])] = -1  # a chunk's last position links to nothing
        if n:
            nxt[-1] = -1
        prv[first] = -1
        self._next = array("q", nxt.tobytes())
        self._prev = array("q", prv.tobytes())
        # Each byte pair's positions, ascending, from one stable sort of the pairs' codes.
        positions = np.flatnonzero(nxt[:-1] >= 0) if n else np.zeros(0, dtype=np.int64)
        codes = (ids[positions] * 256 + ids[positions + 1]).astype(np.uint16)
        order = np.argsort(codes, kind="stable")  # a radix sort for 16-bit keys
        codes, positions = codes[order], positions[order]
        bounds = np.flatnonzero(np.diff(codes)) + 1
        group_starts = np.concatenate(([0], bounds)) if len(codes) else bounds
        group_ends = np.concatenate((bounds, [len(codes)])) if len(codes) else bounds
        by_first = np.argsort(positions[group_starts], kind="stable")  # first occurrence order
        self._counts: dict[Pair, int] = {}
        self._where: dict[Pair, list[int] | np.ndarray] = {}  # pair -> positions it occurred at
        for g in by_first.tolist():
            s, e = int(group_starts[g]), int(group_ends[g])
            pair = divmod(int(codes[s]), 256)
            self._counts[pair] = e - s
            self._where[pair] = positions[s:e]
        self._heap = [(-c, (-a, -b)) for (a, b), c in self._counts.items()]  # max-heap of (count, pair)
        heapq.heapify(self._heap)

    # --- the table -------------------------------------------------------------------------

    def _leading(self, rows: int) -> list[tuple[int, Pair]]:
        """The first `rows` rows of the sorted table, and every further row sharing the first one's
        count (the tie, if any). Entries are popped, checked against the counts and pushed back."""
        out: list[tuple[int, Pair]] = []
        seen: set[Pair] = set()
        heap, counts = self._heap, self._counts
        while heap:
            neg, (na, nb) = heap[0]
            count, pair = -neg, (-na, -nb)
            if out and len(out) >= rows and count < out[0][0]:
                break
            heapq.heappop(heap)
            if counts.get(pair) != count or pair in seen:
                continue  # stale: the count changed since (its new entry is in the heap too)
            seen.add(pair)
            out.append((count, pair))
        for count, (a, b) in out:
            heapq.heappush(heap, (-count, (-a, -b)))
        return out

    def table(self, rows: int = TOP_PAIRS) -> list[tuple[int, Pair]]:
        """The current pair counts as the lecture's sorted() prints them, the first `rows` rows."""
        return self._leading(rows)[:rows]

    @property
    def n_pairs(self) -> int:
        return len(self._counts)

    def _first_live(self, pair: Pair) -> int:
        """The position where `pair` first occurs now (where minbpe's get_stats would meet it)."""
        where = self._where[pair]
        live = [p for p in (where.tolist() if isinstance(where, np.ndarray) else where) if self._holds(p, pair)]
        self._where[pair] = live  # what is gone stays gone
        return min(live)

    def _holds(self, p: int, pair: Pair) -> bool:
        q = self._next[p]
        return q >= 0 and self._ids[p] == pair[0] and self._ids[q] == pair[1]

    def _choice(self, leading: list[tuple[int, Pair]]) -> tuple[Pair, tuple[Pair, ...]]:
        """minbpe's pick among the leading rows, and the tied pairs (empty if no tie)."""
        best = leading[0][0]
        tied = [pair for count, pair in leading if count == best]
        if len(tied) == 1:
            return tied[0], ()
        tied.sort(key=self._first_live)
        return tied[0], tuple(tied)

    # --- merging ---------------------------------------------------------------------------

    def step(self) -> MergeStep | None:
        """Merge the top pair into the next new id; None when no pair is left."""
        leading = self._leading(TOP_PAIRS)
        if not leading:
            return None
        pair, tied = self._choice(leading)
        count = self._counts[pair]
        new_id = FIRST_NEW_ID + len(self.steps)
        self._merge(pair, new_id)
        self.vocab[new_id] = self.token_bytes(pair[0]) + self.token_bytes(pair[1])
        step = MergeStep(pair, count, new_id, self.length, tuple(leading[:TOP_PAIRS]), tied)
        self.steps.append(step)
        return step

    def run(self, merges: int) -> list[MergeStep]:
        """Up to `merges` more steps (fewer when no pair is left); the steps made."""
        if merges < 0:
            raise TokexplorerError("the number of merges is 0 or more")
        made = []
        for _ in range(merges):
            step = self.step()
            if step is None:
                break
            made.append(step)
        return made

    def token_bytes(self, token_id: int) -> bytes:
        return bytes([token_id]) if token_id < FIRST_NEW_ID else self.vocab[token_id]

    def _merge(self, pair: Pair, new_id: int) -> None:
        a, b = pair
        ids, nxt, prv = self._ids, self._next, self._prev
        counts, where = self._counts, self._where
        touched: set[Pair] = set()  # pairs whose count changed: the heap gets their new count
        touch = touched.add
        found = where.pop(pair)
        # Positions ascending (a new pair's list is filled in merge order, not text order).
        found = found.tolist() if isinstance(found, np.ndarray) else sorted(found)
        merged = 0
        # The counts of the pairs around each occurrence change as it merges; the pair's own
        # count drops by the number merged, at the end (subtle: `a a a` also loses the pair (a, a)
        # to its right neighbour, so the count is not simply set to 0).
        for p in found:
            q = nxt[p]
            # subtle: an occurrence can be gone: merged just before (the middle a of a a a) or
            # changed by an earlier merge of another pair
            if q < 0 or ids[p] != a or ids[q] != b:
                continue
            merged += 1
            left, right = prv[p], nxt[q]
            if left >= 0:
                x = ids[left]
                old, new = (x, a), (x, new_id)
                c = counts[old] - 1
                if c:
                    counts[old] = c
                else:
                    del counts[old]
                counts[new] = counts.get(new, 0) + 1
                touch(old)
                touch(new)
                found_at = where.get(new)
                if found_at is None:
                    where[new] = [left]
                else:
                    found_at.append(left)
            if right >= 0:
                y = ids[right]
                old, new = (b, y), (new_id, y)
                c = counts[old] - 1
                if c:
                    counts[old] = c
                else:
                    del counts[old]
                counts[new] = counts.get(new, 0) + 1
                touch(old)
                touch(new)
                found_at = where.get(new)
                if found_at is None:
                    where[new] = [p]
                else:
                    found_at.append(p)
            ids[p] = new_id
            ids[q] = -1
            nxt[p] = right
            if right >= 0:
                prv[right] = p
        c = counts[pair] - merged
        if c:
            counts[pair] = c
        else:
            del counts[pair]
        touch(pair)
        self.length -= merged
        heap = self._heap
        for k in touched:
            c = counts.get(k, 0)
            if c:
                heapq.heappush(heap, (-c, (-k[0], -k[1])))
            else:
                where.pop(k, None)

    # --- the sequence ----------------------------------------------------------------------

    def sequence(self, limit: int | None = None) -> list[int]:
        """The current ids in order (the first `limit` of them)."""
        return self._head(self.length if limit is None else limit)[0]

    def _head(self, limit: int) -> tuple[list[int], list[int]]:
        """The first `limit` ids, and the indices among them where a chunk starts."""
        out: list[int] = []
        chunk_starts: list[int] = []
        ids, nxt = self._ids, self._next
        for s in self._starts:
            if len(out) >= limit:
                break
            chunk_starts.append(len(out))
            p = s
            while p >= 0 and len(out) < limit:
                out.append(ids[p])
                p = nxt[p]
        return out, chunk_starts

    def snapshot(self, rows: int = 100, shown: int = 2000) -> ByHandSnapshot:
        """Where the run stands, with `rows` rows of the table and the sequence's first `shown` ids."""
        leading = self._leading(rows)
        next_pair, tied = self._choice(leading) if leading else (None, ())
        head, chunk_starts = self._head(shown)
        marks: list[int] = []
        if next_pair is not None:
            boundary = set(chunk_starts)
            i = 0
            while i + 1 < len(head):
                if (head[i], head[i + 1]) == next_pair and i + 1 not in boundary:
                    marks.append(i)
                    i += 2
                else:
                    i += 1
        return ByHandSnapshot(
            self.pattern, self.n_bytes, self.length, tuple(self.steps), tuple(leading[:rows]), self.n_pairs,
            next_pair, tied, tuple(head), tuple(chunk_starts) if self.pattern != "none" else (), tuple(marks),
            dict(self.vocab))


class LessonRuns:
    """The server's runs: each request asks for N merges from the start, and the last run is
    continued when the next request is for the same text and pattern and as many merges or more
    (a Merge click after the last), so a click costs its own merges, not all of them again. One
    run at a time (the server answers two requests at once). A run of a text over KEEP_BYTES is
    not kept: on 1 MB a run holds about 50 MB.

    >>> LessonRuns().snapshot("abab", 1).head
    (256, 256)
    """

    KEEP_BYTES = 2_000_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._run: BpeByHand | None = None
        self._text: str | None = None

    def snapshot(self, text: str, merges: int, pattern: str = "none", *, rows: int = 100, shown: int = 2000,
                 progress: Callable[[int, int], None] | None = None) -> ByHandSnapshot:
        """`merges` merges on `text` from the start, and where that leaves the run; `progress(done,
        total)` is told now and then (about a hundred times at most)."""
        if merges < 0:
            raise TokexplorerError("the number of merges is 0 or more")
        with self._lock:
            run = self._run
            if run is None or text != self._text or pattern != run.pattern or len(run.steps) > merges:
                self._run = self._text = None  # (a new text: the old run's memory goes first)
                run = BpeByHand(text, pattern)
            every = max(1, merges // 100)
            while len(run.steps) < merges and run.step() is not None:
                if progress is not None and len(run.steps) % every == 0:
                    progress(len(run.steps), merges)
            if run.n_bytes <= self.KEEP_BYTES:
                self._run, self._text = run, text
            return run.snapshot(rows, shown)
