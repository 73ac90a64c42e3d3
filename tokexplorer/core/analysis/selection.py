"""A range of an encoded text, as the status bar and the byte / code-point inspector show it.

`selection_counts` answers "what does this part of the text cost?": the tokens it touches, the
tokens wholly inside it, its characters and its UTF-8 bytes (select the JSON, then the YAML; select
a trailing space). `inspect_selection` takes the range apart: its code points grouped by grapheme
cluster (from `unicode_info`), each UTF-8 byte with the token that covers it, the tokens touching
it, the normal forms that differ and the code points worth calling out by name. Rows are bounded
(MAX_CODE_POINTS) so a select-all of a book costs what its first lines cost; the counts always
cover the whole range.

Token and byte positions are matched on UTF-8 byte offsets, never on code points: a byte-level
tokenizer may end a token inside a character (GPT-2 splits 👋 after its third byte), and the byte
offsets are the only place where that shows. No Qt here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from tokexplorer.core.encoding import Encoding, TokenFlag
from tokexplorer.core.analysis.caret import token_at_caret
from tokexplorer.core.analysis.unicode_info import CodePointInfo, code_point_info, graphemes, normal_forms

MAX_CODE_POINTS = 256  # code-point rows (and their bytes) an inspection lists
MAX_TOKENS = 256  # touching tokens an inspection lists
# The kinds of code point (unicode_info.kinds_of) an inspection calls out by name.
CALLED_OUT = ("invisible", "control", "bidi", "noncharacter", "variation selector", "tag",
              "private use", "unassigned", "surrogate", "whitespace")


def utf8_offset(text: str, index: int) -> int:
    """Where code point `index` starts in text.encode("utf-8") (slow: encodes the prefix).

    >>> utf8_offset("a👋b", 2)
    5
    """
    return len(text[:index].encode("utf-8", "surrogatepass"))


MAX_WALK = 64  # tokens walked back looking for one that starts on a character boundary


def byte_offset(encoding: Encoding, index: int) -> int:
    """`utf8_offset(encoding.text, index)` in the time of encoding one token's text, not the
    prefix (which takes half a second on 50 MB).

    A token that is not PARTIAL and not empty starts on a character boundary, so its byte start
    and its code-point start name the same place: start from the last such token at or before
    `index`, and encode only the few characters after it.

    >>> enc = Encoding.from_byte_lengths("hi 👋x", [1, 2, 3, 4], [b"hi", b" \\xf0", b"\\x9f\\x91\\x8b", b"x"])
    >>> [byte_offset(enc, i) for i in range(6)] == [utf8_offset(enc.text, i) for i in range(6)]
    True
    """
    text = encoding.text
    index = max(0, min(index, len(text)))
    starts, flags = encoding.starts, encoding.flags
    bs, be = encoding.byte_starts, encoding.byte_ends
    k = int(np.searchsorted(starts, index, side="right")) - 1
    stop = max(-1, k - MAX_WALK)
    while k > stop and (flags[k] & TokenFlag.PARTIAL or be[k] <= bs[k]):
        k -= 1
    if k == stop and k >= 0:
        return utf8_offset(text, index)  # a long run of cut characters: the slow way
    base, base_bytes = (int(starts[k]), int(bs[k])) if k >= 0 else (0, 0)
    return base_bytes + len(text[base:index].encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class SelectionCounts:
    """What code points [start, end) of a text cost in one tokenizer."""

    start: int
    end: int
    tokens: int  # tokens whose bytes overlap the range's bytes
    whole: int  # tokens whose bytes lie entirely inside them
    chars: int  # code points
    bytes: int  # UTF-8 bytes
    first: int  # index of the first token touched (the touched ones are first..first+tokens-1)

    @property
    def token_indices(self) -> range:
        return range(self.first, self.first + self.tokens)


def selection_counts(encoding: Encoding, start: int, end: int) -> SelectionCounts:
    """Tokens touched and wholly inside, characters and bytes of code points [start, end).

    A token counts as touched when one of its bytes belongs to the range, so a token that ends
    inside a selected character counts (and is not whole); tokens of no bytes (SentencePiece's
    dummy-prefix piece) touch nothing.

    >>> enc = Encoding.from_byte_lengths("hi 👋", [1, 2, 3], [b"hi", b" \\xf0", b"\\x9f\\x91\\x8b"])
    >>> c = selection_counts(enc, 3, 4)  # the emoji: two tokens touch it, one is inside it
    >>> c.tokens, c.whole, c.chars, c.bytes
    (2, 1, 1, 4)
    """
    text = encoding.text
    start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
    end = max(start, end)
    b0 = byte_offset(encoding, start)
    b1 = byte_offset(encoding, end)
    n_bytes = b1 - b0
    bs, be = encoding.byte_starts, encoding.byte_ends
    first = int(np.searchsorted(be, b0, side="right"))  # the first token ending after b0
    if n_bytes == 0:
        return SelectionCounts(start, end, 0, 0, end - start, 0, first)
    stop = int(np.searchsorted(bs, b1, side="left"))  # past the last token starting before b1
    # Zero-length tokens at b0 sort before `first`; any other token in between has a byte in range.
    whole_first = int(np.searchsorted(bs, b0, side="left"))
    whole_stop = int(np.searchsorted(be, b1, side="right"))
    whole = max(0, min(stop, whole_stop) - max(first, whole_first))
    return SelectionCounts(start, end, max(0, stop - first), whole, end - start, n_bytes, first)


@dataclass(frozen=True)
class ByteCell:
    """One UTF-8 byte of the inspected range."""

    offset: int  # in the text's UTF-8
    value: int
    char: int  # code-point index (in the text) of the character it belongs to
    token: int  # index of the token covering it, -1 for none


@dataclass(frozen=True)
class CodePointRow:
    """One code point of the inspected range, with its cluster and the tokens covering its bytes."""

    info: CodePointInfo  # info.index is the code point's index in the text
    cluster: int  # the grapheme cluster it belongs to, counted from the range's start
    tokens: tuple[int, ...]  # indices of the tokens covering its bytes


@dataclass(frozen=True)
class TokenPiece:
    """A token touching the range: its bytes and where they are in the text's UTF-8."""

    index: int
    id: int
    bytes: bytes
    flags: TokenFlag
    byte_start: int
    byte_end: int

    @property
    def label(self) -> str:
        """The token as text: a byte-fallback piece as sentencepiece spells it (<0xF0>), bytes
        that are not whole UTF-8 as \\xNN."""
        if self.flags & TokenFlag.BYTE_FALLBACK and len(self.bytes) == 1:
            return f"<0x{self.bytes[0]:02X}>"
        return self.bytes.decode("utf-8", "backslashreplace")


@dataclass(frozen=True)
class SelectionInfo:
    """Code points [counts.start, counts.end) of a text encoded by `tokenizer`, taken apart.

    Rows, clusters and bytes cover the first `shown` code points; `counts` the whole range."""

    tokenizer: str
    counts: SelectionCounts
    caret_token: int | None  # the token under the caret, when the range was taken from it
    rows: list[CodePointRow]
    clusters: list[tuple[int, int]]  # code-point spans in the text, of the shown part
    bytes: list[ByteCell]
    tokens: list[TokenPiece]  # the tokens touching the shown part of the range (MAX_TOKENS at most)
    normal_forms: dict[str, str]  # of the shown text, only the forms that differ from it
    notes: list[str] = field(default_factory=list)  # code points called out by name

    @property
    def shown(self) -> int:
        return len(self.rows)

    @property
    def truncated(self) -> bool:
        return self.shown < self.counts.chars

    def as_dict(self) -> dict:
        """A JSON-ready dict of everything shown."""
        c = self.counts
        return {
            "tokenizer": self.tokenizer,
            "start": c.start, "end": c.end,
            "counts": {"tokens": c.tokens, "whole_tokens": c.whole, "chars": c.chars, "bytes": c.bytes},
            "caret_token": self.caret_token,
            "shown_code_points": self.shown,
            "tokens": [{"index": t.index, "id": t.id, "bytes": t.bytes.hex(), "label": t.label,
                        "flags": [f.name.lower() for f in TokenFlag if f and t.flags & f],
                        "byte_start": t.byte_start, "byte_end": t.byte_end} for t in self.tokens],
            "bytes": [{"offset": b.offset, "hex": f"{b.value:02X}", "char": b.char, "token": b.token}
                      for b in self.bytes],
            "clusters": [{"start": a, "end": b} for a, b in self.clusters],
            "code_points": [{**asdict(r.info), "cluster": r.cluster, "tokens": list(r.tokens)}
                            for r in self.rows],
            "normal_forms": self.normal_forms,
            "notes": self.notes,
        }

    def as_text(self) -> str:
        """A plain-text report: counts, tokens, bytes, then one line per code point by cluster."""
        c = self.counts
        lines = [f"{self.tokenizer}: characters {c.start}–{c.end}: {c.tokens} tokens touched "
                 f"({c.whole} whole), {c.chars} characters, {c.bytes} bytes"]
        if self.truncated:
            lines.append(f"showing the first {self.shown} of {c.chars} code points")
        for t in self.tokens:
            flags = ", ".join(f.name.lower() for f in TokenFlag if f and t.flags & f)
            lines.append(f"token #{t.index} id {t.id}: '{t.label}' bytes {t.bytes.hex(' ').upper() or '-'}"
                         + (f" ({flags})" if flags else ""))
        lines.append("bytes: " + " ".join(f"{b.value:02X}" for b in self.bytes))
        lines.append("token: " + " ".join(f"{b.token:>2}" if b.token >= 0 else " -" for b in self.bytes))
        cluster = -1
        for r in self.rows:
            a, b = self.clusters[r.cluster]
            if r.cluster != cluster and b - a > 1:
                lines.append(f"cluster of {b - a} code points:")
            cluster = r.cluster
            i = r.info
            lines.append("\t".join([f"  {i.codepoint}" if b - a > 1 else i.codepoint, i.name, i.category, i.script, f"UTF-8 {i.utf8}",
                                    f"UTF-16 {i.utf16}", f"UTF-32 {i.utf32}",
                                    "tokens " + " ".join(f"#{t}" for t in r.tokens)]))
        for form, text in self.normal_forms.items():
            lines.append(f"{form}: " + " ".join(f"U+{ord(ch):04X}" for ch in text))
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines) + "\n"


def caret_range(encoding: Encoding, position: int) -> tuple[int, int, int | None]:
    """The code-point span of the token at a caret at `position` (`caret.token_at_caret`'s rule),
    and its index; (position, position, None) without tokens."""
    index = token_at_caret(encoding.starts, encoding.ends, position)
    if index is None:
        return position, position, None
    return int(encoding.starts[index]), int(encoding.ends[index]), index


def inspect_selection(encoding: Encoding, start: int, end: int, *, tokenizer: str = "",
                      limit: int = MAX_CODE_POINTS) -> SelectionInfo:
    """Take code points [start, end) apart; an empty range means the token under the caret.

    >>> enc = Encoding.from_byte_lengths("hi 👋", [1, 2, 3], [b"hi", b" \\xf0", b"\\x9f\\x91\\x8b"])
    >>> info = inspect_selection(enc, 3, 4)
    >>> [r.info.codepoint for r in info.rows], [b.token for b in info.bytes]
    (['U+1F44B'], [1, 2, 2, 2])
    """
    caret = None
    if start == end:
        start, end, caret = caret_range(encoding, start)
    counts = selection_counts(encoding, start, end)
    text = encoding.text
    shown_end = min(counts.end, counts.start + limit)
    part = text[counts.start:shown_end]
    # Each byte's character and token.
    b0 = byte_offset(encoding, counts.start)
    data = part.encode("utf-8", "surrogatepass")
    char_of = np.repeat(np.arange(counts.start, shown_end),
                        [len(ch.encode("utf-8", "surrogatepass")) for ch in part]).tolist()
    offsets = np.arange(b0, b0 + len(data), dtype=np.int64)
    bs, be = encoding.byte_starts, encoding.byte_ends
    idx = np.searchsorted(be, offsets, side="right")
    inside = idx < len(be)
    inside[inside] &= bs[idx[inside]] <= offsets[inside]
    token_of = np.where(inside, idx, -1).tolist()
    cells = [ByteCell(b0 + k, data[k], char_of[k], token_of[k]) for k in range(len(data))]
    covering: dict[int, list[int]] = {}
    for cell in cells:
        tokens = covering.setdefault(cell.char, [])
        if cell.token >= 0 and cell.token not in tokens:
            tokens.append(cell.token)
    clusters = [(counts.start + a, counts.start + b) for a, b in graphemes(part)]
    rows = []
    for k, (a, b) in enumerate(clusters):
        for i in range(a, b):
            rows.append(CodePointRow(code_point_info(text[i], i), k, tuple(covering.get(i, ()))))
    # The tokens touching the shown part (a select-all of a book lists those of its first lines).
    shown_stop = int(np.searchsorted(bs, b0 + len(data), side="left")) if shown_end < counts.end else None
    listed = counts.token_indices[:MAX_TOKENS]
    if shown_stop is not None:
        listed = listed[:max(0, shown_stop - counts.first)]
    pieces = [TokenPiece(i, encoding.ids[i], encoding.token_bytes[i], TokenFlag(int(encoding.flags[i])),
                         int(bs[i]), int(be[i]))
              for i in listed]
    return SelectionInfo(tokenizer, counts, caret, rows, clusters, cells, pieces, normal_forms(part),
                         _notes(rows, pieces, counts.tokens))


def _notes(rows: list[CodePointRow], pieces: list[TokenPiece], n_tokens: int) -> list[str]:
    """What deserves a second look: special code points by name, byte-fallback pieces, cut
    characters."""
    notes = []
    seen: dict[str, int] = {}
    for r in rows:
        kinds = [k for k in r.info.kinds if k in CALLED_OUT]
        if kinds:
            key = f"{r.info.codepoint} {r.info.name} ({', '.join(kinds)})"
            seen[key] = seen.get(key, 0) + 1
    notes += [key + (f" ×{n}" if n > 1 else "") for key, n in seen.items()]
    fallback = [t for t in pieces if t.flags & TokenFlag.BYTE_FALLBACK]
    if fallback:
        notes.append(f"{len(fallback)} byte-fallback piece(s): "
                     + " ".join(t.label for t in fallback[:16]) + (" …" if len(fallback) > 16 else "")
                     + " are the bytes " + " ".join(t.bytes.hex().upper() for t in fallback[:16]))
    partial = sum(1 for t in pieces if t.flags & TokenFlag.PARTIAL)
    if partial:
        notes.append(f"{partial} token(s) start or end inside a character's UTF-8 bytes")
    if n_tokens > len(pieces):
        notes.append(f"listing the first {len(pieces)} of {n_tokens} tokens")
    return notes
