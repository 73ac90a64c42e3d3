"""Byte-level BPE training with minbpe's semantics, fast, in pure Python.

Basic (bytes only, `pattern=None`) and Regex (the text split into chunks by a pattern first; pairs
never cross chunks). The merges are those minbpe would learn for the same text, vocab size and
pattern, in the same order, ties included: minbpe picks `max(stats, key=stats.get)`, i.e. among
the pairs with the highest count, the one that occurs first in the current token stream.

Training is a generator, `iter_train`, yielding one `MergeStep` per merge, so a caller can show
progress and stop between merges keeping what was learned; `train` exhausts it into a tokenizer.
When no pair is left (every chunk is a single token) training stops early: the last step says so
and the tokenizer's `n_vocab` is the size reached.

How it is fast (facts from the design, written here):
- Regex: each distinct chunk is stored once with its multiplicity; pair counts are weighted by it;
  an index pair -> chunks holding it means a merge rewrites only those chunks, applying count deltas.
- Basic: the stream is a doubly linked list over byte positions with pair -> positions lists, so a
  merge touches only its occurrences and their neighbours.
- Both pick the best pair from a lazy max-heap keyed (count, first occurrence). A pair that exists
  can only lose occurrences (new adjacencies always involve the new token), so a stale heap entry
  is never worse than the truth: pop, re-check, push back corrected if it changed.

It does not encode (see `bpe_tokenizer`) nor read or write files (see `minbpe_files`).
"""

from __future__ import annotations

import heapq
from collections import Counter
from typing import Iterator, NamedTuple

import numpy as np

from .bpe_tokenizer import BPETokenizer
from .patterns import (
    NAMED_PATTERNS,
    SPLIT_TIMEOUT_FLOOR,
    SPLIT_TIMEOUT_PER_MB,
    compile_pattern,
    resolve_pattern,
)
from .tokenizer import TokexplorerError


class MergeStep(NamedTuple):
    """One merge: `step` of `total` (1-based), `pair` merged into `new_id`, seen `count` times."""

    step: int
    total: int
    pair: tuple[int, int]
    new_id: int
    count: int


def check_vocab_size(vocab_size: int, n_special: int = 0) -> int:
    """The number of merges for a vocab size that includes `n_special` special tokens.

    >>> check_vocab_size(276)
    20
    >>> check_vocab_size(258, 1)
    1
    """
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
        return _train_basic(list(text.encode("utf-8")), total)
    words = count_chunks(text, resolve_pattern(pattern))
    return _train_chunks([list(w.encode("utf-8")) for w in words], list(words.values()), total)


def count_chunks(text: str, pattern: str) -> Counter[str]:
    """Each distinct chunk and its occurrences, in order of first occurrence (time-boxed).

    >>> count_chunks("the cat the", r"\\S+")
    Counter({'the': 2, 'cat': 1})
    """
    compiled = compile_pattern(pattern)
    if compiled.groups > 1:
        raise TokexplorerError(
            f"the split pattern {pattern!r} has {compiled.groups} capturing groups; make them "
            "non-capturing, (?:...), so that each match is one chunk"
        )
    timeout = None
    if pattern not in NAMED_PATTERNS.values():
        timeout = SPLIT_TIMEOUT_FLOOR + SPLIT_TIMEOUT_PER_MB * len(text) / 1e6
    try:
        # As minbpe: findall (a pattern with groups yields the groups), empty matches dropped.
        words = Counter(compiled.findall(text, timeout=timeout))
    except TimeoutError:
        raise TokexplorerError(
            f"the split pattern took more than {timeout:.0f} s on {len(text)} characters "
            "(catastrophic backtracking?); simplify the pattern"
        ) from None
    words.pop("", None)
    return words


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


# --- Regex: distinct chunks with multiplicity -------------------------------------------------


def _train_chunks(chunks: list[list[int]], freq: list[int], total: int) -> Iterator[MergeStep]:
    """Merge steps over distinct chunks (in order of first occurrence) weighted by `freq`."""
    m = 256 + total + 1  # pair (a, b) is the int a * m + b: cheaper to hash than a tuple
    counts: dict[int, int] = {}  # pair -> occurrences in the whole text
    # pair -> indices of the chunks holding it; may also list chunks that no longer do
    where: dict[int, set[int]] = {}
    first: dict[int, int] = {}  # pair -> its first occurrence, (chunk index << 32) + byte offset
    lengths = [1] * m  # token id -> byte length, for first-occurrence offsets
    for c, ids in enumerate(chunks):
        f = freq[c]
        for i in range(len(ids) - 1):
            p = ids[i] * m + ids[i + 1]
            if p in counts:
                counts[p] += f
                where[p].add(c)
            else:
                counts[p] = f
                where[p] = {c}
                first[p] = (c << 32) + i
    # subtle: the tie order is the first occurrence in the whole stream; chunks are numbered in
    # order of first occurrence, so (chunk index, byte offset in the chunk) orders occurrences.
    heap = [(-n, first[p], p) for p, n in counts.items()]
    heapq.heapify(heap)
    del first

    def first_in_chunks(p: int) -> int:
        holders = where[p]
        a, b = divmod(p, m)
        while True:
            c = min(holders)
            ids = chunks[c]
            offset = 0
            for i in range(len(ids) - 1):
                if ids[i] == a and ids[i + 1] == b:
                    return (c << 32) + offset
                offset += lengths[ids[i]]
            holders.discard(c)  # a stale entry

    for step in range(1, total + 1):
        best = _pop_best(heap, counts, first_in_chunks)
        if best is None:
            return
        p, n = best
        a, b = divmod(p, m)
        new = 255 + step
        lengths[new] = lengths[a] + lengths[b]
        created: dict[int, int] = {}  # new pair -> the first chunk it is in
        for c in where.pop(p):
            ids = chunks[c]
            f = freq[c]
            out: list[int] = []
            i, last = 0, len(ids) - 1
            while i <= last:
                x = ids[i]
                if x != a or i == last or ids[i + 1] != b:
                    out.append(x)
                    i += 1
                    continue
                # subtle: as in the Basic loop, the left neighbour may be the new token made
                # just before ("abab"): then (new, a) is taken back and (new, new) counted.
                if out:
                    t = out[-1] * m
                    counts[t + a] -= f
                    k = t + new
                    if k in created:
                        counts[k] += f
                        where[k].add(c)
                        if c < created[k]:
                            created[k] = c
                    else:
                        counts[k] = f
                        where[k] = {c}
                        created[k] = c
                if i + 2 <= last:
                    t = ids[i + 2]
                    counts[b * m + t] -= f
                    k = new * m + t
                    if k in created:
                        counts[k] += f
                        where[k].add(c)
                        if c < created[k]:
                            created[k] = c
                    else:
                        counts[k] = f
                        where[k] = {c}
                        created[k] = c
                out.append(new)
                i += 2
            chunks[c] = out
        del counts[p]
        for k, c in created.items():
            n_k = counts[k]
            if n_k > 0:
                # offset 0: not later than the truth, which is all the lazy heap needs
                heapq.heappush(heap, (-n_k, c << 32, k))
            else:
                del counts[k], where[k]
        yield MergeStep(step, total, (a, b), new, n)


def _pop_best(heap: list, counts: dict[int, int], first_of) -> tuple[int, int] | None:
    """The pair with the highest count, earliest first occurrence among equals; None if none."""
    while heap:
        neg, at, p = heapq.heappop(heap)
        n = counts.get(p, 0)
        if n <= 0:
            counts.pop(p, None)
            continue
        if n != -neg:
            heapq.heappush(heap, (-n, first_of(p), p))
            continue
        now = first_of(p)
        if now != at:
            heapq.heappush(heap, (neg, now, p))
            continue
        return p, n
    return None


# --- Basic: one stream of bytes ----------------------------------------------------------------


def _train_basic(tokens: list[int], total: int) -> Iterator[MergeStep]:
    """Merge steps over one token stream, kept as a linked list over byte positions."""
    size = len(tokens)
    m = 256 + total + 1
    nxt = list(range(1, size + 1))  # position -> next live position, -1 at the end
    nxt[-1] = -1
    prv = list(range(-1, size - 1))  # position -> previous live position, -1 at the start
    # tokens[pos] is the token starting at pos, or -1 once it was merged into its left neighbour.
    counts: dict[int, int] = {}  # pair -> occurrences
    positions: dict[int, list[int]] = {}  # pair -> ascending positions, some no longer valid
    start: dict[int, int] = {}  # pair -> index in positions[pair] before which all are stale
    if size >= 2:
        data = np.frombuffer(bytes(tokens), dtype=np.uint8).astype(np.uint16)
        codes = (data[:-1] << 8) | data[1:]  # initial pairs are bytes: 16 bits, radix-sortable
        order = np.argsort(codes, kind="stable")  # stable: positions stay ascending per pair
        ordered = codes[order]
        bounds = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
        starts = [0, *bounds.tolist()]
        ends = [*bounds.tolist(), size - 1]
        for i, j, code in zip(starts, ends, ordered[starts].tolist()):
            p = (code >> 8) * m + (code & 255)
            counts[p] = j - i
            positions[p] = order[i:j].tolist()
            start[p] = 0

    def first_position(p: int) -> int:
        a, b = divmod(p, m)
        where = positions[p]
        i = start[p]
        while True:
            pos = where[i]
            if tokens[pos] == a:
                q = nxt[pos]
                if q >= 0 and tokens[q] == b:
                    start[p] = i
                    return pos
            i += 1

    heap = [(-n, positions[p][0], p) for p, n in counts.items()]
    heapq.heapify(heap)
    for step in range(1, total + 1):
        best = _pop_best(heap, counts, first_position)
        if best is None:
            return
        p, n = best
        a, b = divmod(p, m)
        new = 255 + step
        created: dict[int, list[int]] = {}  # new pair -> its positions, ascending
        for pos in positions.pop(p)[start.pop(p):]:
            # subtle: occurrences are visited left to right and re-checked, so an overlapping
            # one ("aaa" merging (a, a)) is skipped exactly as a left-to-right rewrite skips it.
            if tokens[pos] != a:
                continue
            q = nxt[pos]
            if q < 0 or tokens[q] != b:
                continue
            left = prv[pos]
            right = nxt[q]
            if left >= 0:
                t = tokens[left] * m
                counts[t + a] -= 1
                k = t + new
                where = created.get(k)
                if where is None:
                    created[k] = [left]
                    counts[k] = 1
                else:
                    where.append(left)
                    counts[k] += 1
            if right >= 0:
                t = tokens[right]
                counts[b * m + t] -= 1
                k = new * m + t
                where = created.get(k)
                if where is None:
                    created[k] = [pos]
                    counts[k] = 1
                else:
                    where.append(pos)
                    counts[k] += 1
                prv[right] = pos
            tokens[pos] = new
            tokens[q] = -1
            nxt[pos] = right
        del counts[p]
        for k, where in created.items():
            if counts[k] > 0:
                positions[k] = where
                start[k] = 0
                # where[0] may be stale, i.e. earlier than the truth: fine for the lazy heap.
                heapq.heappush(heap, (-counts[k], where[0], k))
            else:
                del counts[k]
        yield MergeStep(step, total, (a, b), new, n)
