"""The regex locality rule: specials first, then a split pattern's chunks, each BPE-encoded alone
(tiktoken's encode, minbpe's Regex tokenizer; `core.tokenizer.RegexChunks`).

It is exact for the patterns of `LOCAL_PATTERNS` (GPT-2, cl100k, o200k, Qwen, Tekken, Llama 3, and
minbpe's spellings): they have no lookbehind, so the matches after a chunk boundary depend only on
the text after it. Re-splitting restarts at an old boundary far enough before the edit that no
earlier match looked at the edited text, and stops at the first new chunk that equals an old one
(shifted) after the edit: every later chunk is then unchanged. Qwen's NFC counts as the identity
while the text is NFC, checked on the edited window only.

It does not decide which tokenizer gets it (`rules`) nor splice arrays (`splice`).
"""

from __future__ import annotations

import unicodedata
from typing import Callable, Iterator, Sequence

import numpy as np
import regex

from tokexplorer.core.backends.normalization import nfc_stable_window
from tokexplorer.core.encoding import Encoding, LazyTokenBytes, TokenIds, running_bounds
from tokexplorer.core.incremental.recycler import Recycler
from tokexplorer.core.incremental.splice import Window, splice, spliced
from tokexplorer.core.incremental.state import (Abandoned, NotLocal, PendingChunks, State, first_token,
                                                next_special)
from tokexplorer.core.patterns import TILING_PATTERNS, compile_pattern, piece_spans
from tokexplorer.core.tokenizer import RegexChunks, Tokenizer

# minbpe's spellings of the GPT-2 and GPT-4 patterns (karpathy/minbpe, minbpe/regex.py).
MINBPE_GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
MINBPE_GPT4_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*"""
    r"""|\s*[\r\n]|\s+(?!\S)|\s+"""
)
# Patterns whose matches tile the text and look at most LOOKAHEAD characters past their end,
# except across a whitespace run that starts in the match (scanned to its end by `\s+(?!\S)`,
# `\s++$`, `\s*[\r\n]`). An arbitrary regex can look arbitrarily far (`a(?=.*z)`), so it gets no
# fast path.
# The tiling patterns of `patterns` (GPT-2, cl100k, o200k; Qwen, Tekken and Llama 3 are of the same
# kind: one digit, or up to three, per chunk; letters, punctuation runs with the newlines after them,
# whitespace runs) and minbpe's spellings of GPT-2's and GPT-4's.
LOCAL_PATTERNS = TILING_PATTERNS | {MINBPE_GPT2_PATTERN, MINBPE_GPT4_PATTERN}
LOOKAHEAD = 2  # o200k's failed contraction "'re" after a word reads two characters past it
# Past this many re-split chunks (about 40 ms of Python), tiktoken's full encode is faster.
MAX_WINDOW_CHUNKS = 10_000
# Characters a full split runs through in one regex call, whose list of matches is held at once:
# a piece's, never the text's (for 50 MB, ten million strings).
SPLIT_PIECE = 1 << 16

# Reverse match from a position: the run of whitespace that ends there.
WS_RUN_BEFORE = regex.compile(r"\s*", flags=regex.REVERSE)


class RegexRule:
    """Specials first, then regex chunks, each chunk BPE-encoded alone (tiktoken's encode)."""

    # A long text's chunks come from this rule's own regex split, which can run in a second thread
    # beside the library's encode (`IncrementalEncoder`).
    split_beside_encode = True

    def __init__(self, tokenizer: Tokenizer, chunks: RegexChunks):
        self._encode_chunks = chunks.encode_chunks  # each chunk's ids, as the full encode makes them
        self._bytes_of = chunks.tokens_bytes  # each token's bytes
        # Each id's byte length, if known: the window's bytes are then looked up only when read
        # (a window of a million letters has half a million tokens: 0.7 s of Python for their bytes).
        self._byte_lengths = chunks.byte_lengths
        self._regex = compile_pattern(chunks.pattern)
        self._special_ids = tokenizer.special_tokens
        self._special_id_set = frozenset(self._special_ids.values())
        # Qwen's encode NFC-normalises first: where that is the identity the chunks are the text's.
        self._nfc = tokenizer.normalizes == "NFC"

    def bounds(self, text: str, allowed: set[str], *, wanted: Callable[[], bool] = lambda: True
               ) -> np.ndarray | None:
        """The chunks of the whole (cleaned) text: chunk i spans code points bounds[i] to
        bounds[i + 1]; None if they do not tile the text (then edits encode it whole). Raises
        Abandoned as soon as `wanted()` is false (asked between pieces).

        subtle: the regex calls let go of the interpreter lock (`concurrent`), so the split can
        run beside the library's encode, on another core (the encoder does so for a long text)."""
        order = sorted(allowed)  # as the backend's chunk finder orders its alternation
        lengths: list[np.ndarray] = []  # int32 per piece: a 50 MB text has ten million chunks
        pos = 0
        while pos < len(text):
            at, special = next_special(text, pos, len(text), order)
            # subtle: findall makes no match objects (2x faster); LOCAL_PATTERNS tile the text,
            # so the lengths alone give the chunks. A huge text goes in pieces, so that no list of
            # matches holds more than a piece's.
            for a, b in piece_spans(text, pos, at, size=SPLIT_PIECE) if at > pos else ():
                if not wanted():
                    raise Abandoned
                piece = np.fromiter(map(len, self._regex.findall(text, a, b, concurrent=True)), dtype=np.int32)
                if int(piece.sum(dtype=np.int64)) != b - a:
                    return None
                lengths.append(piece)
            if special is not None:
                lengths.append(np.array([len(special)], dtype=np.int32))
                at += len(special)
            pos = at
        return running_bounds(lengths)

    def full(self, enc: Encoding, allowed: set[str], chunks: PendingChunks | None = None) -> State:
        """The state of a whole encode; `chunks`: the text's split, if one is running already."""
        if self._nfc and not unicodedata.is_normalized("NFC", enc.text):
            return State(enc)  # tokens found on another text than this: edits re-encode it whole
        text = enc.text
        if chunks is None:
            bounds = self.bounds(text, allowed)
            chunk_spans = None if bounds is None else (bounds[:-1], bounds[1:])
        else:
            bounds, chunk_spans = chunks, chunks.spans  # the Encoding waits for it on first use
        full = Encoding.from_parts(
            text, enc.ids, enc.token_bytes, enc.byte_starts, enc.byte_ends,
            special_mask=enc.special_mask, byte_fallback_mask=enc.byte_fallback_mask,
            starts=enc.starts, ends=enc.ends, flags=enc.flags, n_bytes=enc.n_bytes,
            chunk_spans=chunk_spans, id_array=enc.id_array, byte_bounds=enc.byte_bounds,
            char_bounds=enc.char_bounds,  # (known once starts is: read above)
            chunk_finder=enc.chunk_finder,  # for chunks that do not tile the text (bounds None)
        )
        return State(full, bounds)

    def _chunks(self, text: str, pos: int, order: Sequence[str]) -> Iterator[tuple[int, int, str | None]]:
        """(start, end, special token or None) of every chunk from `pos`, which must be a chunk
        boundary of the whole text's split."""
        while pos < len(text):
            at, special = next_special(text, pos, len(text), order)
            for m in self._regex.finditer(text, pos, at):
                if m.end() > m.start():
                    yield m.start(), m.end(), None
            if special is not None:
                yield at, at + len(special), special
                at += len(special)
            pos = at

    def edit(self, state: State, p: int, removed: int, inserted: str, new: str, allowed: set[str],
             recycler: Recycler | None = None):
        if state.chunk_bounds is None:
            return None
        enc, ce = state.enc, state.chunk_ends
        if self._nfc:  # the old text is NFC; the new one is where the edit leaves it so
            lo, hi = nfc_stable_window(new, p, p + len(inserted))
            if not unicodedata.is_normalized("NFC", new[lo:hi]):
                return None
        old, n_tok = enc.text, len(enc.ids)
        delta = len(inserted) - removed
        # Restart point. A match ending at e read characters up to e + LOOKAHEAD, or to the end of
        # a whitespace run it started in; and whether a position ends a segment depends on the
        # special token starting there (longest L). So matches ending at or before `bound` read
        # nothing the edit changed: they stay, and the split restarts at the last such end.
        longest = self._reach(allowed)
        q = max(p - longest, 0)
        bound = min(q - LOOKAHEAD - 1, WS_RUN_BEFORE.match(old, 0, q).start())
        k = int(np.searchsorted(ce, bound, side="right"))  # chunks [0, k) are kept
        a = int(ce[k - 1]) if k else 0
        edit_end = p + len(inserted)  # new[edit_end:] == old[p + removed:]

        try:
            window, j = self._resplit(state, new, a, edit_end, delta, allowed)
        except NotLocal:
            return None
        if window is None:
            return None  # a huge paste, or a digit run regrouped to its end: encode it all
        t0, t1 = first_token(state, k), first_token(state, j)
        b = window[-1][1] if window else a
        byte_a = int(enc.byte_starts[t0]) if t0 < n_tok else enc.n_bytes

        per_chunk = self._encode_window(new, window, allowed)
        if per_chunk is None:
            return None
        ids: list[int] = []
        for chunk_ids in per_chunk:
            ids += chunk_ids
        id_array = np.asarray(ids, dtype=np.int64)
        if self._byte_lengths is not None:
            token_bytes = LazyTokenBytes(ids, self._bytes_of)
            lengths = self._byte_lengths[id_array]
        else:
            token_bytes = self._bytes_of(ids)
            lengths = np.fromiter(map(len, token_bytes), dtype=np.int64, count=len(ids))
        byte_ends = byte_a + np.cumsum(lengths)
        old_bytes = (int(enc.byte_starts[t1]) if t1 < n_tok else enc.n_bytes) - byte_a
        byte_delta = (int(byte_ends[-1]) - byte_a if ids else 0) - old_bytes
        special_mask = None  # as the backend: a mask only when special tokens can occur
        if allowed and self._special_id_set:
            special_mask = np.isin(id_array, list(self._special_id_set))
        win = Window(a, b, TokenIds(id_array), token_bytes, byte_ends - lengths, byte_ends, special_mask, None)

        # The window's chunks run from bounds[k] to where old chunk j now starts (or the end).
        bounds = spliced(state.chunk_bounds, k, j, np.array([w[0] for w in window], dtype=np.int64), delta,
                         recycler)
        new_enc, changed = splice(
            enc, t0, t1, win, new, byte_a, byte_delta, (p, edit_end), self._bytes_of, (bounds[:-1], bounds[1:]),
            recycler,
        )
        return State(new_enc, bounds), changed

    def _resplit(self, state: State, new: str, a: int, edit_end: int, delta: int, allowed: set[str]):
        """The new chunks from `a` up to the first one after the edit that equals an old one, and
        the index of that old chunk (the number of chunks if none); the chunks are None when the
        window grows too large. Raises NotLocal when the split cannot be proved local."""
        cs, ce = state.chunk_starts, state.chunk_ends
        n_chunks = len(cs)
        window: list[tuple[int, int, str | None]] = []
        j = n_chunks  # old chunks [j, m) are kept, shifted by delta
        jj = -1
        for s, e, special in self._chunks(new, a, sorted(allowed)):
            if s >= edit_end:
                # subtle: from here the text is the old text shifted; once a chunk equals an old one
                # (same span, same kind) the split continues from the same place in the same text
                # with the same segment end (the next special after it), so all later chunks agree.
                if jj < 0:
                    jj = int(np.searchsorted(cs, s - delta, side="left"))
                while jj < n_chunks and cs[jj] < s - delta:
                    jj += 1
                if (
                    jj < n_chunks and cs[jj] == s - delta and ce[jj] == e - delta
                    and self._is_special(state, jj) == (special is not None)
                ):
                    j = jj
                    break
            window.append((s, e, special))
            if len(window) > max(MAX_WINDOW_CHUNKS, n_chunks // 4):
                return None, j
        return window, j

    def _reach(self, allowed: set[str]) -> int:
        """How far before an edit a token matched before the split (a special) may start."""
        return max(map(len, allowed), default=0)

    def _encode_window(self, new: str, window, allowed: set[str]) -> list[list[int]] | None:
        """Each window chunk's ids (None: not provably what a full encode gives)."""
        # one call for the window's chunks (the tokenizer's chunk encoder takes a list of them)
        encoded = iter(self._encode_chunks([new[s:e] for s, e, special in window if not special]))
        return [[self._special_ids[special]] if special else next(encoded) for _, _, special in window]

    def _is_special(self, state: State, chunk: int) -> bool:
        """Whether an old chunk is an allowed special token (one token with a special id)."""
        t = first_token(state, chunk)
        return state.enc.ids[t] in self._special_id_set if t < len(state.enc.ids) else False
