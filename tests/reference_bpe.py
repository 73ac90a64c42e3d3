"""The slow, obviously correct byte-level BPE the fast code is checked against.

minbpe's algorithm written plainly (by us): recount every pair of the whole token stream before each
merge, take the most frequent one, ties going to the pair seen first in the stream (a dict remembers
insertion order, and `max` keeps the first of equal keys), merge it left to right everywhere.
It is quadratic on purpose: simple enough to trust, used only in tests and as a benchmark peer.
"""

from __future__ import annotations

import regex


def pair_counts(chunks: list[list[int]]) -> dict[tuple[int, int], int]:
    """Counts of adjacent pairs, in order of first occurrence over the chunks in text order."""
    counts: dict[tuple[int, int], int] = {}
    for ids in chunks:
        for pair in zip(ids, ids[1:]):
            counts[pair] = counts.get(pair, 0) + 1
    return counts


def merge(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """Replace every occurrence of pair, scanning left to right, by new_id."""
    out = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def chunks_of(text: str, pattern: str | None) -> list[list[int]]:
    """The text's UTF-8 bytes: one chunk (Basic) or one per regex match (Regex), as minbpe."""
    if pattern is None:
        return [list(text.encode("utf-8"))]
    return [list(m.encode("utf-8")) for m in regex.findall(pattern, text)]


def train(text: str, vocab_size: int, pattern: str | None = None) -> dict[tuple[int, int], int]:
    """Merges in order (pair -> new id); stops early when no pair is left."""
    chunks = chunks_of(text, pattern)
    merges: dict[tuple[int, int], int] = {}
    for new_id in range(256, vocab_size):
        counts = pair_counts(chunks)
        if not counts:
            break
        best = max(counts, key=counts.get)
        chunks = [merge(ids, best, new_id) for ids in chunks]
        merges[best] = new_id
    return merges


def encode_chunk(data: bytes, merges: dict[tuple[int, int], int]) -> list[int]:
    """minbpe's encoder for one chunk: repeatedly merge the present pair that was learned first."""
    ids = list(data)
    while len(ids) >= 2:
        present = set(zip(ids, ids[1:]))
        pair = min(present, key=lambda p: merges.get(p, float("inf")))
        if pair not in merges:
            break
        ids = merge(ids, pair, merges[pair])
    return ids


def encode(text: str, merges: dict[tuple[int, int], int], pattern: str | None) -> list[int]:
    """Ids of ordinary text (no special tokens), chunk by chunk."""
    out: list[int] = []
    for ids in chunks_of(text, pattern):
        out += encode_chunk(bytes(ids), merges)
    return out
