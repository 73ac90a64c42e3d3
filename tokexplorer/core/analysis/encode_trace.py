"""The step-by-step trace of how BPE encodes one chunk: which pair merged at which rank, and the
sequence after each merge. A plain reference in Python (one merge per step, the lowest rank first,
leftmost on ties; the next pair comes from a heap), so its final ids are checked against the
tokenizer's own encoder. Chunks up to MAX_TRACE_BYTES; steps are kept as integers and the sequence
at any step is rebuilt when asked for.

- tiktoken encodings: parts start as single bytes; each step merges the adjacent pair whose joined
  bytes have the lowest rank (what tiktoken's core does).
- BPE trained here: each step merges the adjacent pair learned first (minbpe; merging its
  occurrences one at a time, left to right, is the same as minbpe's all at once).
- SentencePiece BPE: parts start as characters (spaces as ▁); each step merges the adjacent pair
  whose joined piece has the highest score (leftmost on ties); a part that is no piece at the end
  becomes byte pieces (byte fallback) or <unk>. Unigram models have no merges to trace.

The chunk under a token comes from the encoding: tiktoken's regex pre-split, or for SentencePiece the
run of tokens between two words (no piece joins a non-space to a following ▁, so no merge crosses
there). It draws nothing; the trace view and `tokexplorer trace` render it.

It runs past 400 lines because the three families' merge rules share one heap loop and one compact
trace; each family's part is a few dozen lines.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import NamedTuple

import numpy as np

from tokexplorer.core.encoding import Encoding, TokenFlag
from tokexplorer.core.tokenizer import Tokenizer, TokexplorerError

# A chunk longer than this is refused. Merging uses a heap (each step O(log n), not a rescan of
# every pair) and a trace keeps a few integers per step: 16 KB of prose under GPT-2 is 11,700 steps
# in about 0.5 s of pure Python (callers trace in a worker) and 1 MB, so this bound is a few seconds
# and a few MB.
MAX_TRACE_BYTES = 64 * 1024
SPACE_MARK = "\u2581"  # ▁, SentencePiece's space
# A step's sequence is listed whole for a chunk of at most this many parts; for a longer one, the
# AROUND parts on each side of the merge (so the output grows with the steps, not their square).
WHOLE_SEQUENCE = 64
AROUND = 8


class Part(NamedTuple):
    """One element of the sequence being merged: its token id (None: not a token, yet) and bytes."""

    id: int | None
    bytes: bytes


class TraceStep(NamedTuple):
    """Parts `position` and `position + 1` became token `new_id` (of merge rank `rank`)."""

    position: int
    left: Part
    right: Part
    new_id: int
    rank: int


@dataclass(frozen=True)
class EncodeTrace:
    """The merges that encoded `chunk` (characters `start`..`end` of the text when known).

    Stored compactly, as integers per initial part and per step; the parts after any step and each
    step's pair are rebuilt on demand (`sequence`, `parts`, `steps`), so a long chunk's trace costs
    a few arrays, not a copy of the sequence per step.
    """

    tokenizer: str
    chunk: bytes
    offsets: np.ndarray  # int64 [n + 1]: initial part i is chunk[offsets[i]:offsets[i + 1]]
    initial_ids: np.ndarray  # int64 [n]: each initial part's id, -1 where it is no token
    lefts: np.ndarray  # int64 [steps]: step j joined the parts starting at initial parts lefts[j]
    mids: np.ndarray  # ... and mids[j] (which stops being a part start),
    ends: np.ndarray  # ... the right one ending before initial part ends[j]
    new_ids: np.ndarray  # int64 [steps]: the token each step made
    ranks: np.ndarray  # int64 [steps]: its merge rank
    made_by: np.ndarray  # int64 [steps, 2]: the steps that made the left and right parts (-1: initial)
    final: list[int]  # the ids the trace ends with (after byte fallback, for SentencePiece)
    how: str  # one line: how the next merge is chosen
    start: int = -1
    end: int = -1
    fallback: list[str] = field(default_factory=list)  # SentencePiece parts that became byte pieces

    @property
    def initial(self) -> list[Part]:
        """The parts before any merge."""
        return [self._part(i, i + 1, -1) for i in range(len(self.initial_ids))]

    @cached_property
    def steps(self) -> Steps:
        """Each merge as a TraceStep (made when asked for)."""
        return Steps(self)

    def _part(self, first: int, stop: int, made_by: int) -> Part:
        """The part spanning initial parts [first, stop), made by step `made_by` (-1: initial)."""
        data = self.chunk[int(self.offsets[first]) : int(self.offsets[stop])]
        if made_by >= 0:
            return Part(int(self.new_ids[made_by]), data)
        i = int(self.initial_ids[first])
        return Part(None if i < 0 else i, data)

    def parts(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The sequence after the first k steps as arrays: each part's first initial part, the
        initial part after it, and its id (-1: no token); vectorised, O(parts + k)."""
        n = len(self.initial_ids)
        alive = np.ones(n, dtype=bool)
        alive[self.mids[:k]] = False
        firsts = np.flatnonzero(alive)
        stops = np.append(firsts[1:], n)
        last = np.full(n, -1, dtype=np.int64)
        np.maximum.at(last, self.lefts[:k], np.arange(k, dtype=np.int64))  # the latest step per start
        made = last[firsts]
        ids = np.where(made >= 0, self.new_ids[np.maximum(made, 0)] if k else -1, self.initial_ids[firsts])
        return firsts, stops, ids

    def sequence(self, k: int, lo: int = 0, hi: int | None = None) -> list[Part]:
        """The parts after the first k steps (0: before any merge), or only parts [lo, hi) of them."""
        firsts, stops, ids = self.parts(k)
        firsts, stops, ids = firsts[lo:hi], stops[lo:hi], ids[lo:hi]
        return [Part(None if i < 0 else i, self.chunk[int(self.offsets[a]) : int(self.offsets[b])])
                for a, b, i in zip(firsts.tolist(), stops.tolist(), ids.tolist())]

    def walk(self, radius: int = AROUND) -> Iterator[tuple[TraceStep, int, list[int | None]]]:
        """Each step, the index in the sequence after it of the first part shown, and the ids of
        the parts around the merged one (up to `radius` on each side).

        Linear in the steps (times `radius`, plus a logarithm for the position), where rebuilding
        the whole sequence after every step costs the sequence's length each time: a 64 KB chunk
        of one letter takes 65,000 steps, and printing every sequence would be billions of ids.
        """
        n = len(self.initial_ids)
        nxt, prv = list(range(1, n + 1)), list(range(-1, n - 1))
        ids = [None if i < 0 else i for i in self.initial_ids.tolist()]
        alive = [0] * (n + 1)  # a Fenwick tree over the initial parts: 1 where a part starts
        for i in range(1, n + 1):
            alive[i] += 1
            up = i + (i & -i)
            if up <= n:
                alive[up] += alive[i]
        rows = zip(self.lefts.tolist(), self.mids.tolist(), self.ends.tolist(), self.new_ids.tolist(),
                   self.ranks.tolist(), self.made_by[:, 0].tolist(), self.made_by[:, 1].tolist())
        for left, mid, end, new_id, rank, by_left, by_right in rows:
            position, i = 0, left
            while i > 0:  # the parts before `left`
                position += alive[i]
                i -= i & -i
            step = TraceStep(position, self._part(left, mid, by_left), self._part(mid, end, by_right), new_id, rank)
            i = mid + 1
            while i <= n:  # `mid` stops starting a part
                alive[i] -= 1
                i += i & -i
            after = nxt[mid]
            nxt[left] = after
            if after < n:
                prv[after] = left
            ids[left] = new_id
            first, back = left, 0
            while back < radius and prv[first] >= 0:
                first, back = prv[first], back + 1
            shown, i = [], first
            while i < n and len(shown) <= back + radius:
                shown.append(ids[i])
                i = nxt[i]
            yield step, position - back, shown

    def to_dict(self) -> dict:
        """For JSON: the chunk, each step's pair, rank and position, the ids after it (all of them
        for a chunk of at most WHOLE_SEQUENCE parts, else those around the merge, from index
        `ids_from` of the sequence), and the final ids."""
        whole = len(self.initial_ids) <= WHOLE_SEQUENCE
        steps = [{"pair": [step.left.id, step.right.id], "new_id": step.new_id, "rank": step.rank,
                  "position": step.position, "bytes": (step.left.bytes + step.right.bytes).hex(),
                  "ids_from": first, "ids": shown}
                 for step, first, shown in self.walk(WHOLE_SEQUENCE if whole else AROUND)]
        return {"tokenizer": self.tokenizer, "chunk": self.chunk.decode("utf-8", "replace"),
                "start": self.start, "end": self.end, "how": self.how,
                "initial": [p.id for p in self.initial], "steps": steps, "final": self.final}


class Steps(Sequence):
    """A trace's steps as TraceSteps, each made when asked for (a view pages through them)."""

    def __init__(self, trace: EncodeTrace):
        self._trace = trace

    def __len__(self) -> int:
        return len(self._trace.lefts)

    def __getitem__(self, j):
        if isinstance(j, slice):
            return [self[i] for i in range(*j.indices(len(self)))]
        t = self._trace
        if j < 0:
            j += len(self)
        if not 0 <= j < len(self):
            raise IndexError(j)
        left, mid, end = int(t.lefts[j]), int(t.mids[j]), int(t.ends[j])
        # Parts before the left one at step j: the initial starts before it that no earlier
        # step removed.
        position = left - int(np.count_nonzero(t.mids[:j] < left))
        return TraceStep(position, t._part(left, mid, int(t.made_by[j, 0])), t._part(mid, end, int(t.made_by[j, 1])),
                         int(t.new_ids[j]), int(t.ranks[j]))


@dataclass
class _Merged:
    """What `_merge_loop` leaves: the steps as lists, and the parts at the end."""

    lefts: list[int] = field(default_factory=list)
    mids: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    new_ids: list[int] = field(default_factory=list)
    ranks: list = field(default_factory=list)
    made_by: list[tuple[int, int]] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)


def _merge_loop(chunk: bytes, offsets: list[int], ids: list[int | None], rank_of) -> _Merged:
    """Merge the adjacent pair of lowest rank_of(left, right) (None: no merge; leftmost on ties)
    until none is left.

    A heap holds every adjacent pair with its rank, keyed (rank, start): the leftmost of the lowest
    rank comes first, as a rescan of every pair would find it. An entry whose parts were merged
    meanwhile is stale: a part is known by its span, so an entry is current while both spans are.
    """
    n = len(ids)
    stop = list(range(1, n + 1))  # initial part i -> where the part starting there ends (when alive)
    prev = list(range(-1, n - 1))  # the part start before each part start
    alive = [True] * n
    pid = list(ids)  # the id of the part starting at i
    maker = [-1] * n  # the step that made the part starting at i
    out = _Merged()
    heap: list[tuple] = []

    def consider(a: int) -> None:
        b = stop[a]
        if b >= n:
            return
        c = stop[b]
        found = rank_of(Part(pid[a], chunk[offsets[a]:offsets[b]]), Part(pid[b], chunk[offsets[b]:offsets[c]]))
        if found is not None:
            heapq.heappush(heap, (found[0], a, b, c, found[1]))

    for a in range(n - 1):
        consider(a)
    while heap:
        rank, a, b, c, new = heapq.heappop(heap)
        if not (alive[a] and alive[b] and stop[a] == b and stop[b] == c):
            continue  # one of its parts was merged since
        out.lefts.append(a)
        out.mids.append(b)
        out.ends.append(c)
        out.new_ids.append(new)
        out.ranks.append(rank)
        out.made_by.append((maker[a], maker[b]))
        alive[b] = False
        stop[a] = c
        pid[a] = new
        maker[a] = len(out.lefts) - 1
        if c < n:
            prev[c] = a
        if prev[a] >= 0:
            consider(prev[a])
        consider(a)
    a = 0
    while a < n:
        out.parts.append(Part(pid[a], chunk[offsets[a]:offsets[stop[a]]]))
        a = stop[a]
    return out


def _trace(name: str, chunk: bytes, offsets: list[int], ids: list[int | None], merged: _Merged,
           final: list[int], how: str, fallback: list[str] | None = None) -> EncodeTrace:
    k = len(merged.lefts)
    return EncodeTrace(
        name, chunk, np.asarray(offsets, dtype=np.int64),
        np.asarray([-1 if i is None else i for i in ids], dtype=np.int64),
        np.asarray(merged.lefts, dtype=np.int64), np.asarray(merged.mids, dtype=np.int64),
        np.asarray(merged.ends, dtype=np.int64), np.asarray(merged.new_ids, dtype=np.int64),
        np.rint(np.asarray(merged.ranks, dtype=np.float64)).astype(np.int64),
        np.asarray(merged.made_by, dtype=np.int64).reshape(k, 2), final, how, fallback=fallback or [])


def _check_length(chunk: bytes) -> None:
    if len(chunk) > MAX_TRACE_BYTES:
        raise TokexplorerError(
            f"this chunk is {len(chunk):,} bytes; the step-by-step trace covers chunks up to "
            f"{MAX_TRACE_BYTES:,} bytes (put the caret in a shorter chunk, or trace a part of it with "
            "`tokexplorer trace`)")


def trace_bytes(tok: Tokenizer, chunk: bytes) -> EncodeTrace:
    """Trace a byte-level BPE (tiktoken encoding or trained here) over one pre-split chunk.

    >>> from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer
    >>> ranks = {b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}
    >>> t = trace_bytes(TiktokenTokenizer.from_ranks("toy", ranks, r"\\S+"), b"abbab")
    >>> [(s.position, s.new_id) for s in t.steps], t.final
    ([(0, 2), (2, 2), (0, 3)], [3, 2])
    """
    _check_length(chunk)
    merges = getattr(tok, "merges", None)
    if isinstance(merges, dict) and merges and isinstance(next(iter(merges)), tuple):
        ids = list(chunk)

        def rank_of(a: Part, b: Part):
            new = merges.get((a.id, b.id))
            return None if new is None else (new, new)

        how = "merge the adjacent pair learned first (minbpe)"
    else:
        ranks = getattr(tok, "mergeable_ranks", None)
        if ranks is None:
            raise TokexplorerError(f"{tok.name} is not a byte-level BPE tokenizer; it has no merges to trace")
        try:
            ids = [ranks[bytes([b])] for b in chunk]
        except KeyError:
            raise TokexplorerError(f"{tok.name} has no token for some single byte of this chunk") from None

        def rank_of(a: Part, b: Part):
            rank = ranks.get(a.bytes + b.bytes)
            return None if rank is None else (rank, rank)

        how = "merge the adjacent pair whose joined bytes have the lowest rank (tiktoken)"
    offsets = list(range(len(chunk) + 1))
    merged = _merge_loop(chunk, offsets, ids, rank_of)
    return _trace(tok.name, chunk, offsets, ids, merged, [p.id for p in merged.parts], how)


def trace_pieces(tok, text: str) -> EncodeTrace:
    """Trace a SentencePiece BPE model over one word (spaces written as spaces or ▁).

    subtle: user-defined symbols are matched whole by sentencepiece before merging; this trace
    starts from characters, so a model with such symbols may differ (the final ids then disagree).
    """
    options = getattr(tok, "options", {})
    if options.get("model_type") != "bpe":
        raise TokexplorerError(
            f"{tok.name} is a SentencePiece {options.get('model_type', 'unknown')} model: it picks the "
            "most likely segmentation (Viterbi), there are no merges to trace")
    from tokexplorer.core.analysis.merge_tree import piece_order

    word = text.replace(" ", SPACE_MARK)
    chunk = word.replace(SPACE_MARK, " ").encode("utf-8")
    _check_length(chunk)
    ids, order = piece_order(tok)
    specials = set(tok.special_tokens.values())
    offsets = [0]
    for ch in word:
        offsets.append(offsets[-1] + (1 if ch == SPACE_MARK else len(ch.encode("utf-8"))))  # ▁ is b" " 
    first_ids = [ids.get(ch) for ch in word]

    def rank_of(a: Part, b: Part):
        piece = (a.bytes + b.bytes).decode("utf-8").replace(" ", SPACE_MARK)
        new = ids.get(piece)
        if new is None or new in specials:
            return None
        return (order[piece], new)

    merged = _merge_loop(chunk, offsets, first_ids, rank_of)
    final, fallback = [], []
    byte_fallback = bool(options.get("byte_fallback"))
    unk = next((i for p, i in tok.special_tokens.items() if p == "<unk>"), 0)
    for p in merged.parts:
        if p.id is not None:
            final.append(p.id)
        elif byte_fallback:
            fallback.append(p.bytes.decode("utf-8"))
            final += [ids[f"<0x{b:02X}>"] for b in p.bytes]
        else:
            final.append(unk)
    how = "merge the adjacent pair whose joined piece has the highest score (SentencePiece BPE)"
    return _trace(tok.name, chunk, offsets, first_ids, merged, final, how, fallback)


def chunk_at(tok: Tokenizer, encoding: Encoding, index: int) -> tuple[int, int]:
    """The token range [first, stop) of the chunk that token `index` belongs to: the regex
    pre-split chunk (Basic BPE: the text between special tokens), or for SentencePiece the word (a
    run that starts at a token beginning with a space after a token that does not end with one)."""
    n = len(encoding)
    if not 0 <= index < n:
        raise TokexplorerError(f"no token {index} in this text ({n} tokens)")
    if getattr(tok, "pieces", None) is None:
        span = encoding.chunk_span(int(encoding.starts[index]))
        if span is not None:  # the regex chunks
            tokens = encoding.token_range(*span)
            return tokens.start, tokens.stop
    if getattr(tok, "pieces", None) is None:  # Basic BPE: the text between special tokens
        special = (encoding.flags & TokenFlag.SPECIAL) != 0
        if special[index]:
            return index, index + 1
        first, stop = index, index + 1
        while first > 0 and not special[first - 1]:
            first -= 1
        while stop < n and not special[stop]:
            stop += 1
        return first, stop
    data = encoding.token_bytes

    def starts_word(i: int) -> bool:
        return i == 0 or (data[i][:1] == b" " and data[i - 1][-1:] != b" ")

    first = index
    while not starts_word(first):
        first -= 1
    stop = index + 1
    while stop < n and not starts_word(stop):
        stop += 1
    return first, stop


def trace_at(tok: Tokenizer, encoding: Encoding, index: int) -> EncodeTrace:
    """The trace of the chunk under token `index` of an encoding of `tok`.

    >>> from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer
    >>> tok = TiktokenTokenizer.from_ranks("toy", {b"a": 0, b"b": 1, b" ": 2, b"ab": 3}, r" ?\\S+")
    >>> t = trace_at(tok, tok.encode("ab abab"), 2)
    >>> t.chunk, t.final, (t.start, t.end)
    (b' abab', [2, 3, 3], (2, 7))
    """
    first, stop = chunk_at(tok, encoding, index)
    flags = encoding.flags[first:stop]
    if (flags & TokenFlag.SPECIAL).any():
        raise TokexplorerError("this is a special token: it was added to the vocabulary, not built by merges")
    start, end = int(encoding.starts[first]), int(encoding.ends[stop - 1])
    # subtle: one token at a time; a slice of lazy token bytes builds the bytes of every token of
    # the text (0.3 s on a book).
    data = b"".join(encoding.token_bytes[i] for i in range(first, stop))
    if getattr(tok, "pieces", None) is None:
        trace = trace_bytes(tok, data)
    else:
        word = data.decode("utf-8", errors="replace")
        trace = trace_pieces(tok, word)
    return replace(trace, start=start, end=end)
