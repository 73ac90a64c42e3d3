"""Several tokenizers on one text: what the compare view and `tokexplorer compare` show.

- `compare_counts`: per tokenizer its tokens, bytes/token, chars/token and the difference to the
  first (±N tokens, ±%); `cheapest` and `summary` say which costs least.
- `boundary_marks`: token boundaries aligned on UTF-8 byte offsets, and for each tokenizer the
  boundaries it has that another lacks, within a code-point window (a view asks for what is on
  screen; a whole 1 MB text works too, vectorised).
- `covering`: for a code-point range, the tokens of each encoding that overlap it (hover linking).
- `part_counts`: tokens per labelled part of the text (the JSON part and the YAML part of a sample).

Everything takes `Encoding`s of the same text; nothing here encodes or knows a tokenizer family.

subtle: boundaries are compared as byte offsets, not code points, because a byte-level tokenizer
may end a token inside a character (GPT-2 cuts some emoji between their UTF-8 bytes). Such a
boundary is real and is reported with the character it falls inside and how far into its bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from tokexplorer.core.encoding import Encoding

ANCHOR_SEARCH = 64  # tokens searched back for one that starts on a character boundary


@dataclass(frozen=True)
class Counts:
    """One tokenizer's cost of the text, and its difference to the first tokenizer's."""

    name: str
    tokens: int
    chars: int
    bytes: int
    bytes_per_token: float
    chars_per_token: float
    delta: int  # tokens minus the first tokenizer's tokens
    delta_pct: float  # delta as a percentage of the first's tokens (0.0 when the first has none)

    def delta_label(self) -> str:
        """'±0', '+2 (+50.0%)', '-36,196 (-10.7%)'.

        >>> Counts("b", 4, 9, 9, 2.25, 2.25, -2, -33.33).delta_label()
        '-2 (-33.3%)'
        """
        if self.delta == 0:
            return "±0"
        return f"{self.delta:+,d} ({self.delta_pct:+.1f}%)"


def compare_counts(names: Sequence[str], encodings: Sequence[Encoding]) -> list[Counts]:
    """Counts per encoding, each compared with the first.

    >>> a = Encoding.from_byte_lengths("abcd", [0, 1, 2, 3], [b"a", b"b", b"c", b"d"])
    >>> b = Encoding.from_byte_lengths("abcd", [0, 1], [b"ab", b"cd"])
    >>> [(c.tokens, c.delta, c.delta_pct) for c in compare_counts(["a", "b"], [a, b])]
    [(4, 0, 0.0), (2, -2, -50.0)]
    """
    _check_same_text(encodings)
    return counts_from_stats(names, [enc.stats() for enc in encodings])


def counts_from_stats(names: Sequence[str], stats: Sequence[dict]) -> list[Counts]:
    """Counts from each tokenizer's `Encoding.stats()` of one text (or `streaming.count`'s, for a
    text too big to encode whole), each compared with the first."""
    out = []
    first = stats[0]["tokens"] if stats else 0
    for name, s in zip(names, stats):
        delta = s["tokens"] - first
        out.append(Counts(name, s["tokens"], s["chars"], s["bytes"], s["bytes_per_token"],
                          s["chars_per_token"], delta, 100.0 * delta / first if first else 0.0))
    return out


def cheapest(counts: Sequence[Counts]) -> list[int]:
    """Indices of the tokenizers with the fewest tokens (several on a tie).

    >>> cheapest([Counts("a", 3, 1, 1, 1, 1, 0, 0), Counts("b", 2, 1, 1, 1, 1, -1, -33),
    ...           Counts("c", 2, 1, 1, 1, 1, -1, -33)])
    [1, 2]
    """
    if not counts:
        return []
    least = min(c.tokens for c in counts)
    return [i for i, c in enumerate(counts) if c.tokens == least]


def summary(counts: Sequence[Counts]) -> str:
    """One short line: which tokenizer is cheapest for this text, and how many times as many
    tokens each other one needs.

    >>> summary([Counts("gpt2", 6, 18, 18, 3, 3, 0, 0.0), Counts("cl100k_base", 4, 18, 18, 4.5, 4.5, -2, -33.3)])
    'cheapest: cl100k_base, 4 tokens (gpt2 1.50x)'
    >>> summary([Counts("a", 2, 2, 2, 1, 1, 0, 0.0), Counts("b", 2, 2, 2, 1, 1, 0, 0.0)])
    'a and b cost the same: 2 tokens'
    """
    if not counts:
        return ""
    best = cheapest(counts)
    least = counts[best[0]].tokens
    if len(best) == len(counts):
        names = [c.name for c in counts]
        who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        return f"{who} cost the same: {least:,} tokens"
    winners = " = ".join(counts[i].name for i in best)
    others = ", ".join(f"{c.name} " + (f"{c.tokens / least:.2f}x" if least else f"{c.tokens:,}")
                       for i, c in enumerate(counts) if i not in best)
    return f"cheapest: {winners}, {least:,} tokens ({others})"


@dataclass(frozen=True)
class Marks:
    """Token boundaries of one encoding that some other encoding lacks.

    Each boundary is a byte offset in the text's UTF-8; `chars` is the character it sits before
    (or inside), `fraction` how far into that character's bytes it falls (0.0: at its start;
    0.5: after two of an emoji's four bytes).
    """

    bytes: np.ndarray  # int64 [m], sorted
    chars: np.ndarray  # int64 [m]
    fraction: np.ndarray  # float64 [m], in [0, 1)

    def __len__(self) -> int:
        return len(self.bytes)

    @property
    def inside(self) -> np.ndarray:
        """bool [m]: the boundary cuts a character's UTF-8 bytes."""
        return self.fraction > 0


def byte_offset(enc: Encoding, position: int) -> int:
    """UTF-8 byte offset of code point `position` of `enc.text`, from the nearest token that starts
    on a character boundary (so the cost is that of the few characters between).

    >>> enc = Encoding.from_byte_lengths("hé😀x", [1, 2, 3, 4], [b"h\\xc3", b"\\xa9\\xf0\\x9f", b"\\x98\\x80", b"x"])
    >>> [byte_offset(enc, p) for p in range(5)]
    [0, 1, 3, 7, 8]
    """
    text = enc.text
    if position >= len(text):
        return enc.n_bytes
    starts, ends = enc.starts, enc.ends
    k = int(np.searchsorted(starts, position, side="right")) - 1
    # A token starts on a character boundary unless the one before ends inside that character.
    for _ in range(ANCHOR_SEARCH):
        if k <= 0 or (k < len(starts) and ends[k - 1] <= starts[k]):
            break
        k -= 1
    else:
        k = -1
    if k < 0:
        return len(text[:position].encode("utf-8", "surrogatepass"))
    return int(enc.byte_starts[k]) + len(text[int(starts[k]):position].encode("utf-8", "surrogatepass"))


def _boundaries(enc: Encoding, lo: int, hi: int) -> np.ndarray:
    """The encoding's token boundaries (byte offsets where a token starts, other than the text's
    start and end) in the byte window [lo, hi), sorted and unique."""
    bs = enc.byte_starts
    a = int(np.searchsorted(bs, max(lo, 1), side="left"))
    b = int(np.searchsorted(bs, min(hi, enc.n_bytes), side="left"))
    found = bs[a:b]
    # Sorted already: drop repeats (zero-length tokens, a dummy-prefix '▁', repeat an offset).
    # subtle: not np.unique, whose hashing path costs milliseconds even on a few thousand values.
    return found[np.concatenate(([True], found[1:] != found[:-1]))] if len(found) else found


def _in_sorted(values: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """bool per value: whether it is in the sorted array `pool` (a binary search each, which on
    windows of a few thousand values beats np.isin's sorting or hashing)."""
    if not len(pool):
        return np.zeros(len(values), dtype=bool)
    at = np.minimum(np.searchsorted(pool, values), len(pool) - 1)
    return pool[at] == values


def boundary_marks(encodings: Sequence[Encoding], start: int = 0, end: int | None = None) -> list[Marks]:
    """For each encoding, its token boundaries within code points [start, end) that at least one
    other encoding lacks.

    >>> text = "hi 👋"  # bytes: h i ␣ | f0 9f 91 8b
    >>> a = Encoding.from_byte_lengths(text, [1, 2, 3], [b"hi", b" \\xf0\\x9f", b"\\x91\\x8b"])
    >>> b = Encoding.from_byte_lengths(text, [1, 2, 3], [b"h", b"i", b" \\xf0\\x9f\\x91\\x8b"])
    >>> [(m.bytes.tolist(), m.chars.tolist(), m.fraction.tolist()) for m in boundary_marks([a, b])]
    [([5], [3], [0.5]), ([1], [1], [0.0])]
    """
    _check_same_text(encodings)
    if not encodings:
        return []
    enc0 = encodings[0]
    text = enc0.text
    end = len(text) if end is None else min(end, len(text))
    start = max(0, min(start, end))
    lo, hi = byte_offset(enc0, start), byte_offset(enc0, end)
    found = [_boundaries(enc, lo, hi) for enc in encodings]
    common = found[0]
    for b in found[1:]:
        common = common[_in_sorted(common, b)]
    raw = np.frombuffer(text[start:end].encode("utf-8", "surrogatepass"), dtype=np.uint8)
    leads = np.flatnonzero((raw & 0xC0) != 0x80)  # where each character of the window starts
    bounds = np.append(leads, len(raw))
    out = []
    for b in found:
        own = b[~_in_sorted(b, common)] if len(found) > 1 else b[:0]
        local = own - lo
        k = np.searchsorted(leads, local, side="right") - 1
        first, size = bounds[k], bounds[k + 1] - bounds[k]
        out.append(Marks(own, start + k, (local - first) / np.maximum(size, 1)))
    return out


def covering(encodings: Sequence[Encoding], start: int, end: int) -> list[range]:
    """For each encoding, the indices of its tokens that overlap code points [start, end) (an empty
    range is widened to the one character at `start`).

    >>> a = Encoding.from_byte_lengths("abcd", [0, 1], [b"ab", b"cd"])
    >>> b = Encoding.from_byte_lengths("abcd", [0, 1, 2], [b"a", b"bc", b"d"])
    >>> covering([a, b], 1, 2)
    [range(0, 1), range(1, 2)]
    """
    end = max(end, start + 1)
    return [enc.token_range(start, end) for enc in encodings]


def covered_span(enc: Encoding, tokens: range) -> tuple[int, int] | None:
    """The code-point span from the first of `tokens` to the end of the last, or None if empty."""
    if not len(tokens):
        return None
    return int(enc.starts[tokens[0]]), int(enc.ends[tokens[-1]])


def locate_parts(text: str, parts: Sequence[tuple[str, str]]) -> list[tuple[str, int, int]]:
    """(label, start, end) of each part's text found in `text`, in order, searching on from the end
    of the previous; parts no longer in the text (edited away) are left out.

    >>> locate_parts("a\\nbb\\na", [("x", "a"), ("y", "bb"), ("z", "a"), ("w", "q")])
    [('x', 0, 1), ('y', 2, 4), ('z', 5, 6)]
    """
    out, pos = [], 0
    for label, part in parts:
        at = text.find(part, pos) if part else -1
        if at >= 0:
            out.append((label, at, at + len(part)))
            pos = at + len(part)
    return out


@dataclass(frozen=True)
class PartCounts:
    label: str
    start: int  # code-point span of the part in the text
    end: int
    tokens: list[int]  # per encoding: tokens that start in the part


def part_counts(encodings: Sequence[Encoding], parts: Sequence[tuple[str, str]]) -> list[PartCounts]:
    """Tokens per part of the text, per encoding. A token is counted in the part it starts in, so
    the parts and what lies between them add up to the whole text's tokens.

    >>> a = Encoding.from_byte_lengths("ab\\ncd", [0, 1, 2], [b"ab", b"\\n", b"cd"])
    >>> [(p.label, p.tokens) for p in part_counts([a], [("A", "ab\\n"), ("B", "cd")])]
    [('A', [2]), ('B', [1])]
    """
    _check_same_text(encodings)
    if not encodings:
        return []
    out = []
    for label, s, e in locate_parts(encodings[0].text, parts):
        out.append(PartCounts(label, s, e, [
            int(np.searchsorted(enc.starts, e, side="left") - np.searchsorted(enc.starts, s, side="left"))
            for enc in encodings]))
    return out


def _check_same_text(encodings: Sequence[Encoding]) -> None:
    if any(enc.text != encodings[0].text for enc in encodings[1:]):
        raise ValueError("encodings of different texts cannot be compared; encode the same text")
