"""The result of encoding a text: ids, each token's bytes, spans and flags.

An `Encoding` is built by a tokenizer backend from three things it knows cheaply: the ids, each
token's bytes, and where each token starts and ends in the text's UTF-8 bytes. Everything a view
needs beyond that (code-point spans, flags, the regex pre-split chunks) is derived here, vectorised
with numpy and computed on first use, so encoding a book stays close to the library's own speed.

This module does not tokenize anything and knows no tokenizer family. It runs past 400 lines
because everything derived from an Encoding is cached on the Encoding itself, so its vectorised
helpers stay beside it.

subtle: byte-level tokenizers can cut a multi-byte UTF-8 character between two tokens (an emoji is
four bytes; GPT-2 may emit it as two tokens). Such a token is flagged PARTIAL and its code-point span
covers every character it touches, so neighbouring spans may overlap by one character.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Iterator, NamedTuple, Sequence, overload

import numpy as np


class TokenFlag(enum.IntFlag):
    """Per-token flags, combined bitwise."""

    NONE = 0
    SPECIAL = 1  # a special token such as <|endoftext|>, from the special-token policy
    BYTE_FALLBACK = 2  # a SentencePiece byte piece such as <0xF0>
    PARTIAL = 4  # the token's bytes start or end inside a multi-byte UTF-8 character
    # The token's bytes are not the text under its span: the tokenizer's normaliser changed that
    # text first (NFC, NFKC, lowercase, accents stripped), or the token is the unknown token.
    NORMALIZED = 8


class Token(NamedTuple):
    """One token of an Encoding, for tables, tooltips and JSON."""

    index: int
    id: int
    bytes: bytes
    start: int  # code-point span in the text, end exclusive
    end: int
    flags: TokenFlag

    @property
    def text(self) -> str:
        """The token's bytes as text; a partial character shows as U+FFFD."""
        return self.bytes.decode("utf-8", errors="replace")


ChunkFinder = Callable[[str], list[tuple[int, int]]]

SCAN_BLOCK = 1 << 20  # bytes of UTF-8 per step of `utf8_positions`


def is_utf8(data: bytes) -> bool:
    """Whether `data` is valid UTF-8 on its own (a token may be a piece of a character)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def utf8_array(text: str) -> np.ndarray:
    """The text's UTF-8 as a uint8 array, encoded a block of characters at a time: the encoded
    blocks are copied in and freed as they go, so no bytes object as long as the text's UTF-8
    lives beside the array.

    >>> utf8_array("aé😀").tolist()
    [97, 195, 169, 240, 159, 152, 128]
    """
    if len(text) <= SCAN_BLOCK:
        return np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    blocks = [text[a : a + SCAN_BLOCK].encode("utf-8") for a in range(0, len(text), SCAN_BLOCK)]
    raw = np.empty(sum(map(len, blocks)), dtype=np.uint8)
    at = 0
    blocks.reverse()
    while blocks:
        block = blocks.pop()
        raw[at : at + len(block)] = np.frombuffer(block, dtype=np.uint8)
        at += len(block)
    return raw


def running_bounds(lengths: Sequence[np.ndarray]) -> np.ndarray:
    """Bounds of consecutive spans whose lengths come in pieces: bounds[0] = 0, span i runs from
    bounds[i] to bounds[i + 1] (int64).

    subtle: summed piece by piece, so no array of all the lengths is joined first (for 13 million
    tokens, 100 MB more).

    >>> running_bounds([np.array([2, 1]), np.array([3])]).tolist()
    [0, 2, 3, 6]
    """
    bounds = np.zeros(sum(map(len, lengths)) + 1, dtype=np.int64)
    k = 0
    for piece in lengths:
        np.cumsum(piece, out=bounds[k + 1 : k + 1 + len(piece)])
        bounds[k + 1 : k + 1 + len(piece)] += bounds[k]
        k += len(piece)
    return bounds


def utf8_positions(raw: np.ndarray, *offsets: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each array of byte offsets into UTF-8 `raw` (uint8): how many characters start before
    each offset, and whether one starts there (True at or past the end). One pass over `raw`.

    subtle: in blocks with buffers reused, never an array as long as the text: on 50 MB a
    prefix-count array is 400 MB, whose first touch alone took seconds.

    >>> raw = np.frombuffer("aé😀".encode(), dtype=np.uint8)  # bytes 0 | 1 2 | 3 4 5 6
    >>> [(b.tolist(), s.tolist()) for b, s in utf8_positions(raw, np.array([0, 1, 2, 3, 5, 7]))]
    [([0, 1, 2, 2, 3, 3], [True, True, False, True, False, True])]
    """
    n = len(raw)
    queries = []  # (sorted offsets, their order or None, before, starts_here, next to fill)
    for positions in offsets:
        order = None
        if len(positions) > 1 and not (positions[1:] >= positions[:-1]).all():
            order = np.argsort(positions, kind="stable")
            positions = positions[order]
        if len(positions) and (positions[0] < 0 or positions[-1] > n):
            positions = np.clip(positions, 0, n)
        queries.append([positions, order, np.empty(len(positions), dtype=np.int64),
                        np.ones(len(positions), dtype=bool), 0])
    size = min(n, SCAN_BLOCK)
    masked = np.empty(size, dtype=np.uint8)
    lead = np.empty(size, dtype=bool)  # a character starts at this byte
    counts = np.zeros(size + 1, dtype=np.int64)  # counts[j]: lead bytes before j
    base = 0
    for a in range(0, n, SCAN_BLOCK):
        m = min(SCAN_BLOCK, n - a)
        np.bitwise_and(raw[a : a + m], 0xC0, out=masked[:m])
        np.not_equal(masked[:m], 0x80, out=lead[:m])
        np.cumsum(lead[:m], dtype=np.int64, out=counts[1 : m + 1])
        for q in queries:
            positions, _, before, starts_here, lo = q
            hi = lo + int(np.searchsorted(positions[lo:], a + m, side="left"))
            local = positions[lo:hi] - a if a else positions[lo:hi]
            np.take(counts, local, out=before[lo:hi])
            if base:
                before[lo:hi] += base
            np.take(lead, local, out=starts_here[lo:hi])
            q[4] = hi
        base += int(counts[m])
    results = []
    for positions, order, before, starts_here, lo in queries:
        before[lo:] = base
        if order is not None:
            before[order], starts_here[order] = before.copy(), starts_here.copy()
        results.append((before, starts_here))
    return results


SPELL_BLOCK = 1 << 16  # tokens whose bytes `TokenByteTable.spells` compares with the text at a time


class TokenByteTable:
    """Every token's bytes end to end, with where each begins: whether a run of tokens spells a
    text is then checked with array operations (`spells`). Joining a book's 300,000 token bytes
    to compare them took 30 ms; this takes about 6 ms, a block of tokens at a time.

    >>> table = TokenByteTable([b"a", b" b", b"c"])
    >>> table.spells(np.array([1, 2, 0]), b"bca", lead=b" "), table.spells(np.array([0, 2]), b"ab")
    (True, False)
    """

    def __init__(self, token_bytes: Sequence[bytes | None]):
        self.lengths = np.fromiter((len(b or b"") for b in token_bytes), dtype=np.int64, count=len(token_bytes))
        self._blob = np.frombuffer(b"".join(filter(None, token_bytes)), dtype=np.uint8)
        self._offsets = np.cumsum(self.lengths) - self.lengths

    def spells(self, ids: np.ndarray, raw: bytes, lead: bytes = b"", block: int = SPELL_BLOCK) -> bool:
        """Whether the bytes of tokens `ids`, end to end, are `lead` then `raw` (`lead`: what
        the tokenizer put before the text, such as SentencePiece's dummy-prefix space)."""
        lengths = self.lengths[ids]
        ends = np.cumsum(lengths)
        if (int(ends[-1]) if len(ends) else 0) != len(lead) + len(raw):
            return False
        target = np.frombuffer(raw, dtype=np.uint8)
        for a in range(0, len(ids), block):
            b = min(a + block, len(ids))
            first = int(ends[a - 1]) if a else 0  # the block's first byte, counted from the lead's
            n = int(ends[b - 1]) - first
            # byte k of the block is the blob's at its token's offset plus its place in the token
            shift = np.repeat(self._offsets[ids[a:b]] - (ends[a:b] - lengths[a:b] - first), lengths[a:b])
            spelled = self._blob[np.arange(n, dtype=np.int64) + shift]
            k = min(max(0, len(lead) - first), n)  # lead bytes in this block
            if k and spelled[:k].tobytes() != lead[first : first + k]:
                return False
            at = first + k - len(lead)  # where the rest of the block is in `raw`
            if not np.array_equal(spelled[k:], target[at : at + n - k]):
                return False
        return True


class LazyTokenBytes(Sequence[bytes]):
    """Each token's bytes, looked up only when first read (a list after that).

    subtle: building 300,000 bytes objects costs as much as tiktoken's whole encode, and most
    views read only the visible tokens' bytes, or none.
    """

    def __init__(self, ids: "list[int] | TokenIds", bytes_of: Callable[[list[int]], list[bytes]]):
        self._ids = ids
        self._bytes_of = bytes_of
        self._list: list[bytes] | None = None

    def _materialise(self) -> list[bytes]:
        if self._list is None:
            ids = self._ids
            self._list = self._bytes_of(ids.tolist() if isinstance(ids, TokenIds) else ids)
        return self._list

    @overload
    def __getitem__(self, index: int) -> bytes: ...
    @overload
    def __getitem__(self, index: slice) -> list[bytes]: ...
    def __getitem__(self, index):
        if self._list is None:  # only the tokens asked for
            if isinstance(index, int):
                return self._bytes_of([self._ids[index]])[0]
            ids = self._ids[index]
            return self._bytes_of(ids.tolist() if isinstance(ids, np.ndarray) else list(ids))
        return self._materialise()[index]

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._materialise())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, LazyTokenBytes)):
            return self._materialise() == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"LazyTokenBytes({len(self)} tokens)"


class TokenIds(Sequence[int]):
    """Token ids held in an int64 array, read as a list of ints (an index gives an int, a slice a
    list; equal to a list of the same ids).

    subtle: a list of 300,000 ids is 300,000 int objects. Splicing an edit into a copy of it, then
    freeing the old one, cost about 2 ms a keystroke per tokenizer, half of it on the UI thread,
    and its freed objects kept the allocator's arenas. The incremental encoder splices arrays and
    wraps them in this instead.
    """

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = array

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> list[int]: ...
    def __getitem__(self, index):
        if isinstance(index, slice):
            return self.array[index].tolist()
        return int(self.array[index])

    def __len__(self) -> int:
        return len(self.array)

    def __iter__(self) -> Iterator[int]:
        return iter(self.array.tolist())

    def tolist(self) -> list[int]:
        return self.array.tolist()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TokenIds):
            return bool(np.array_equal(self.array, other.array))
        if isinstance(other, (list, tuple)):
            return len(other) == len(self.array) and self.array.tolist() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  (mutable, as a list)

    def __repr__(self) -> str:
        return f"TokenIds({len(self.array)} ids)"


def uncovered(chunks: Sequence[tuple[int, int]], n: int) -> list[tuple[int, int]]:
    """The spans of [0, n) that no chunk covers (chunks sorted and not overlapping).

    >>> uncovered([(0, 2), (4, 9)], 10)
    [(2, 4), (9, 10)]
    """
    gaps, pos = [], 0
    for a, b in chunks:
        if a > pos:
            gaps.append((pos, a))
        pos = max(pos, b)
    if pos < n:
        gaps.append((pos, n))
    return gaps


def _around(text: str, dropped: Sequence[tuple[int, int]], starts: np.ndarray,
            ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Byte offsets in the stream of kept text (`starts`, `ends`) as offsets in the whole text's
    UTF-8, past the dropped code-point spans: a token starting where a gap was starts after it, one
    ending there ends before it."""
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    width = 1 + (cps >= 0x80).astype(np.int64) + (cps >= 0x800) + (cps >= 0x10000)
    at = np.zeros(len(cps) + 1, dtype=np.int64)  # byte offset of each code point
    np.cumsum(width, out=at[1:])
    gaps = np.asarray(dropped, dtype=np.int64).reshape(-1, 2)
    gap_bytes = at[gaps[:, 1]] - at[gaps[:, 0]]
    before = np.zeros(len(gaps) + 1, dtype=np.int64)  # dropped bytes before each gap
    np.cumsum(gap_bytes, out=before[1:])
    kept_at = at[gaps[:, 0]] - before[:-1]  # where each gap falls in the kept stream
    return (starts + before[np.searchsorted(kept_at, starts, side="right")],
            ends + before[np.searchsorted(kept_at, ends, side="left")])


@dataclass(frozen=True, eq=False)
class Encoding:
    """Ids of a text and everything needed to show them.

    >>> enc = Encoding.from_byte_lengths("hi 👋", [1, 2, 3], [b"h", b"i \\xf0", b"\\x9f\\x91\\x8b"])
    >>> enc.spans
    [(0, 1), (1, 4), (3, 4)]
    >>> [bool(f & TokenFlag.PARTIAL) for f in enc.flags]
    [False, True, True]
    """

    text: str
    ids: Sequence[int]  # a list, or TokenIds (an edit spliced in by the incremental encoder)
    token_bytes: Sequence[bytes]  # a list, or LazyTokenBytes
    byte_starts: np.ndarray  # int64 [n]: where each token starts in text.encode("utf-8")
    byte_ends: np.ndarray  # int64 [n]: where it ends (exclusive)
    special_mask: np.ndarray = field(default=None)  # bool [n] or None
    byte_fallback_mask: np.ndarray = field(default=None)  # bool [n] or None
    chunk_finder: ChunkFinder | None = field(default=None, repr=False)
    normalized_mask: np.ndarray = field(default=None)  # bool [n] or None
    # Code-point spans of text no token covers: a split pattern that does not match everywhere
    # leaves it out of the chunks, and so out of the ids (minbpe and tiktoken drop it).
    dropped: tuple[tuple[int, int], ...] = ()

    @classmethod
    def from_byte_lengths(
        cls,
        text: str,
        ids: Sequence[int],
        token_bytes: Sequence[bytes],
        *,
        lengths: np.ndarray | None = None,
        special_mask: np.ndarray | None = None,
        byte_fallback_mask: np.ndarray | None = None,
        chunk_finder: ChunkFinder | None = None,
        lead: int = 0,
        id_array: np.ndarray | None = None,
        dropped: Sequence[tuple[int, int]] = (),
    ) -> "Encoding":
        """Build from tokens whose bytes concatenate to the text's UTF-8 (after `lead` extra bytes,
        such as SentencePiece's dummy-prefix space, which belong to no character), except for the
        code-point spans `dropped`, which no token covers.

        `lengths` (each token's byte length) saves reading `token_bytes` when it is lazy;
        `id_array`, the ids as an array when the backend has made one, saves converting them again.

        >>> enc = Encoding.from_byte_lengths("hi, there!", [1, 2], [b"hi", b"there"], dropped=[(2, 4), (9, 10)])
        >>> enc.spans, enc.dropped
        ([(0, 2), (4, 9)], ((2, 4), (9, 10)))
        """
        if lengths is None:
            lengths = np.fromiter(map(len, token_bytes), dtype=np.int64, count=len(token_bytes))
        # The tokens' bytes tile the text: token i spans bounds[i]:bounds[i + 1], one array for both.
        bounds = running_bounds([lengths[a : a + SCAN_BLOCK] for a in range(0, len(lengths), SCAN_BLOCK)])
        if lead:
            bounds -= lead
            np.clip(bounds, 0, None, out=bounds)
        starts, ends = bounds[:-1], bounds[1:]
        if len(dropped):
            starts, ends = _around(text, dropped, starts, ends)
            bounds = None
        enc = cls(
            text,
            ids if isinstance(ids, (list, TokenIds)) else list(ids),
            token_bytes,
            starts,
            ends,
            special_mask,
            byte_fallback_mask,
            chunk_finder,
            dropped=tuple(dropped),
        )
        if bounds is not None:
            enc.__dict__["_byte_bounds"] = bounds
        if id_array is not None:
            enc.__dict__["id_array"] = id_array
        return enc

    @classmethod
    def from_parts(
        cls,
        text: str,
        ids: Sequence[int],
        token_bytes: Sequence[bytes],
        byte_starts: np.ndarray,
        byte_ends: np.ndarray,
        *,
        special_mask: np.ndarray | None,
        byte_fallback_mask: np.ndarray | None,
        starts: np.ndarray,
        ends: np.ndarray,
        flags: np.ndarray,
        n_bytes: int,
        chunk_spans: tuple[np.ndarray, np.ndarray] | Callable[[], tuple] | None = None,
        id_array: np.ndarray | None = None,
        byte_bounds: np.ndarray | None = None,
        char_bounds: np.ndarray | None = None,
        chunk_finder: ChunkFinder | None = None,
        dropped: tuple[tuple[int, int], ...] = (),
    ) -> "Encoding":
        """Build with the derived values already known, so none is recomputed over the whole text.

        For incremental re-tokenization, which splices them from the previous Encoding. The caller
        guarantees they equal what the properties would compute. `chunk_spans` (code-point start
        and end arrays, or a function that returns them, called on first use) makes `chunks`
        read them instead of running `chunk_finder` over the text;
        `byte_bounds`, when the byte spans tile the text, is the array they are both views of
        (`byte_starts` is byte_bounds[:-1], `byte_ends` byte_bounds[1:]); `char_bounds` the same
        for `starts` and `ends`.

        >>> enc = Encoding.from_byte_lengths("ab", [1, 2], [b"a", b"b"])
        >>> again = Encoding.from_parts("ab", enc.ids, enc.token_bytes, enc.byte_starts,
        ...     enc.byte_ends, special_mask=None, byte_fallback_mask=None, starts=enc.starts,
        ...     ends=enc.ends, flags=enc.flags, n_bytes=2, chunk_spans=(enc.starts, enc.ends))
        >>> again.chunks
        [(0, 1), (1, 2)]
        """
        enc = cls(text, ids, token_bytes, byte_starts, byte_ends, special_mask, byte_fallback_mask, chunk_finder,
                  dropped=dropped)
        # subtle: cached_property keeps its value in the instance __dict__, so filling it here is
        # what computing it on first use would have done (the dataclass being frozen does not matter).
        enc.__dict__.update(starts=starts, ends=ends, flags=flags, _n_text_bytes=n_bytes)
        if chunk_spans is not None:
            enc.__dict__["_chunk_spans"] = chunk_spans
        if id_array is not None:
            enc.__dict__["id_array"] = id_array
        if byte_bounds is not None:
            enc.__dict__["_byte_bounds"] = byte_bounds
        if char_bounds is not None:
            enc.__dict__["_char_bounds"] = char_bounds
        return enc

    def __len__(self) -> int:
        return len(self.ids)

    # --- derived, computed once on first use -------------------------------------------------

    @cached_property
    def id_array(self) -> np.ndarray:
        """The ids as an int64 array.

        >>> Encoding.from_byte_lengths("ab", [1, 2], [b"a", b"b"]).id_array.tolist()
        [1, 2]
        """
        ids = self.ids
        if isinstance(ids, TokenIds):
            return ids.array
        return np.asarray(ids, dtype=np.int64)

    @cached_property
    def _character_spans(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(starts, ends, partial): each token's code-point span, and whether its bytes start or
        end inside a character."""
        bs, be = self.byte_starts, self.byte_ends
        if self.text.isascii() and (not len(bs) or bs[-1] < len(self.text)):
            # Every byte is a character: the byte spans are the spans (the same arrays, no copy;
            # a token starting at the very end would be drawn on the last character instead).
            self.__dict__["_n_text_bytes"] = len(self.text)
            return bs, be, np.zeros(len(bs), dtype=bool)
        raw = utf8_array(self.text)
        self.__dict__["_n_text_bytes"] = n = len(raw)
        bounds = self.__dict__.get("_byte_bounds")
        if bounds is not None:  # the byte spans tile the text: one query, its ends are the next starts
            ((before, lead),) = utf8_positions(raw, bounds)
            before_s, lead_s, before_e, lead_e = before[:-1], lead[:-1], before[1:], lead[1:]
            if lead.all() and (not len(bs) or bs[-1] < n):
                # No token starts or ends inside a character: the counts are the spans, one array
                # for both (as the byte bounds are), kept for edits to splice (`from_parts`).
                self.__dict__["_char_bounds"] = before
                return before_s, before_e, np.zeros(len(bs), dtype=bool)
        else:
            (before_s, lead_s), (before_e, lead_e) = utf8_positions(raw, bs, be)
        # A token starts in the character its first byte belongs to and ends after the one its
        # last byte belongs to: the characters begun before its end (which, when it has bytes,
        # include the one it starts in). Computed a block of tokens at a time, in place: on 13
        # million tokens each temporary would be 100 MB.
        starts = np.empty(len(bs), dtype=np.int64)
        partial = np.empty(len(bs), dtype=bool)
        for a in range(0, len(bs), SCAN_BLOCK):
            b = min(a + SCAN_BLOCK, len(bs))
            s = np.add(before_s[a:b], (bs[a:b] < n) & lead_s[a:b], out=starts[a:b])
            s -= 1
            np.maximum(s, 0, out=s)
            np.logical_and(~(lead_s[a:b] & lead_e[a:b]), be[a:b] > bs[a:b], out=partial[a:b])
        return starts, before_e, partial

    @cached_property
    def starts(self) -> np.ndarray:
        """Code-point start of each token (int64 array); a partial token starts at the character it
        begins inside."""
        return self._character_spans[0]

    @cached_property
    def ends(self) -> np.ndarray:
        """Code-point end (exclusive) of each token (int64 array)."""
        return self._character_spans[1]

    @property
    def span_bounds(self) -> np.ndarray | None:
        """The one array `starts` and `ends` are views of (starts is span_bounds[:-1], ends
        span_bounds[1:]) when the tokens tile the text's code points and it was kept; else None.

        >>> Encoding.from_byte_lengths("aé", [1, 2], [b"a", b"\\xc3\\xa9"]).span_bounds.tolist()
        [0, 1, 2]
        """
        if self.starts is self.byte_starts:  # an ASCII text's: the byte bounds' views
            return self.__dict__.get("_byte_bounds")
        return self.__dict__.get("_char_bounds")

    @property
    def byte_bounds(self) -> np.ndarray | None:
        """The one array `byte_starts` and `byte_ends` are views of (byte_starts is
        byte_bounds[:-1], byte_ends byte_bounds[1:]) when the byte spans tile the text and it was
        kept (`from_byte_lengths`, `from_parts`); else None.

        >>> Encoding.from_byte_lengths("ab", [1, 2], [b"a", b"b"]).byte_bounds.tolist()
        [0, 1, 2]
        """
        return self.__dict__.get("_byte_bounds")

    @property
    def char_bounds(self) -> np.ndarray | None:
        """The same for `starts` and `ends`, when they were found (or given) as one array; else
        None. Unlike `span_bounds` it never computes the spans, nor answers with the byte bounds."""
        return self.__dict__.get("_char_bounds")

    @property
    def has_chunk_split(self) -> bool:
        """Whether there is a pre-split to show as chunks: a chunk finder, or chunks given when
        this Encoding was built (perhaps still being found in another thread)."""
        return self.chunk_finder is not None or "_chunk_spans" in self.__dict__

    def keep_chunk_spans(self, starts: np.ndarray, ends: np.ndarray) -> None:
        """Keep the chunks' code-point starts and ends, found already by whoever built this
        Encoding (they must be what `chunk_finder` gives): `chunks` then runs no split."""
        self.__dict__["_chunk_spans"] = (starts, ends)

    @cached_property
    def spans(self) -> list[tuple[int, int]]:
        """(start, end) in code points for every token, as a list (`starts` / `ends` are cheaper)."""
        return list(zip(self.starts.tolist(), self.ends.tolist()))

    @cached_property
    def flags(self) -> np.ndarray:
        """TokenFlag bits per token (uint8 array)."""
        partial = self._character_spans[2]
        flags = np.where(partial, np.uint8(TokenFlag.PARTIAL), np.uint8(0)).astype(np.uint8)
        if self.special_mask is not None:
            flags |= np.where(self.special_mask, np.uint8(TokenFlag.SPECIAL), np.uint8(0))
        if self.byte_fallback_mask is not None:
            flags |= np.where(self.byte_fallback_mask, np.uint8(TokenFlag.BYTE_FALLBACK), np.uint8(0))
        if self.normalized_mask is not None:
            flags |= np.where(self.normalized_mask, np.uint8(TokenFlag.NORMALIZED), np.uint8(0))
        return flags

    def _known_chunk_spans(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The chunks' arrays if they were given (`from_parts`), waiting for them if they were
        given as a function (a split still running in another thread; it may return None)."""
        known = self.__dict__.get("_chunk_spans")
        if callable(known):  # (threads asking at once all wait for the one split)
            try:
                known = known()
            except BaseException:
                self.__dict__["_chunk_spans"] = None  # a split that failed raises once: then chunk_finder
                raise
            self.__dict__["_chunk_spans"] = known
        return known

    @cached_property
    def chunks(self) -> list[tuple[int, int]] | None:
        """The pre-tokenizer's regex chunks as code-point spans, or None when the family has no
        regex split (SentencePiece)."""
        known = self._known_chunk_spans()
        if known is not None:
            return list(zip(known[0].tolist(), known[1].tolist()))
        if self.chunk_finder is None:
            return None
        return self.chunk_finder(self.text)

    def chunk_arrays(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The chunks' code-point starts and ends as int64 arrays, or None without a regex split:
        for a view that lists a book's chunks without a Python tuple per chunk.

        >>> enc = Encoding.from_byte_lengths("ab", [1, 2], [b"a", b"b"], chunk_finder=lambda t: [(0, 2)])
        >>> [a.tolist() for a in enc.chunk_arrays()]
        [[0], [2]]
        """
        known = self._known_chunk_spans()
        if known is not None:
            return known
        chunks = self.chunks
        if chunks is None:
            return None
        spans = np.array(chunks, dtype=np.int64).reshape(-1, 2)
        return spans[:, 0].copy(), spans[:, 1].copy()

    def chunk_span(self, position: int) -> tuple[int, int] | None:
        """The regex chunk covering code point `position` (the last one past the end), or None
        without a regex split; from the spans' arrays when the incremental encoder kept them, so a
        book's 260,000 chunks are not turned into a list for one look-up."""
        known = self._known_chunk_spans()
        if known is not None:
            starts, ends = known
        else:
            chunks = self.chunks
            if chunks is None:
                return None
            starts = np.fromiter((a for a, _ in chunks), dtype=np.int64, count=len(chunks))
            ends = np.fromiter((b for _, b in chunks), dtype=np.int64, count=len(chunks))
            # Kept: the next look-up (the trace under a moving caret) costs a search, not 80 ms.
            self.__dict__["_chunk_spans"] = (starts, ends)
        if not len(ends):
            return None
        k = min(int(np.searchsorted(ends, position, side="right")), len(ends) - 1)
        return int(starts[k]), int(ends[k])

    # --- access --------------------------------------------------------------------------

    def token(self, index: int) -> Token:
        """The index-th token with its bytes, span and flags."""
        return Token(
            index,
            self.ids[index],
            self.token_bytes[index],
            int(self.starts[index]),
            int(self.ends[index]),
            TokenFlag(int(self.flags[index])),
        )

    def __iter__(self) -> Iterator[Token]:
        starts, ends, flags = self.starts.tolist(), self.ends.tolist(), self.flags.tolist()
        for i, (tid, tb) in enumerate(zip(self.ids, self.token_bytes)):
            yield Token(i, tid, tb, starts[i], ends[i], TokenFlag(flags[i]))

    def token_index_at(self, position: int) -> int | None:
        """Index of the token covering code point `position`, or None past the end."""
        ends = self.ends
        i = int(np.searchsorted(ends, position, side="right"))
        if i < len(self.ids) and self.starts[i] <= position < ends[i]:
            return i
        return None

    def token_range(self, start: int, end: int) -> range:
        """Indices of the tokens that overlap the code-point range [start, end)."""
        first = int(np.searchsorted(self.ends, start, side="right"))
        last = int(np.searchsorted(self.starts, end, side="left"))
        return range(first, max(first, last))

    @property
    def n_bytes(self) -> int:
        """Length of the text in UTF-8 bytes."""
        if "_n_text_bytes" not in self.__dict__:
            self.__dict__["_n_text_bytes"] = len(self.text.encode("utf-8"))
        return self.__dict__["_n_text_bytes"]

    def stats(self) -> dict[str, float]:
        """Counts shown in the status bar and by `compare`."""
        n = len(self.ids)
        return {
            "tokens": n,
            "chars": len(self.text),
            "bytes": self.n_bytes,
            "bytes_per_token": self.n_bytes / n if n else 0.0,
            "chars_per_token": len(self.text) / n if n else 0.0,
        }

