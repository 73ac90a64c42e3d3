"""Incremental re-tokenization: after an edit, re-encode only a window around it.

An `IncrementalEncoder` holds a tokenizer, a special-token policy and the Encoding of the current
text. `edit(start, removed, inserted)` (or `update(new_text)`, which finds the edit itself) returns
the Encoding of the new text, exactly what a full encode gives (ids, token bytes, spans, flags,
chunks), and the code-point range of the new text whose tokens changed, so an editor repaints only
that. The work is a small window around the edit plus numpy splicing of the per-token arrays.

Three locality rules, each used only where it is provably exact:

- Regex pre-split (the tiktoken and trained-BPE families, with one of `LOCAL_PATTERNS`: GPT-2,
  cl100k, o200k, Qwen, Tekken, Llama 3): chunks are BPE-encoded independently, and the pattern has
  no lookbehind, so the matches after a chunk boundary depend only on the text after it.
  Re-splitting restarts at an old boundary far enough before the edit that no earlier match
  looked at the edited text, and stops at the first new chunk that equals an old one (shifted)
  after the edit: every later chunk is then unchanged. Qwen's NFC counts as the identity while
  the text is NFC, checked on the edited window only.
- DeepSeek's `tokenizer.json` splits (digit groups, CJK runs, then a regex in each piece): the
  same restart and stop, with the pieces' ends found near the window (`_SplitsRule`); the library
  itself encodes the window's chunks.
- SentencePiece BPE with byte fallback and identity normalisation, when no piece contains "\\n":
  a newline is always its own byte piece, so no merge crosses it and each line is encoded on its
  own; a line after a newline is encoded without the dummy-prefix space (a second processor).
  When no piece has '▁' after another character (Llama's), no merge crosses from a word into the
  spaces after it either, so the window is the words around the edit, not the whole line.

Any other tokenizer (custom patterns, unigram or normalising SentencePiece models, other
tokenizer.json pipelines, families whose full encode has not been checked against these rules) is
re-encoded whole on every edit: correct, not fast. Positions are code points (convert Qt's UTF-16 positions first, or use `update`).
Not thread-safe: one worker owns an encoder.
"""

from __future__ import annotations

import threading
import unicodedata
import weakref
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Callable, Iterator, NamedTuple, Sequence

import numpy as np
import regex

from tokexplorer.core.encoding import Encoding, LazyTokenBytes, TokenIds, running_bounds
from tokexplorer.core.backends.gguf_model import DEEPSEEK_V3_PATTERNS
from tokexplorer.core.backends.normalization import nfc_stable_window
from tokexplorer.core.patterns import TILING_PATTERNS, compile_pattern, piece_spans
from tokexplorer.core.backends.sentencepiece_family import SPACE_MARK
from tokexplorer.core.tokenizer import (
    AllowedSpecial, DisallowedSpecialError, Tokenizer, TokexplorerError, clean_text, resolve_special,
)

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
# Characters from which a whole encode splits the text in a second thread (`_full_overlapped`).
OVERLAP_TEXT = 1 << 18

# Reverse matches from a position: the run of whitespace (of spaces) that ends there.
_WS_RUN_BEFORE = regex.compile(r"\s*", flags=regex.REVERSE)
_SPACES_BEFORE = regex.compile(" *", flags=regex.REVERSE)
_WORD_END = regex.compile("(?<=[^ ]) ")  # a space after a non-space
_NON_SPACE = regex.compile(r"\S")

Changed = tuple[int, int]  # (start, end) code points of the new text whose tokens changed


class _NotLocal(Exception):
    """A window's split met what the rule does not model: encode the whole text instead."""


class _Abandoned(Exception):
    """Nothing wants the chunks of a split still running (its text was replaced): it stops."""


class IncrementalEncoder:
    """The Encoding of an edited text, re-encoding only around each edit.

    An editor's worker keeps one per (tokenizer, policy): `reset` when a file is opened, then per
    debounced change either `edit` (positions in code points) or `update` with the whole new text;
    repaint the returned `changed` range. The constructor and `reset` encode the whole text (and
    raise DisallowedSpecialError as `encode` does).

    >>> from tokexplorer.core.registry import get_builtin
    >>> inc = IncrementalEncoder(get_builtin("gpt2"), "hello world")
    >>> enc, changed = inc.edit(5, 0, ",")
    >>> enc.text, enc.ids == get_builtin("gpt2").encode("hello, world").ids, changed
    ('hello, world', True, (5, 6))
    """

    def __init__(
        self, tokenizer: Tokenizer, text: str = "", *, allowed_special: AllowedSpecial | None = None
    ):
        self.tokenizer = tokenizer
        self.allowed_special = allowed_special
        # (A property that copies a thousand entries for DeepSeek or Tekken: read once, not per edit.)
        self._specials = tokenizer.special_tokens
        self._longest_special = max(map(len, self._specials), default=1)
        self._local = _local_rule(tokenizer)
        self._state = self._full(text)

    @property
    def encoding(self) -> Encoding:
        """The Encoding of the current text."""
        return self._state.enc

    @property
    def text(self) -> str:
        """The current text (inserted lone surrogates are U+FFFD here)."""
        return self._state.enc.text

    @property
    def is_incremental(self) -> bool:
        """Whether edits re-encode a window (True) or the whole text (False) for this tokenizer."""
        return self._local is not None

    def reset(self, text: str) -> Encoding:
        """Encode `text` whole and make it the current text.

        Raises DisallowedSpecialError (state unchanged) if the policy refuses the text.
        """
        self._state = self._full(text)
        return self._state.enc

    def edit(self, start: int, removed: int, inserted: str) -> tuple[Encoding, Changed]:
        """Replace `removed` code points at `start` by `inserted`; return the new Encoding and the
        code-point range of the new text whose tokens differ from before (it always contains the
        inserted text; tokens outside it are unchanged, only shifted).

        Lone surrogates in `inserted` become U+FFFD, as in a full encode: the Encoding's text is
        the truth. Raises DisallowedSpecialError (state unchanged) if the new text spells a special
        token the policy refuses.
        """
        old = self._state.enc.text
        if not (0 <= start <= len(old) and 0 <= removed <= len(old) - start):
            raise TokexplorerError(
                f"edit out of range: removing {removed} characters at {start} in a text of "
                f"{len(old)} characters (positions are code points, not UTF-16 units)"
            )
        inserted = clean_text(inserted)
        new = old[:start] + inserted + old[start + removed :]
        allowed = self._check_policy(new, start, start + len(inserted))
        result = None
        if self._local is not None:
            result = self._local.edit(self._state, start, removed, inserted, new, allowed)
        if result is None:  # no locality rule, or the window could not be proved exact
            state = self._full(new)
            changed = _changed_tokens(self._state.enc, state.enc, start, start + len(inserted))
            result = state, changed
        self._state = result[0]
        return result[0].enc, result[1]

    def update(self, text: str) -> tuple[Encoding, Changed]:
        """Make `text` the current text, as the one edit that keeps the common prefix and suffix.

        For an editor that knows only the new text (or coalesced several edits).
        """
        return self.edit(*text_edit(self._state.enc.text, clean_text(text)))

    def _check_policy(self, new: str, start: int, end: int) -> set[str]:
        """The allowed special tokens; raise if the new text spells a refused one.

        The current text passed the policy, so a refused token can only appear where it overlaps
        the inserted text new[start:end]: look there, not through the whole text.
        """
        longest = self._longest_special
        lo = max(start - longest + 1, 0)
        try:
            return resolve_special(self._specials, self.allowed_special, new[lo : end + longest - 1])
        except DisallowedSpecialError as exc:
            raise DisallowedSpecialError(exc.token, exc.position + lo) from None

    def _full(self, text: str) -> "_State":
        if type(self._local) is _RegexRule and len(text) >= OVERLAP_TEXT:  # (not _SplitsRule: the library splits)
            return self._full_overlapped(clean_text(text))
        enc = self.tokenizer.encode(text, allowed_special=self.allowed_special)
        if self._local is None:
            return _State(enc)
        allowed = resolve_special(self._specials, self.allowed_special, enc.text)
        return self._local.full(enc, allowed)

    def _full_overlapped(self, text: str) -> "_State":
        """`_full` of a long text, its regex split in a second thread started beside the library's
        encode (both let go of the interpreter lock) and waited for only where the chunks are
        first needed: the next edit, the chunk view. The text's tokens do not wait for it (on a
        50 MB text the split takes longer than the encode)."""
        allowed = resolve_special(self._specials, self.allowed_special, text)
        split: Future = Future()
        chunks, rule = _Chunks(split), self._local
        wanted = weakref.ref(chunks)  # gone with the state and its Encoding: the split stops

        def run() -> None:
            try:
                split.set_result(rule.bounds(text, allowed, wanted=lambda: wanted() is not None))
            except BaseException as exc:  # raised again where the chunks are asked for
                split.set_exception(exc)

        threading.Thread(target=run, name="tokexplorer-split", daemon=True).start()
        enc = self.tokenizer.encode(text, allowed_special=self.allowed_special)
        return rule.full(enc, allowed, chunks)


class _Chunks:
    """A text's regex chunks as a split running in another thread finds them (`_RegexRule.bounds`);
    read on first use. `bounds` and `spans` (the (starts, ends) arrays an Encoding keeps) wait for
    the split, and raise what it raised; both are None when the chunks do not tile the text."""

    def __init__(self, split: Future):
        self._split = split

    @property
    def bounds(self) -> np.ndarray | None:
        return self._split.result()

    def spans(self) -> tuple[np.ndarray, np.ndarray] | None:
        bounds = self.bounds
        return None if bounds is None else (bounds[:-1], bounds[1:])


class _State:
    """An Encoding and, for the regex rules, its chunks: chunk i spans code points
    chunk_bounds[i] to chunk_bounds[i + 1] (the chunks tile the text, so one array splices for
    both ends), or a split still running (`_Chunks`). A chunk's first token is the first that
    starts at or after the chunk's start: a search, not another array to splice."""

    __slots__ = ("enc", "_chunks")

    def __init__(self, enc: Encoding, chunk_bounds: np.ndarray | _Chunks | None = None):
        self.enc = enc
        self._chunks = chunk_bounds

    @property
    def chunk_bounds(self) -> np.ndarray | None:  # int64 [m + 1]
        if isinstance(self._chunks, _Chunks):
            # A split that failed raises here once; the edits after it encode the whole text.
            chunks, self._chunks = self._chunks, None
            self._chunks = chunks.bounds
        return self._chunks

    @property
    def chunk_starts(self) -> np.ndarray:
        return self.chunk_bounds[:-1]

    @property
    def chunk_ends(self) -> np.ndarray:
        return self.chunk_bounds[1:]


def _tiled(starts: np.ndarray, ends: np.ndarray, n: int) -> np.ndarray | None:
    """The bounds of chunks that tile text[0:n] one after another, or None if they do not.

    >>> _tiled(np.array([0, 2]), np.array([2, 5]), 5).tolist(), _tiled(np.array([0]), np.array([2]), 5)
    ([0, 2, 5], None)
    """
    if not len(starts):
        return np.zeros(1, dtype=np.int64) if n == 0 else None
    if starts[0] != 0 or ends[-1] != n or not np.array_equal(starts[1:], ends[:-1]):
        return None
    return np.append(starts, n).astype(np.int64, copy=False)


def _first_token(state: _State, chunk: int) -> int:
    """Index of the first token of a chunk (the number of tokens past the last chunk): tokens
    never cross a chunk's start, so it is the first token starting at or after it."""
    starts = state.chunk_starts
    if chunk >= len(starts):
        return len(state.enc.ids)
    return int(state.enc.starts.searchsorted(starts[chunk], side="left"))


def text_edit(old: str, new: str) -> tuple[int, int, str]:
    """The edit (start, removed, inserted) that turns `old` into `new`, keeping the longest common
    prefix, then the longest common suffix of what is left.

    >>> text_edit("hello world", "hello, world")
    (5, 0, ',')
    >>> text_edit("aaa", "aa")
    (2, 1, '')
    """
    limit = min(len(old), len(new))
    prefix = _common_run(old, new, limit, from_end=False)
    suffix = _common_run(old, new, limit - prefix, from_end=True)
    return prefix, len(old) - prefix - suffix, new[prefix : len(new) - suffix]


def _common_run(a: str, b: str, limit: int, *, from_end: bool) -> int:
    """Length (at most `limit`) of the common prefix, or suffix, of a and b.

    Compares galloping slices, so the work is C-speed copying proportional to the answer.
    """

    def part(s: str, lo: int, hi: int) -> str:  # characters lo..hi counted from the chosen end
        return s[len(s) - hi : len(s) - lo] if from_end else s[lo:hi]

    lo, step = 0, 1024
    while lo < limit:
        hi = min(lo + step, limit)
        if part(a, lo, hi) != part(b, lo, hi):
            break
        lo, step = hi, step * 2
    else:
        return limit
    while hi - lo > 1:  # invariant: equal before lo, a difference in [lo, hi)
        mid = (lo + hi) // 2
        if part(a, lo, mid) == part(b, lo, mid):
            lo = mid
        else:
            hi = mid
    return lo


# --- splicing ------------------------------------------------------------------------------------


@dataclass
class _Window:
    """The new tokens of a re-encoded window [start, end) of the new text (offsets absolute)."""

    start: int
    end: int
    ids: list[int] | TokenIds
    token_bytes: Sequence[bytes]
    byte_starts: np.ndarray
    byte_ends: np.ndarray
    special_mask: np.ndarray | None
    byte_fallback_mask: np.ndarray | None


def _splice(
    enc: Encoding, t0: int, t1: int, win: _Window, new_text: str, byte_start: int, byte_delta: int,
    edit: tuple[int, int], bytes_of: Callable[[list[int]], list[bytes]], chunk_spans=None,
) -> tuple[Encoding, Changed]:
    """The new Encoding: old tokens [0, t0), the window's, old tokens [t1, n) shifted; and the
    code-point range whose tokens changed.

    `byte_start` is where the window starts in the text's UTF-8 (the same in old and new text);
    `edit` is (start, end of the inserted text) in code points of the new text.
    """
    delta = len(new_text) - len(enc.text)
    # The window's own Encoding gives its spans and flags: it starts and ends on character
    # boundaries, so they are the whole text's, shifted by the window start.
    local = Encoding(
        new_text[win.start : win.end], win.ids, win.token_bytes,
        win.byte_starts - byte_start, win.byte_ends - byte_start,
        win.special_mask, win.byte_fallback_mask,
    )
    mid_end = t0 + len(win.ids)
    n_tokens = len(enc.ids) - (t1 - t0) + len(win.ids)

    def join(old: np.ndarray, mid: np.ndarray, shift: int = 0) -> np.ndarray:
        out = np.empty(n_tokens, dtype=old.dtype)
        out[:t0], out[t0:mid_end] = old[:t0], mid
        if shift:
            np.add(old[t1:], shift, out=out[mid_end:])
        else:
            out[mid_end:] = old[t1:]
        return out

    def join_mask(old: np.ndarray | None, mid: np.ndarray | None) -> np.ndarray | None:
        # The policy is fixed, so an old mask is None only where the new one is, or (byte
        # fallback) where the old text had no tokens: then the window is everything.
        if mid is None:
            return None
        return mid if old is None else join(old, mid)

    # subtle: each conversion of a window's list of ids takes time (25 ms for the half a million
    # tokens of a line of a million letters): convert once.
    mid_ids = win.ids.array if isinstance(win.ids, TokenIds) else np.asarray(win.ids, dtype=np.int64)
    id_array = join(enc.id_array, mid_ids)
    ids = TokenIds(id_array)
    bounds = _kept_bounds(enc.__dict__.get("_byte_bounds"), t0, t1, win.byte_starts, win.byte_ends,
                          byte_start, byte_delta)
    if bounds is not None:  # one array for both ends
        bounds = _spliced(bounds, t0, t1, win.byte_starts, byte_delta)
        byte_starts, byte_ends = bounds[:-1], bounds[1:]
    else:
        byte_starts = join(enc.byte_starts, win.byte_starts, byte_delta)
        byte_ends = join(enc.byte_ends, win.byte_ends, byte_delta)
    char_bounds = None  # the code-point spans as views of one array, as the byte bounds are
    if enc.starts is enc.byte_starts and new_text.isascii() and (not n_tokens or byte_starts[-1] < len(new_text)):
        starts, ends = byte_starts, byte_ends  # as Encoding finds them for ASCII text: no copies
    else:
        mid_starts, mid_ends = local.starts + win.start, local.ends + win.start
        char_bounds = _kept_bounds(enc.span_bounds, t0, t1, mid_starts, mid_ends, win.start, delta)
        if char_bounds is not None:
            char_bounds = _spliced(char_bounds, t0, t1, mid_starts, delta)
            starts, ends = char_bounds[:-1], char_bounds[1:]
        else:
            starts, ends = join(enc.starts, mid_starts, delta), join(enc.ends, mid_ends, delta)
    new = Encoding.from_parts(
        new_text, ids, LazyTokenBytes(ids, bytes_of), byte_starts, byte_ends,
        special_mask=join_mask(enc.special_mask, win.special_mask),
        byte_fallback_mask=join_mask(enc.byte_fallback_mask, win.byte_fallback_mask) if n_tokens else None,
        starts=starts, ends=ends,
        flags=join(enc.flags, local.flags),
        n_bytes=enc.n_bytes + byte_delta,
        chunk_spans=chunk_spans,
        id_array=id_array,
        byte_bounds=bounds,
        char_bounds=char_bounds,
    )
    edit_start = byte_start + len(new_text[win.start : edit[0]].encode("utf-8"))
    edit_end = edit_start + len(new_text[edit[0] : edit[1]].encode("utf-8"))
    i, j = _differing(
        enc.id_array[t0:t1], enc.byte_starts[t0:t1], enc.byte_ends[t0:t1],
        mid_ids, win.byte_starts, win.byte_ends, (edit_start, edit_end, byte_delta),
    )
    return new, _changed_range(new, i + t0, j + t0, *edit)


def _kept_bounds(bounds: np.ndarray | None, t0: int, t1: int, starts: np.ndarray, ends: np.ndarray,
                 start: int, delta: int) -> np.ndarray | None:
    """`bounds` (an Encoding's spans as views of one array: `Encoding.from_parts`), if the window's
    token spans `starts`, `ends`, from `start` on, tile the text from where token t0 started to
    where token t1 starts after the edit (`delta` later); else None."""
    if bounds is None:
        return None
    if not len(starts):
        return bounds if int(bounds[t0]) == int(bounds[t1]) + delta else None
    if int(bounds[t0]) != start or int(starts[0]) != start or int(ends[-1]) != int(bounds[t1]) + delta:
        return None
    return bounds if np.array_equal(starts[1:], ends[:-1]) else None


def _spliced(old: np.ndarray, i: int, j: int, mid: np.ndarray, shift: int) -> np.ndarray:
    """old[:i], then mid, then old[j:] + shift, written once into a new array (concatenating
    a shifted copy would write the tail twice)."""
    out = np.empty(i + len(mid) + len(old) - j, dtype=old.dtype)
    out[:i], out[i : i + len(mid)] = old[:i], mid
    np.add(old[j:], shift, out=out[i + len(mid) :])
    return out


def _differing(
    old_ids, old_starts, old_ends, new_ids, new_starts, new_ends, edit: tuple[int, int, int]
) -> tuple[int, int]:
    """[i, j): the new tokens left after removing the common prefix (same id and place, wholly
    before the edit) and the common suffix (same id, place shifted, wholly after the edit).

    `edit` is (where the edit starts, where the inserted text ends, the length change), in bytes
    of the new text. subtle: a token of the same id at the shifted place can still be new (delete
    "<s>3" from "3<s>31": "31" now starts at the first "3"), hence "wholly before / after".
    """
    edit_start, edit_end, byte_delta = edit
    old_ids, new_ids = np.asarray(old_ids, dtype=np.int64), np.asarray(new_ids, dtype=np.int64)
    n = min(len(old_ids), len(new_ids))
    same = (old_ids[:n] == new_ids[:n]) & (old_starts[:n] == new_starts[:n])
    # subtle: compare ends too: a normalising tokenizer's token covers text of its own length
    # (Qwen's "0" covered "0\u0340" until the U+0340 was deleted), so the same id at the same
    # start can end elsewhere.
    same &= (old_ends[:n] == new_ends[:n]) & (new_ends[:n] <= edit_start)
    i = n if same.all() else int(np.argmin(same))
    m = n - i  # the suffix may not overlap the prefix
    tail_o, tail_n = slice(len(old_ids) - m, len(old_ids)), slice(len(new_ids) - m, len(new_ids))
    same = (old_ids[tail_o] == new_ids[tail_n]) & (old_ends[tail_o] + byte_delta == new_ends[tail_n])
    # subtle: compare starts too: SentencePiece's dummy-prefix space makes a token's byte span
    # shorter than its bytes, so the same id can end at the same place and start elsewhere.
    same &= (old_starts[tail_o] + byte_delta == new_starts[tail_n]) & (new_starts[tail_n] >= edit_end)
    same = same[::-1]
    k = m if same.all() else int(np.argmin(same))
    return i, len(new_ids) - k


def _changed_range(enc: Encoding, first: int, last: int, edit_start: int, edit_end: int) -> Changed:
    """Code points covered by tokens [first, last) of `enc`, and by the inserted text."""
    if first >= last:
        return edit_start, edit_end
    return min(edit_start, int(enc.starts[first])), max(edit_end, int(enc.ends[last - 1]))


def _changed_tokens(old: Encoding, new: Encoding, edit_start: int, edit_end: int) -> Changed:
    """The changed range after a full re-encode, from the common prefix and suffix of the tokens."""
    byte_start = len(new.text[:edit_start].encode("utf-8"))
    byte_end = byte_start + len(new.text[edit_start:edit_end].encode("utf-8"))
    i, j = _differing(
        old.ids, old.byte_starts, old.byte_ends, new.ids, new.byte_starts, new.byte_ends,
        (byte_start, byte_end, new.n_bytes - old.n_bytes),
    )
    return _changed_range(new, i, j, edit_start, edit_end)


# --- the locality rules --------------------------------------------------------------------------


def _next_special(text: str, pos: int, end: int, order: Sequence[str]) -> tuple[int, str | None]:
    """The leftmost allowed special token in text[pos:end], ties to the earliest in `order` (as a
    regex alternation in that order finds it): (start, token), or (end, None)."""
    best, found = end, None
    for token in order:
        at = text.find(token, pos, end)
        if 0 <= at < best:
            best, found = at, token
    return best, found


class _RegexRule:
    """Specials first, then regex chunks, each chunk BPE-encoded alone (tiktoken's encode)."""

    def __init__(
        self,
        tokenizer,
        encode_chunks: Callable[[list[str]], list[list[int]]],
        bytes_of: Callable[[list[int]], list[bytes]],
        byte_lengths: np.ndarray | None = None,
    ):
        self._encode_chunks = encode_chunks  # each chunk's ids, as the full encode makes them
        self._bytes_of = bytes_of  # each token's bytes
        # Each id's byte length, if known: the window's bytes are then looked up only when read
        # (a window of a million letters has half a million tokens: 0.7 s of Python for their bytes).
        self._byte_lengths = byte_lengths
        self._regex = compile_pattern(tokenizer.split_pattern)
        self._special_ids = tokenizer.special_tokens
        self._special_id_set = frozenset(self._special_ids.values())
        # Qwen's encode NFC-normalises first: where that is the identity the chunks are the text's.
        self._nfc = getattr(tokenizer, "normalizes", None) == "NFC"

    def bounds(self, text: str, allowed: set[str], *, wanted: Callable[[], bool] = lambda: True
               ) -> np.ndarray | None:
        """The chunks of the whole (cleaned) text: chunk i spans code points bounds[i] to
        bounds[i + 1]; None if they do not tile the text (then edits encode it whole). Raises
        _Abandoned as soon as `wanted()` is false (asked between pieces).

        subtle: the regex calls let go of the interpreter lock (`concurrent`), so the split can
        run beside the library's encode, on another core (`IncrementalEncoder._full_overlapped`)."""
        order = sorted(allowed)  # as the backend's chunk finder orders its alternation
        lengths: list[np.ndarray] = []  # int32 per piece: a 50 MB text has ten million chunks
        pos = 0
        while pos < len(text):
            at, special = _next_special(text, pos, len(text), order)
            # subtle: findall makes no match objects (2x faster); LOCAL_PATTERNS tile the text,
            # so the lengths alone give the chunks. A huge text goes in pieces, so that no list of
            # matches holds more than a piece's.
            for a, b in piece_spans(text, pos, at, size=SPLIT_PIECE) if at > pos else ():
                if not wanted():
                    raise _Abandoned
                piece = np.fromiter(map(len, self._regex.findall(text, a, b, concurrent=True)), dtype=np.int32)
                if int(piece.sum(dtype=np.int64)) != b - a:
                    return None
                lengths.append(piece)
            if special is not None:
                lengths.append(np.array([len(special)], dtype=np.int32))
                at += len(special)
            pos = at
        return running_bounds(lengths)

    def full(self, enc: Encoding, allowed: set[str], chunks: _Chunks | None = None) -> _State:
        """The state of a whole encode; `chunks`: the text's split, if one is running already."""
        if self._nfc and not unicodedata.is_normalized("NFC", enc.text):
            return _State(enc)  # tokens found on another text than this: edits re-encode it whole
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
            chunk_spans=chunk_spans, id_array=enc.id_array, byte_bounds=enc.__dict__.get("_byte_bounds"),
            char_bounds=enc.__dict__.get("_char_bounds"),  # (known once starts is: read above)
            chunk_finder=enc.chunk_finder,  # for chunks that do not tile the text (bounds None)
        )
        return _State(full, bounds)

    def _chunks(self, text: str, pos: int, order: Sequence[str]) -> Iterator[tuple[int, int, str | None]]:
        """(start, end, special token or None) of every chunk from `pos`, which must be a chunk
        boundary of the whole text's split."""
        while pos < len(text):
            at, special = _next_special(text, pos, len(text), order)
            for m in self._regex.finditer(text, pos, at):
                if m.end() > m.start():
                    yield m.start(), m.end(), None
            if special is not None:
                yield at, at + len(special), special
                at += len(special)
            pos = at

    def edit(self, state: _State, p: int, removed: int, inserted: str, new: str, allowed: set[str]):
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
        bound = min(q - LOOKAHEAD - 1, _WS_RUN_BEFORE.match(old, 0, q).start())
        k = int(np.searchsorted(ce, bound, side="right"))  # chunks [0, k) are kept
        a = int(ce[k - 1]) if k else 0
        edit_end = p + len(inserted)  # new[edit_end:] == old[p + removed:]

        try:
            window, j = self._resplit(state, new, a, edit_end, delta, allowed)
        except _NotLocal:
            return None
        if window is None:
            return None  # a huge paste, or a digit run regrouped to its end: encode it all
        t0, t1 = _first_token(state, k), _first_token(state, j)
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
        win = _Window(a, b, TokenIds(id_array), token_bytes, byte_ends - lengths, byte_ends, special_mask, None)

        # The window's chunks run from bounds[k] to where old chunk j now starts (or the end).
        bounds = _spliced(state.chunk_bounds, k, j, np.array([w[0] for w in window], dtype=np.int64), delta)
        new_enc, changed = _splice(
            enc, t0, t1, win, new, byte_a, byte_delta, (p, edit_end), self._bytes_of, (bounds[:-1], bounds[1:])
        )
        return _State(new_enc, bounds), changed

    def _resplit(self, state: _State, new: str, a: int, edit_end: int, delta: int, allowed: set[str]):
        """The new chunks from `a` up to the first one after the edit that equals an old one, and
        the index of that old chunk (the number of chunks if none); the chunks are None when the
        window grows too large. Raises _NotLocal when the split cannot be proved local."""
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

    def _is_special(self, state: _State, chunk: int) -> bool:
        """Whether an old chunk is an allowed special token (one token with a special id)."""
        t = _first_token(state, chunk)
        return state.enc.ids[t] in self._special_id_set if t < len(state.enc.ids) else False


class _SplitsRule(_RegexRule):
    """DeepSeek's pre-tokenizer (a `tokenizers` Sequence of three Isolated splits, then byte-level
    BPE per piece): digit groups of up to three, then runs of CJK characters, then a regex inside
    each piece, the text between matches being pieces too.

    Digits and the CJK ranges split the text into segments, and the last regex runs inside each
    segment: its matches read up to LOOKAHEAD characters past their end or a whitespace run, as
    the LOCAL_PATTERNS do, except that a segment's end is an end of text for them. So the same
    restart and convergence hold, with segment ends found near the window only. Added tokens (the
    library matches them before splitting) are not modelled: a window near one is encoded whole.
    """

    def __init__(self, tokenizer, added: "_AddedTokens"):
        self._tokenizer = tokenizer
        self._bytes_of = tokenizer.tokens_bytes
        self._byte_lengths = None
        self._regex = compile_pattern(DEEPSEEK_V3_PATTERNS[2])
        cjk = DEEPSEEK_V3_PATTERNS[1][:-1]  # the character class, without its "+"
        self._hard_char = regex.compile(rf"[\p{{N}}{cjk[1:-1]}]")  # where a segment ends
        self._hard_piece = regex.compile(rf"{DEEPSEEK_V3_PATTERNS[0]}|{DEEPSEEK_V3_PATTERNS[1]}")
        self._added, self._added_lengths, self._added_first, self._added_reach = added
        self._special_ids = tokenizer.special_tokens
        self._special_id_set = frozenset(self._special_ids.values())
        self._nfc = False

    def full(self, enc: Encoding, allowed: set[str]) -> _State:
        cs, ce = enc.chunk_finder.spans()
        bounds = _tiled(cs, ce, len(enc.text))
        # as `chunks` would find them, kept as arrays
        enc.__dict__["_chunk_spans"] = (cs, ce) if bounds is None else (bounds[:-1], bounds[1:])
        return _State(enc, bounds)

    def _reach(self, allowed: set[str]) -> int:
        return self._added_reach

    def _encode_window(self, new: str, window, allowed: set[str]) -> list[list[int]] | None:
        return self._tokenizer.encode_words([new[s:e] for s, e, _ in window], allowed)

    def _has_added(self, text: str, lo: int, hi: int) -> bool:
        """Whether an added token starts in text[lo:hi]."""
        added, lengths = self._added, self._added_lengths
        for first in self._added_first:
            at = text.find(first, lo, hi)
            while at >= 0:
                if any(text[at:at + n] in added for n in lengths):
                    return True
                at = text.find(first, at + 1, hi)
        return False

    def _chunks(self, text: str, pos: int, order: Sequence[str]) -> Iterator[tuple[int, int, str | None]]:
        n = len(text)
        step = 1024
        while pos < n:
            limit = min(n, pos + step)
            if self._has_added(text, max(0, pos - self._added_reach), min(n, limit + self._added_reach)):
                raise _NotLocal
            hard = self._hard_char.search(text, pos, limit)
            end = hard.start() if hard else limit
            for s, e in self._segment(text, pos, end, final=hard is not None or limit == n):
                yield s, e, None
                pos = e
            if pos < end:  # stopped short of a limit that is not a segment end: look further
                step *= 4
                continue
            if hard is not None:  # a digit group, or a CJK run (the regex splits it further)
                piece = self._hard_piece.match(text, pos)
                for s, e in self._segment(text, pos, piece.end(), final=True):
                    yield s, e, None
                pos = piece.end()

    def _segment(self, text: str, start: int, end: int, *, final: bool) -> Iterator[tuple[int, int]]:
        """The regex's matches in text[start:end], and the text between them. Unless `end` is
        the segment's true end (`final`), only chunks whose matches read nothing near `end`."""
        at = start
        for m in self._regex.finditer(text, start, end):
            if not final and not self._far_from(text, m.end(), end):
                return
            if m.start() > at:
                yield at, m.start()
            yield m.start(), m.end()
            at = m.end()
        if final and end > at:
            yield at, end

    @staticmethod
    def _far_from(text: str, e: int, end: int) -> bool:
        """A match ending at e read nothing at or after `end`: a non-space ends any whitespace
        run it was scanning well before `end`."""
        return _NON_SPACE.search(text, e, end - 2 * LOOKAHEAD - 1) is not None


class _LineRule:
    """SentencePiece BPE where no piece contains "\\n": each line is encoded on its own, and with
    `space_boundaries` each run of spaces with the word after it."""

    def __init__(self, tokenizer, model_proto: bytes, no_prefix_proto: bytes, space_boundaries: bool):
        import sentencepiece as spm

        self._processors = {}
        for dummy_prefix, proto in ((True, model_proto), (False, no_prefix_proto)):
            sp = spm.SentencePieceProcessor()
            sp.LoadFromSerializedProto(proto)
            self._processors[dummy_prefix] = sp
        sp = self._processors[True]
        self._lock = threading.Lock()  # rules are shared by encoders; processors may not be thread-safe
        self._token_bytes = [tokenizer.token_bytes(i) for i in range(sp.get_piece_size())]
        self._bytes_of = lambda ids: [self._token_bytes[i] for i in ids]  # for LazyTokenBytes
        self._is_byte = np.array([sp.is_byte(i) for i in range(sp.get_piece_size())], dtype=bool)
        self._special_ids = tokenizer.special_tokens
        self._space_boundaries = space_boundaries

    def full(self, enc: Encoding, allowed: set[str]) -> _State:
        enc.starts, enc.ends, enc.flags  # noqa: B018 (computed once, spliced after)
        return _State(enc)

    def edit(self, state: _State, p: int, removed: int, inserted: str, new: str, allowed: set[str]):
        enc = state.enc
        # subtle: text spelling the space mark '▁' does not survive as itself (its piece stands for
        # a space), so the backend takes that whole part's offsets from the model, which differ
        # from the lengths used here: such texts are re-encoded whole. (Checked for every code
        # point: '▁' is the only character the built-in's pieces do not reproduce.)
        if SPACE_MARK in new or SPACE_MARK in enc.text:
            return None
        delta = len(inserted) - removed
        w0 = self._region_start(new, p, allowed)
        w1 = self._region_end(new, p + len(inserted), allowed)
        n_tok = len(enc.ids)
        # subtle: a token starting at a region start starts exactly there (code points suffice).
        t0 = int(np.searchsorted(enc.starts, w0, side="left"))
        t1 = int(np.searchsorted(enc.starts, w1 - delta, side="left"))
        byte_w0 = int(enc.byte_starts[t0]) if t0 < n_tok else enc.n_bytes
        old_bytes = (int(enc.byte_starts[t1]) if t1 < n_tok else enc.n_bytes) - byte_w0

        ids: list[int] = []
        byte_starts, byte_ends = [], []
        offset = byte_w0
        pos = w0
        # Special tokens split the text into parts, each encoded with the dummy prefix (as the
        # backend does); the part a region continues is encoded without it.
        order = sorted(allowed, key=len, reverse=True)
        dummy_prefix = w0 == 0
        while pos < w1:
            at, special = _next_special(new, pos, w1, order)
            if at > pos:
                part = new[pos:at]
                raw = part.encode("utf-8")
                with self._lock:
                    part_ids = self._processors[dummy_prefix].encode(part)
                pieces = [self._token_bytes[i] for i in part_ids]
                lead = 1 if dummy_prefix else 0
                if b"".join(pieces)[lead:] != raw:  # the model changed the text: not provably local
                    return None
                lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
                ends = np.cumsum(lengths) - lead
                ids += part_ids
                byte_starts.append(offset + np.clip(ends - lengths, 0, None))
                byte_ends.append(offset + np.clip(ends, 0, None))
                offset += len(raw)
            if special is not None:
                n = len(special.encode("utf-8"))
                ids.append(self._special_ids[special])
                byte_starts.append(np.array([offset], dtype=np.int64))
                byte_ends.append(np.array([offset + n], dtype=np.int64))
                offset += n
                at += len(special)
            pos, dummy_prefix = at, True
        ids_arr = np.asarray(ids, dtype=np.int64)
        empty = np.zeros(0, dtype=np.int64)
        win = _Window(
            w0, w1, ids, [self._token_bytes[i] for i in ids],
            np.concatenate(byte_starts) if byte_starts else empty,
            np.concatenate(byte_ends) if byte_ends else empty,
            np.isin(ids_arr, list(self._special_ids.values())) if allowed else None,
            self._is_byte[ids_arr],
        )
        new_enc, changed = _splice(
            enc, t0, t1, win, new, byte_w0, offset - byte_w0 - old_bytes, (p, p + len(inserted)),
            self._bytes_of,
        )
        return _State(new_enc), changed

    # Region boundaries: the tokens before one do not depend on the text after it. A line start
    # always is one; with `space_boundaries`, so is a space after a non-space. No special token
    # contains "\n" or " " (checked), so none crosses a boundary. Both functions return
    # boundaries that read only unedited text.

    def _region_start(self, text: str, p: int, allowed: set[str]) -> int:
        """The last boundary at or before `p` that depends only on text[:p], and where the text
        after it continues a part (the window is encoded without the dummy prefix there)."""
        line = text.rfind("\n", 0, p) + 1
        space = text.rfind(" ", line, p) if self._space_boundaries else -1
        if space < 0:
            return line
        run = _SPACES_BEFORE.match(text, line, space + 1).start()
        if run > line and not any(text.endswith(t, 0, run) for t in allowed):
            return run
        return line

    def _region_end(self, text: str, end: int, allowed: set[str]) -> int:
        """The first boundary after `end` that depends only on text[end:]."""
        newline = text.find("\n", end)
        line_end = len(text) if newline < 0 else newline + 1
        if self._space_boundaries:
            # subtle: from `end + longest` on, a special token ending at the boundary lies in
            # unedited text, so it ended there before the edit too (it did not in "<s> " -> "s> "),
            # and the text after it is a new part in both: the old tokens there still hold.
            longest = max(map(len, allowed), default=0)
            word_end = _WORD_END.search(text, end + max(longest, 1), line_end)
            if word_end:
                return word_end.start()
        return line_end


# --- which rule a tokenizer gets -----------------------------------------------------------------

# SentencePiece rules load two processors, and DeepSeek's regex of its 1,283 added tokens takes a
# second to compile, so they are built once per tokenizer. (The other rules are cheap, and refer to
# their tokenizer, which a weak-keyed cache would then keep alive.)
_cached_rules: "weakref.WeakKeyDictionary[object, object]" = weakref.WeakKeyDictionary()
_cached_rules_lock = threading.Lock()


def _cached(tokenizer, build: Callable[[], object]):
    """build(), once per tokenizer."""
    with _cached_rules_lock:
        try:
            if tokenizer not in _cached_rules:
                _cached_rules[tokenizer] = build()
            return _cached_rules[tokenizer]
        except TypeError:  # not hashable or not weakly referable: build it for this encoder
            return build()


def _local_rule(tokenizer) -> _RegexRule | _SplitsRule | _LineRule | None:
    """A rule only for the families whose full encode the rules reproduce (ids, masks, chunks):
    tests/core/test_incremental.py checks each against it."""
    family = getattr(tokenizer, "family", None)
    pattern = getattr(tokenizer, "split_pattern", None)
    if family == "tiktoken" and pattern in LOCAL_PATTERNS:
        # subtle: tiktoken's per-chunk BPE is private, so its absence means a full re-encode.
        chunks = tokenizer.chunk_encoder()
        if chunks is not None:
            return _RegexRule(tokenizer, chunks, tokenizer.tokens_bytes, tokenizer.byte_lengths)
    if family == "bpe" and pattern in LOCAL_PATTERNS:
        # minbpe's per-chunk encoder; the tokenizer's tiktoken fast path gives the same ids (it
        # is only used where it does).
        vocab = tokenizer.vocab
        return _RegexRule(
            tokenizer, lambda pieces: [tokenizer.encode_chunk(piece.encode("utf-8")) for piece in pieces],
            lambda ids: [vocab[i] for i in ids],
        )
    if family == "tokenizers":
        added = _cached(tokenizer, lambda: _added_tokens(tokenizer) if _is_deepseek_split(tokenizer) else None)
        return None if added is None else _SplitsRule(tokenizer, added)
    if family == "sentencepiece":
        return _cached(tokenizer, lambda: _line_rule(tokenizer, tokenizer.model_proto))
    return None


def _line_rule(tokenizer, proto: bytes) -> _LineRule | None:
    from sentencepiece import sentencepiece_model_pb2

    model = sentencepiece_model_pb2.ModelProto()
    model.ParseFromString(proto)
    normalizer, trainer = model.normalizer_spec, model.trainer_spec
    if not (
        trainer.model_type == sentencepiece_model_pb2.TrainerSpec.BPE
        and trainer.byte_fallback  # so "\n" is always the byte piece <0x0A>, never <unk>
        and normalizer.name == "identity"
        and not normalizer.remove_extra_whitespaces
        and not trainer.treat_whitespace_as_suffix
        and not any("\n" in piece.piece for piece in model.pieces)  # special tokens included
    ):
        return None
    # A '▁' after another character: one is left once the leading '▁'s are stripped.
    # (A str test, not a regex per piece: 32,000 regex calls took a second of the first edit.)
    space_boundaries = not any(
        SPACE_MARK in piece.piece.lstrip(SPACE_MARK) or " " in piece.piece for piece in model.pieces
    )
    normalizer.add_dummy_prefix = False
    return _LineRule(tokenizer, proto, model.SerializeToString(), space_boundaries)


class _AddedTokens(NamedTuple):
    """A tokenizer.json's added tokens, as a window's split looks for them.

    (A set and its lengths, not one regex of them all: the `regex` module took 110 ms to compile
    DeepSeek's 1,283.)"""

    tokens: frozenset[str]
    lengths: list[int]  # their lengths, each once
    first: list[str]  # their first characters
    reach: int  # the longest one's length


def _added_tokens(tokenizer) -> _AddedTokens:
    added = frozenset(content for content, _ in tokenizer.added_tokens.values() if content)
    lengths = sorted({len(t) for t in added})
    return _AddedTokens(added, lengths, sorted({t[0] for t in added}), max(lengths, default=0))


def _is_deepseek_split(tokenizer) -> bool:
    """A byte-level BPE tokenizer.json with no normaliser and DeepSeek's three splits."""
    spec = tokenizer.pre_tokenizer_state
    if spec is None or tokenizer.normalizes or not tokenizer.byte_level \
            or tokenizer.model_type != "BPE" or getattr(tokenizer, "_prepends", True):
        return False
    if tokenizer.normalizer_state not in (None, {"type": "Sequence", "normalizers": []}):
        return False
    steps = spec.get("pretokenizers", []) if spec.get("type") == "Sequence" else []
    splits = [st for st in steps if st.get("type") == "Split"]
    last = steps[-1] if steps else {}
    return (
        len(steps) == 4 and steps[:3] == splits
        # (the file spells \r and \n inside a character class as the characters themselves)
        and [str(st.get("pattern", {}).get("Regex")).replace("\r", r"\r").replace("\n", r"\n")
             for st in splits] == DEEPSEEK_V3_PATTERNS
        and all(st.get("behavior") == "Isolated" and not st.get("invert") for st in splits)
        and last.get("type") == "ByteLevel" and not last.get("add_prefix_space") and not last.get("use_regex")
    )
