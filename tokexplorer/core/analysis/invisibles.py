"""Characters that draw nothing: bidi controls, zero-width characters and other format characters,
named, and found in a text fast.

A text can hold characters that no font draws ("Trojan Source", CVE-2021-42574): a right-to-left
override (U+202E) makes "RLO\\u202eevil\\u202c" display as "RLOlive", a zero-width space or a soft
hyphen hides inside a word, a BOM sits at the start of a pasted line, tag characters spell a whole
hidden sentence. Each still costs tokens. This module lists them (`INVISIBLES`: the Unicode
Default_Ignorable_Code_Point characters that are assigned, and the Arabic letter mark, by kind:
bidi control, zero-width or format), gives each a short label for a marker (`label`) and a
sentence for a tooltip (`describe`), finds them with one compiled regular expression (`find`:
a 1 MB text without any in about a millisecond), and says how far a bidi control reaches
(`bidi_scope`).

Left unmarked, because they are part of a visible character: the variation selector right after
a visible character (the emoji presentation of ❤️, an ideographic variant), the zero-width joiner
inside an emoji sequence (👨‍👩‍👧) and the tags of an emoji tag sequence (the flag of England).
A run of variation selectors after one character is marked (it can carry hidden data).

Does not know about tokens or the screen: views draw the markers (gui/editor/invisibles.py).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Iterator, NamedTuple

import regex

from tokexplorer.core.positions import has_astral

try:
    import unicodedata2 as unicodedata
except ImportError:  # pragma: no cover - the package is a dependency
    import unicodedata

BIDI = "bidi control"
ZERO_WIDTH = "zero-width"
FORMAT = "format"

# code point -> short label (drawn in the marker's box)
_BIDI = {
    0x061C: "ALM", 0x200E: "LRM", 0x200F: "RLM",
    0x202A: "LRE", 0x202B: "RLE", 0x202C: "PDF", 0x202D: "LRO", 0x202E: "RLO",
    0x2066: "LRI", 0x2067: "RLI", 0x2068: "FSI", 0x2069: "PDI",
}
_ZERO_WIDTH = {0x200B: "ZWSP", 0x200C: "ZWNJ", 0x200D: "ZWJ", 0x2060: "WJ", 0xFEFF: "BOM"}
_FORMAT = {
    0x00AD: "SHY", 0x034F: "CGJ", 0x115F: "HCF", 0x1160: "HJF", 0x17B4: "KIVAQ", 0x17B5: "KIVAA",
    0x180B: "FVS1", 0x180C: "FVS2", 0x180D: "FVS3", 0x180E: "MVS", 0x180F: "FVS4",
    0x2061: "FA", 0x2062: "IT", 0x2063: "IS", 0x2064: "IP",
    0x206A: "ISS", 0x206B: "ASS", 0x206C: "IAFS", 0x206D: "AAFS", 0x206E: "NADS", 0x206F: "NODS",
    0x3164: "HF", 0xFFA0: "HWHF",
    0x1BCA0: "SHLO", 0x1BCA1: "SHCO", 0x1BCA2: "SHDS", 0x1BCA3: "SHUS",
    **{cp: f"MUS{cp - 0x1D172}" for cp in range(0x1D173, 0x1D17B)},
    0xE0001: "LANG", 0xE007F: "TAG END",
    **{cp: f"VS{cp - 0xFE00 + 1}" for cp in range(0xFE00, 0xFE10)},
    **{cp: f"VS{cp - 0xE0100 + 17}" for cp in range(0xE0100, 0xE01F0)},
}
_TAGS = range(0xE0020, 0xE007F)  # TAG SPACE .. TAG TILDE: each spells an ASCII character


def _kind_table() -> dict[int, str]:
    table = {cp: BIDI for cp in _BIDI}
    table.update({cp: ZERO_WIDTH for cp in _ZERO_WIDTH})
    table.update({cp: FORMAT for cp in _FORMAT})
    table.update({cp: FORMAT for cp in _TAGS})
    return table


KIND: dict[int, str] = _kind_table()  # code point -> its kind, for every character marked
INVISIBLES: frozenset[int] = frozenset(KIND)
_VARIATION = frozenset(range(0xFE00, 0xFE10)) | frozenset(range(0xE0100, 0xE01F0))
_ZWJ = 0x200D


def _class(codes) -> str:
    """A regex character class of these code points, as ranges."""
    codes = sorted(codes)  # (an iterable of ints)
    parts, start = [], codes[0]
    for prev, cp in zip(codes, codes[1:] + [None]):
        if cp != prev + 1:
            parts.append(re.escape(chr(start)) if start == prev
                         else f"{re.escape(chr(start))}-{re.escape(chr(prev))}")
            start = cp
    return "[" + "".join(parts) + "]"


# subtle: one class of them all made the scan six times slower (the astral ranges); the BMP's
# class scans 1 MB in a few milliseconds with the standard library's re (the `regex` module's
# took 150), and the astral class is only looked for in a text that has astral characters.
PATTERN = re.compile(_class(c for c in INVISIBLES if c <= 0xFFFF))
ASTRAL_PATTERN = re.compile(_class(c for c in INVISIBLES if c > 0xFFFF))
BIDI_PATTERN = re.compile(_class(_BIDI))
_EMOJI = regex.compile(r"[\p{Extended_Pictographic}\p{Emoji_Modifier}\p{Regional_Indicator}]")


@dataclass(frozen=True)
class Invisible:
    """One invisible character found in a text."""

    index: int  # in code points of the text searched
    char: str

    @property
    def kind(self) -> str:
        return KIND[ord(self.char)]

    @property
    def label(self) -> str:
        return label(self.char)


def label(char: str) -> str:
    """The short label of an invisible character, for its marker.

    >>> label("\\u202e"), label("\\u200b"), label("\\U000e0041")
    ('RLO', 'ZWSP', 'TAG A')
    """
    cp = ord(char)
    if cp in _TAGS:
        return "TAG SP" if cp == 0xE0020 else f"TAG {chr(cp - 0xE0000)}"
    return _BIDI.get(cp) or _ZERO_WIDTH.get(cp) or _FORMAT.get(cp) or f"U+{cp:04X}"


@functools.lru_cache(maxsize=512)
def describe(char: str) -> str:
    """A tooltip's sentence: code point, name and kind.

    >>> describe("\\u202e")
    'U+202E RIGHT-TO-LEFT OVERRIDE (bidi control)'
    >>> describe("\\ufeff")
    'U+FEFF ZERO WIDTH NO-BREAK SPACE (byte order mark) (zero-width)'
    """
    cp = ord(char)
    name = unicodedata.name(char, f"<unassigned-{cp:04X}>")
    if cp == 0xFEFF:
        name += " (byte order mark)"
    return f"U+{cp:04X} {name} ({KIND.get(cp, FORMAT)})"


def _shown_as_part(text: str, i: int, cp: int) -> bool:
    """Whether the invisible character at `text[i]` is part of a visible one (see the module's
    docstring), so it gets no marker."""
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if cp in _VARIATION:
        # One selector right after a visible character; not a second one, nor one after a space.
        return (before != "" and ord(before) not in INVISIBLES and not before.isspace()
                and (after == "" or ord(after) not in _VARIATION))
    if cp == _ZWJ:
        k = i - 1
        if k >= 0 and ord(text[k]) == 0xFE0F:  # ❤️‍🔥: the selector before the joiner
            k -= 1
        return k >= 0 and after != "" and bool(_EMOJI.match(text[k])) and bool(_EMOJI.match(after))
    if 0xE0020 <= cp <= 0xE007F:  # a flag's tags: 🏴 then tags up to the cancel tag
        k = i
        while k > 0 and 0xE0020 <= ord(text[k - 1]) <= 0xE007E:
            k -= 1
        return k > 0 and ord(text[k - 1]) == 0x1F3F4 and _ends_tag_sequence(text, i)
    return False


def _ends_tag_sequence(text: str, i: int) -> bool:
    k = i
    while k < len(text) and 0xE0020 <= ord(text[k]) <= 0xE007E:
        k += 1
    return k < len(text) and ord(text[k]) == 0xE007F


def find(text: str, start: int = 0, end: int | None = None) -> Iterator[Invisible]:
    """The invisible characters of `text[start:end]` that get a marker, in order.

    >>> [(v.index, v.label, v.kind) for v in find("RLO\\u202eevil\\u202c")]
    [(3, 'RLO', 'bidi control'), (8, 'PDF', 'bidi control')]
    >>> [v.label for v in find("👨\\u200d👩 ❤\\ufe0f a\\u200db")]
    ['ZWJ']
    """
    end = len(text) if end is None else end
    if text.isascii():
        return
    found = (m.start() for m in PATTERN.finditer(text, start, end))
    if has_astral(text[start:end] if start or end < len(text) else text):
        found = sorted([*found, *(m.start() for m in ASTRAL_PATTERN.finditer(text, start, end))])
    for i in found:
        cp = ord(text[i])
        if cp in _VARIATION or cp == _ZWJ or 0xE0020 <= cp <= 0xE007F:
            if _shown_as_part(text, i, cp):
                continue
        yield Invisible(i, text[i])


class Mark(NamedTuple):
    """What a view draws for one invisible character, or for a run of tag characters (one box
    that spells them)."""

    index: int  # in code points of the text searched
    length: int  # code points covered: 1, or a tag run's length
    label: str
    tip: str
    kind: str


TAG_LABEL_CHARS = 24  # a tag run's label spells at most this many characters


def marks(text: str, start: int = 0, end: int | None = None) -> list[Mark]:
    """The markers of `text[start:end]`: one per invisible character (`find`), a run of tag
    characters as one, spelling what they hide; a bidi control's tip says what it governs.

    >>> [(m.index, m.length, m.label) for m in marks("a\U000e0048\U000e0069b\u200b")]
    [(1, 2, 'TAGS “Hi”'), (4, 1, 'ZWSP')]
    >>> marks("RLO\u202eevil\u202c")[0].tip
    'U+202E RIGHT-TO-LEFT OVERRIDE (bidi control): “evil” after it, up to U+202C, is displayed right to left'
    """
    out: list[Mark] = []
    for v in find(text, start, end):
        cp = ord(v.char)
        if 0xE0020 <= cp <= 0xE007E:
            last = out[-1] if out else None
            if last is not None and last.label.startswith("TAGS") and last.index + last.length == v.index:
                out[-1] = _tag_run(text, last.index, last.length + 1)
            else:
                out.append(_tag_run(text, v.index, 1))
            continue
        tip = describe(v.char)
        if cp in _OPENERS:
            a, b = bidi_scope(text, v.index)
            closer = (f", up to U+{ord(text[b]):04X}" if b < len(text) and ord(text[b]) in (0x202C, 0x2069)
                      else ", to the end of the line")
            way = "right to left" if cp in (0x202B, 0x202E, 0x2067) else \
                "left to right" if cp in (0x202A, 0x202D, 0x2066) else "in the direction of its first letter"
            verb = "is displayed" if cp in (0x202D, 0x202E) else "is laid out"
            shown = text[a:b] if b - a <= 40 else text[a:a + 40] + "…"
            tip += f": “{shown}” after it{closer}, {verb} {way}"
        out.append(Mark(v.index, 1, v.label, tip, v.kind))
    return out


def _tag_run(text: str, index: int, length: int) -> Mark:
    spelled = "".join(chr(ord(c) - 0xE0000) for c in text[index:index + length])
    shown = spelled if len(spelled) <= TAG_LABEL_CHARS else spelled[:TAG_LABEL_CHARS] + "…"
    if length == 1:
        return Mark(index, 1, f"TAGS “{shown}”", describe(text[index]), FORMAT)
    return Mark(index, length, f"TAGS “{shown}”",
                f"{length} tag characters (U+E0020–U+E007E, format): invisible text that spells “{spelled}”",
                FORMAT)


def bidi_controls(text: str) -> list[int]:
    """Code-point offsets of the bidi controls in `text` (every one: none is part of a visible
    character).

    >>> bidi_controls("a\\u202eb\\u202c")
    [1, 3]
    """
    return [m.start() for m in BIDI_PATTERN.finditer(text)]


_OPENERS = frozenset(range(0x202A, 0x202F)) - {0x202C} | {0x2066, 0x2067, 0x2068}
_ISOLATES = frozenset({0x2066, 0x2067, 0x2068})


def bidi_scope(text: str, i: int) -> tuple[int, int]:
    """The code-point range that the embedding, override or isolate at `text[i]` governs: from
    after it up to its closing PDF (U+202C) or PDI (U+2069), else the line's end (Unicode's rule:
    a paragraph ends them all); (i + 1, i + 1) for a mark or a closer.

    >>> bidi_scope("RLO\\u202eevil\\u202c!", 3)
    (4, 8)
    >>> bidi_scope("\\u2067ab\\u202ecd\\u2069e", 0)
    (1, 6)
    """
    cp = ord(text[i])
    if cp not in _OPENERS:
        return i + 1, i + 1
    stack = [cp]
    k = i + 1
    while k < len(text):
        c = ord(text[k])
        if text[k] in "\n\r\u2029\x85\x1c\x1d\x1e":
            break
        if c in _OPENERS:
            stack.append(c)
        elif c == 0x202C:  # PDF closes the innermost embedding or override (not an isolate)
            if stack[-1] not in _ISOLATES:
                stack.pop()
        elif c == 0x2069:  # PDI closes the innermost isolate and whatever it holds
            while stack and stack[-1] not in _ISOLATES:
                stack.pop()
            if stack:
                stack.pop()
        if not stack:
            return i + 1, k
        k += 1
    return i + 1, k


def warning(codes: list[int]) -> str:
    """The status bar's sentence for a text holding these bidi controls (code points), or "".

    >>> warning([0x202E, 0x202C])
    'This text holds 2 bidi control characters (U+202E RLO, U+202C PDF): it may display in a different order than it is stored'
    """
    if not codes:
        return ""
    seen = list(dict.fromkeys(codes))
    named = ", ".join(f"U+{cp:04X} {_BIDI.get(cp, '')}".rstrip() for cp in seen[:3]) + ("…" if len(seen) > 3 else "")
    n = len(codes)
    return (f"This text holds {n:,} bidi control character{'s' if n != 1 else ''} ({named}): "
            f"it may display in a different order than it is stored")
