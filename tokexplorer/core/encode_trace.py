"""The step-by-step trace of how BPE encodes one chunk: which pair merged at which rank, and the
sequence after each merge. A slow, plain reference (one merge per step, the lowest rank first,
leftmost on ties), so its final ids are checked against the tokenizer's own encoder.

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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from .encoding import Encoding, TokenFlag
from .tokenizer import Tokenizer, TokexplorerError

MAX_TRACE_BYTES = 2048  # a step scans every pair: longer chunks take seconds in pure Python
SPACE_MARK = "\u2581"  # ▁, SentencePiece's space


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
    """The merges that encoded `chunk` (characters `start`..`end` of the text when known)."""

    tokenizer: str
    chunk: bytes
    initial: list[Part]
    steps: list[TraceStep]
    final: list[int]  # the ids the trace ends with (after byte fallback, for SentencePiece)
    how: str  # one line: how the next merge is chosen
    start: int = -1
    end: int = -1
    fallback: list[str] = field(default_factory=list)  # SentencePiece parts that became byte pieces

    def sequence(self, k: int) -> list[Part]:
        """The parts after the first k steps (0: before any merge)."""
        parts = list(self.initial)
        for step in self.steps[:k]:
            parts[step.position : step.position + 2] = [
                Part(step.new_id, step.left.bytes + step.right.bytes)]
        return parts

    def to_dict(self) -> dict:
        """For JSON: the chunk, each step's pair, rank and sequence, and the final ids."""
        def ids(parts):
            return [p.id for p in parts]

        steps, parts = [], list(self.initial)
        for step in self.steps:
            parts[step.position : step.position + 2] = [Part(step.new_id, step.left.bytes + step.right.bytes)]
            steps.append({"pair": [step.left.id, step.right.id], "new_id": step.new_id, "rank": step.rank,
                          "position": step.position, "bytes": (step.left.bytes + step.right.bytes).hex(),
                          "ids": ids(parts)})
        return {"tokenizer": self.tokenizer, "chunk": self.chunk.decode("utf-8", "replace"),
                "start": self.start, "end": self.end, "how": self.how,
                "initial": ids(self.initial), "steps": steps, "final": self.final}


def _merge_loop(parts: list[Part], rank_of) -> list[TraceStep]:
    """Merge the adjacent pair of lowest rank_of(left, right) (None: no merge) until none is left."""
    steps = []
    while len(parts) > 1:
        best = None  # (rank, position, new id)
        for i in range(len(parts) - 1):
            found = rank_of(parts[i], parts[i + 1])
            if found is not None and (best is None or found[0] < best[0]):
                best = (found[0], i, found[1])
        if best is None:
            break
        rank, i, new = best
        steps.append(TraceStep(i, parts[i], parts[i + 1], new, rank))
        parts[i : i + 2] = [Part(new, parts[i].bytes + parts[i + 1].bytes)]
    return steps


def _check_length(chunk: bytes) -> None:
    if len(chunk) > MAX_TRACE_BYTES:
        raise TokexplorerError(
            f"this chunk is {len(chunk):,} bytes; the step-by-step trace covers chunks up to "
            f"{MAX_TRACE_BYTES:,} bytes (each step rescans every pair)")


def trace_bytes(tok: Tokenizer, chunk: bytes) -> EncodeTrace:
    """Trace a byte-level BPE (tiktoken encoding or trained here) over one pre-split chunk.

    >>> from tokexplorer.core.tiktoken_backend import TiktokenTokenizer
    >>> ranks = {b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}
    >>> t = trace_bytes(TiktokenTokenizer.from_ranks("toy", ranks, r"\\S+"), b"abbab")
    >>> [(s.position, s.new_id) for s in t.steps], t.final
    ([(0, 2), (2, 2), (0, 3)], [3, 2])
    """
    _check_length(chunk)
    merges = getattr(tok, "merges", None)
    if isinstance(merges, dict) and merges and isinstance(next(iter(merges)), tuple):
        initial = [Part(b, bytes([b])) for b in chunk]

        def rank_of(a: Part, b: Part):
            new = merges.get((a.id, b.id))
            return None if new is None else (new, new)

        how = "merge the adjacent pair learned first (minbpe)"
    else:
        ranks = getattr(tok, "mergeable_ranks", None)
        if ranks is None:
            raise TokexplorerError(f"{tok.name} is not a byte-level BPE tokenizer; it has no merges to trace")
        try:
            initial = [Part(ranks[bytes([b])], bytes([b])) for b in chunk]
        except KeyError:
            raise TokexplorerError(f"{tok.name} has no token for some single byte of this chunk") from None

        def rank_of(a: Part, b: Part):
            rank = ranks.get(a.bytes + b.bytes)
            return None if rank is None else (rank, rank)

        how = "merge the adjacent pair whose joined bytes have the lowest rank (tiktoken)"
    parts = list(initial)
    steps = _merge_loop(parts, rank_of)
    return EncodeTrace(tok.name, chunk, initial, steps, [p.id for p in parts], how)


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
    from .merge_tree import piece_order

    word = text.replace(" ", SPACE_MARK)
    chunk = word.replace(SPACE_MARK, " ").encode("utf-8")
    _check_length(chunk)
    ids, order = piece_order(tok)
    specials = set(tok.special_tokens.values())
    initial = [Part(ids.get(ch), ch.replace(SPACE_MARK, " ").encode("utf-8")) for ch in word]

    def rank_of(a: Part, b: Part):
        piece = (a.bytes + b.bytes).decode("utf-8").replace(" ", SPACE_MARK)
        new = ids.get(piece)
        if new is None or new in specials:
            return None
        return (order[piece], new)

    parts = list(initial)
    steps = _merge_loop(parts, rank_of)
    steps = [s._replace(rank=round(s.rank)) for s in steps]
    final, fallback = [], []
    byte_fallback = bool(options.get("byte_fallback"))
    unk = next((i for p, i in tok.special_tokens.items() if p == "<unk>"), 0)
    for p in parts:
        if p.id is not None:
            final.append(p.id)
        elif byte_fallback:
            fallback.append(p.bytes.decode("utf-8"))
            final += [ids[f"<0x{b:02X}>"] for b in p.bytes]
        else:
            final.append(unk)
    how = "merge the adjacent pair whose joined piece has the highest score (SentencePiece BPE)"
    return EncodeTrace(tok.name, chunk, initial, steps, final, how, fallback=fallback)


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

    >>> from tokexplorer.core.tiktoken_backend import TiktokenTokenizer
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
    return EncodeTrace(trace.tokenizer, trace.chunk, trace.initial, trace.steps, trace.final, trace.how,
                       start, end, trace.fallback)
