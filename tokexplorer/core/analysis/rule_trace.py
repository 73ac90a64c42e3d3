"""The encode trace by merge rule: the lecture's encode loop, one line per rule applied.

The notebook encodes by asking, again and again, which adjacent pair has the lowest merge rank,
and then replacing every occurrence of that one pair at once (left to right, never overlapping),
until no adjacent pair is a merge. Each pass is one rule: its pair, the id it makes, the places
where it applied and the length of the sequence after it. On a text a Basic BPE was trained on,
that is one line per merge learned, where `encode_trace` shows one step per occurrence (thousands).

This module runs that loop literally (pairs in order of first occurrence, as a dict of pair counts
keeps them, so ties go the same way) for byte-level BPE: merges learned here (minbpe: the rank of
a pair is the id it makes) and tiktoken encodings (the rank of a pair is that of its joined
bytes). SentencePiece merges by piece score and has no such rule list; tokenizers without merges
have nothing to trace, and other families' merges (a tokenizer.json's) are not replayed here: each
raises TokexplorerError saying so. The final ids are compared with the
tokenizer's own by the caller (they can differ from tiktoken's in principle: it merges one
occurrence at a time). It draws nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from tokexplorer.core.encoding import Encoding, TokenFlag
from tokexplorer.core.tokenizer import Tokenizer, TokexplorerError

# Parts visited over all passes (each pass reads the whole sequence): beyond this the by-rule
# trace is refused rather than run for minutes. About 4 s of pure Python.
MAX_RULE_WORK = 20_000_000


class RuleStep(NamedTuple):
    """One pass of the loop: every occurrence of `pair` became `new_id`."""

    pair: tuple[int, int]  # the two ids merged
    left: bytes
    right: bytes
    new_id: int
    rank: int  # the merge's rank (for minbpe, the new id itself)
    positions: tuple[int, ...]  # where the pair's left part stood in the sequence before the pass
    length: int  # the sequence's length after the pass


@dataclass(frozen=True)
class RuleTrace:
    """The passes that encoded `chunk` (characters `start`..`end` of the text when known)."""

    tokenizer: str
    chunk: bytes
    initial: list[int]  # the chunk's bytes as ids
    rules: list[RuleStep]
    final: list[int]
    how: str
    start: int = -1
    end: int = -1

    @property
    def occurrences(self) -> int:
        """Merges done in all: what the per-occurrence trace counts as steps."""
        return sum(len(r.positions) for r in self.rules)

    def sequence(self, k: int) -> tuple[list[int], list[bytes]]:
        """The ids and their bytes after the first k passes (0: the bytes), rebuilt from the
        recorded positions (vectorised: a pass costs one array copy)."""
        ids = np.asarray(self.initial, dtype=np.int64)
        starts = np.arange(len(self.chunk) + 1, dtype=np.int64)[: len(ids)]
        for rule in self.rules[:k]:
            at = np.asarray(rule.positions, dtype=np.int64)
            ids[at] = rule.new_id
            ids = np.delete(ids, at + 1)
            starts = np.delete(starts, at + 1)
        ends = np.append(starts[1:], len(self.chunk))
        data = [self.chunk[a:b] for a, b in zip(starts.tolist(), ends.tolist())]
        return ids.tolist(), data

    def to_dict(self) -> dict:
        """For JSON: one entry per rule (pair, new id, rank, positions, length after)."""
        return {"tokenizer": self.tokenizer, "chunk": self.chunk.decode("utf-8", "replace"),
                "start": self.start, "end": self.end, "how": self.how, "bytes": len(self.chunk),
                "rules": [{"pair": list(r.pair), "new_id": r.new_id, "rank": r.rank,
                           "bytes": (r.left + r.right).hex(), "positions": list(r.positions),
                           "length": r.length} for r in self.rules],
                "occurrences": self.occurrences, "final": self.final}


def _merge(ids: list[int], pair: tuple[int, int], new: int) -> tuple[list[int], list[int]]:
    """Every occurrence of `pair` in `ids` replaced by `new`, left to right; and where each stood."""
    out, at, i, n = [], [], 0, len(ids)
    a, b = pair
    while i < n:
        if i + 1 < n and ids[i] == a and ids[i + 1] == b:
            at.append(i)
            out.append(new)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out, at


def trace_rules(tok: Tokenizer, chunk: bytes) -> RuleTrace:
    """Run the lecture's encode loop over one chunk of bytes.

    >>> from tokexplorer.core.training.bpe import train
    >>> tok = train("aaabdaaabac", 259)
    >>> t = trace_rules(tok, b"aaabdaaabac")
    >>> [(r.pair, r.new_id, r.positions, r.length) for r in t.rules]
    [((97, 97), 256, (0, 5), 9), ((256, 97), 257, (0, 4), 7), ((257, 98), 258, (0, 3), 5)]
    >>> t.final
    [258, 100, 258, 97, 99]
    """
    if not tok.has_merges:
        raise TokexplorerError(f"{tok.name} has no merges: its tokens are not built pair by pair")
    merges = getattr(tok, "merges", None)
    ranks = getattr(tok, "mergeable_ranks", None)
    if isinstance(merges, dict) and merges and isinstance(next(iter(merges)), tuple):
        initial = list(chunk)

        def rank_of(pair):
            return merges.get(pair)

        def bytes_of(i: int) -> bytes:
            return tok.token_bytes(i)

        how = "merge every occurrence of the adjacent pair learned first (minbpe's encode)"
    elif ranks is not None:
        try:
            initial = [ranks[bytes([b])] for b in chunk]
        except KeyError:
            raise TokexplorerError(f"{tok.name} has no token for some single byte of this chunk") from None
        made: dict[int, bytes] = {}  # id -> bytes, of the ids met so far

        def bytes_of(i: int) -> bytes:
            data = made.get(i)
            if data is None:
                data = made[i] = tok.token_bytes(i)
            return data

        def rank_of(pair):
            return ranks.get(bytes_of(pair[0]) + bytes_of(pair[1]))

        how = ("merge every occurrence of the adjacent pair whose joined bytes have the lowest rank "
               "(the lecture's loop over tiktoken's ranks)")
    elif getattr(tok, "pieces", None) is not None:
        raise TokexplorerError(
            f"{tok.name} merges by piece score (SentencePiece), not by a list of ranked rules: "
            "the by-rule trace is for byte-level BPE (trained here, tiktoken); the per-occurrence "
            "trace shows its merges")
    else:
        raise TokexplorerError(
            f"{tok.name}'s merges are not byte pairs with ranks that this trace can replay: the by-rule "
            "trace is for byte-level BPE trained here or read as tiktoken ranks")
    ids, rules, work = initial, [], 0
    infinity = float("inf")
    while len(ids) >= 2:
        work += len(ids)
        if work > MAX_RULE_WORK:
            raise TokexplorerError(
                f"the by-rule trace of this chunk ({len(chunk):,} bytes) would read more than "
                f"{MAX_RULE_WORK:,} parts over its passes; trace a shorter chunk, or use the "
                "per-occurrence trace")
        # subtle: a dict, not a set, of the pairs: min() then breaks ties by first occurrence,
        # as min() over the notebook's get_stats dict does.
        stats = dict.fromkeys(zip(ids, ids[1:]))
        pair = min(stats, key=lambda p: (r if (r := rank_of(p)) is not None else infinity))
        rank = rank_of(pair)
        if rank is None:
            break
        new = merges[pair] if ranks is None else rank
        ids, at = _merge(ids, pair, new)
        rules.append(RuleStep(pair, bytes_of(pair[0]), bytes_of(pair[1]), new, rank, tuple(at), len(ids)))
    return RuleTrace(tok.name, chunk, initial, rules, ids, how)


def rules_at(tok: Tokenizer, encoding: Encoding, first: int, stop: int) -> RuleTrace:
    """The by-rule trace of tokens [first, stop) of an encoding (a chunk from `encode_trace.chunk_at`)."""
    if (encoding.flags[first:stop] & TokenFlag.SPECIAL).any():
        raise TokexplorerError("this is a special token: it was added to the vocabulary, not built by merges")
    data = b"".join(encoding.token_bytes[i] for i in range(first, stop))
    trace = trace_rules(tok, data)
    return replace(trace, start=int(encoding.starts[first]), end=int(encoding.ends[stop - 1]))
