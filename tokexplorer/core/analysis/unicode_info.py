"""Unicode inspection: what a string is made of, code point by code point.

For each code point: U+XXXX, name, general category, script, bidi class, its UTF-8 / UTF-16 /
UTF-32 encodings, and what kind of trouble it can be (invisible, control, bidi, combining, ...).
For the string: extended grapheme clusters and the NFC / NFD / NFKC / NFKD forms that differ.

Names and normalisation come from `unicodedata2` (a recent Unicode) when installed, else from the
standard library (Unicode 14 on Python 3.11); scripts and graphemes from the `regex` module.
Also `visible`, a string with its controls and invisibles escaped, for the cells of the command
line's tables and the window's; and the numbers as Python prints them (`python_bytes`: the lists
of `list(text.encode(...))`, byte order mark included; `code_values` and `number` for a code
point's bytes and code units in decimal or hex).
This module does not know about tokens; views join the two by code-point offsets.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field

import regex

try:
    import unicodedata2 as unicodedata
except ImportError:  # pragma: no cover - the package is a dependency
    import unicodedata

UNICODE_VERSION = unicodedata.unidata_version

_SCRIPTS = """Latin Greek Cyrillic Armenian Hebrew Arabic Syriac Thaana Nko Samaritan Mandaic
Devanagari Bengali Gurmukhi Gujarati Oriya Tamil Telugu Kannada Malayalam Sinhala Thai Lao Tibetan
Myanmar Georgian Hangul Ethiopic Cherokee Canadian_Aboriginal Ogham Runic Khmer Mongolian Hiragana
Katakana Bopomofo Han Yi Tagalog Hanunoo Buhid Tagbanwa Limbu Tai_Le New_Tai_Lue Buginese Tai_Tham
Balinese Sundanese Batak Lepcha Ol_Chiki Glagolitic Tifinagh Vai Bamum Javanese Cham Tai_Viet
Meetei_Mayek Lisu Adlam Osage Vithkuqi Coptic Gothic Old_Italic Deseret Shavian Osmanya Cuneiform
Egyptian_Hieroglyphs Braille SignWriting Duployan Hanifi_Rohingya Yezidi Nushu Tangut Kawi
Nag_Mundari Garay Ol_Onal Sunuwar Todhri Tulu_Tigalari Kirat_Rai Gurung_Khema Brahmi Kaithi Sharada
Takri Grantha Tirhuta Modi Khojki Siddham Dogra Chakma Wancho Toto Tangsa Mro Miao Medefaidrin Saurashtra
Syloti_Nagri Phags_Pa Rejang Kayah_Li Bassa_Vah Mende_Kikakui Anatolian_Hieroglyphs Linear_A
Linear_B Cypriot Ugaritic Old_Persian Phoenician Imperial_Aramaic Avestan Old_Turkic Old_Hungarian
Common Inherited""".split()


@functools.lru_cache(maxsize=1)
def _script_regex() -> regex.Pattern:
    return regex.compile("|".join(rf"(?P<{s}>\p{{sc={s}}})" for s in _SCRIPTS))


@functools.lru_cache(maxsize=4096)
def script_of(char: str) -> str:
    """The Unicode script of one code point ('Unknown' for unassigned or rarer scripts).

    >>> script_of("a"), script_of("語"), script_of("👋")
    ('Latin', 'Han', 'Common')
    """
    m = _script_regex().match(char)
    return m.lastgroup if m else "Unknown"


_CONTROL_ABBREVIATIONS = {
    0x00: "NULL", 0x07: "BELL", 0x08: "BACKSPACE", 0x09: "CHARACTER TABULATION",
    0x0A: "LINE FEED (LF)", 0x0B: "LINE TABULATION", 0x0C: "FORM FEED (FF)",
    0x0D: "CARRIAGE RETURN (CR)", 0x1B: "ESCAPE", 0x7F: "DELETE", 0x85: "NEXT LINE (NEL)",
}
_BIDI_CONTROLS = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def name_of(char: str) -> str:
    """The character's name, or a descriptive label for controls and unnamed code points.

    >>> name_of("\\u200d"), name_of("\\n")
    ('ZERO WIDTH JOINER', '<control> LINE FEED (LF)')
    """
    cp = ord(char)
    name = unicodedata.name(char, "")
    if name:
        return name
    category = unicodedata.category(char)
    if category == "Cc":
        return "<control> " + _CONTROL_ABBREVIATIONS.get(cp, f"U+{cp:04X}")
    if category == "Cs":
        return "<surrogate>"
    if category == "Co":
        return "<private use>"
    if _is_noncharacter(cp):
        return "<noncharacter>"
    return "<unassigned>"


def _is_noncharacter(cp: int) -> bool:
    return 0xFDD0 <= cp <= 0xFDEF or (cp & 0xFFFE) == 0xFFFE


def kinds_of(char: str) -> list[str]:
    """Why a code point deserves attention: 'control', 'invisible', 'bidi', 'whitespace',
    'combining', 'variation selector', 'tag', 'private use', 'noncharacter', 'unassigned',
    'surrogate'. Empty for ordinary visible characters.

    >>> kinds_of("\\u202e"), kinds_of("\\u0301"), kinds_of("a")
    (['bidi', 'invisible'], ['combining'], [])
    """
    cp = ord(char)
    category = unicodedata.category(char)
    kinds: list[str] = []
    if category == "Cc":
        kinds.append("control")
    if cp in _BIDI_CONTROLS:
        kinds.append("bidi")
    if 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF:
        kinds.append("variation selector")
    elif 0xE0000 <= cp <= 0xE007F:
        kinds.append("tag")
    if category == "Cf" or cp in (0x115F, 0x1160, 0x3164, 0xFFA0, 0x034F) or "variation selector" in kinds:
        kinds.append("invisible")
    if category in ("Zs", "Zl", "Zp") and cp != 0x20:
        kinds.append("whitespace")
    if category in ("Mn", "Me", "Mc") and "variation selector" not in kinds:
        kinds.append("combining")
    if category == "Co":
        kinds.append("private use")
    if category == "Cs":
        kinds.append("surrogate")
    if _is_noncharacter(cp):
        kinds.append("noncharacter")
    elif category == "Cn":
        kinds.append("unassigned")
    return kinds


@dataclass(frozen=True)
class CodePointInfo:
    """One code point of a string."""

    index: int  # in code points
    char: str
    codepoint: str  # "U+1F44B"
    name: str
    category: str
    script: str
    bidi: str
    utf8: str  # hex bytes "F0 9F 91 8B"
    utf16: str  # big-endian code units "D83D DC4B"
    utf32: str  # "0001F44B"
    kinds: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class TextInfo:
    """A string taken apart: code points, graphemes, sizes and normal forms that differ."""

    text: str
    code_points: list[CodePointInfo]
    graphemes: list[tuple[int, int]]  # code-point spans of extended grapheme clusters
    normal_forms: dict[str, str]  # only the forms that differ from the text
    sizes: dict[str, int]
    unicode_version: str = UNICODE_VERSION


def code_point_info(char: str, index: int = 0) -> CodePointInfo:
    """Everything about one code point."""
    cp = ord(char)
    if 0xD800 <= cp <= 0xDFFF:
        utf8 = "(lone surrogate: not encodable)"
        utf16 = f"{cp:04X}"
    else:
        utf8 = char.encode("utf-8").hex(" ").upper()
        utf16 = " ".join(
            f"{int.from_bytes(u, 'big'):04X}"
            for u in _chunks(char.encode("utf-16-be"), 2)
        )
    return CodePointInfo(
        index=index,
        char=char,
        codepoint=f"U+{cp:04X}",
        name=name_of(char),
        category=unicodedata.category(char),
        script=script_of(char),
        bidi=unicodedata.bidirectional(char),
        utf8=utf8,
        utf16=utf16,
        utf32=f"{cp:08X}",
        kinds=kinds_of(char),
    )


def _chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def graphemes(text: str) -> list[tuple[int, int]]:
    """Extended grapheme clusters as code-point spans.

    >>> graphemes("e\\u0301👍🏽")
    [(0, 2), (2, 4)]
    """
    return [m.span() for m in regex.finditer(r"\X", text)]


def normal_forms(text: str) -> dict[str, str]:
    """NFC / NFD / NFKC / NFKD of the text, only those that differ from it.

    >>> {form: [hex(ord(c)) for c in text] for form, text in normal_forms("\u00e9").items()}
    {'NFD': ['0x65', '0x301'], 'NFKD': ['0x65', '0x301']}
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return {}
    forms = {}
    for form in ("NFC", "NFD", "NFKC", "NFKD"):
        normalized = unicodedata.normalize(form, text)
        if normalized != text:
            forms[form] = normalized
    return forms


def inspect_text(text: str) -> TextInfo:
    """Take a string apart; see TextInfo.

    >>> info = inspect_text("a👋")
    >>> [c.codepoint for c in info.code_points], info.sizes["utf8"], info.sizes["utf16_units"]
    (['U+0061', 'U+1F44B'], 5, 3)
    """
    points = [code_point_info(c, i) for i, c in enumerate(text)]
    encodable = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    sizes = {
        "code_points": len(text),
        "graphemes": 0,
        "utf8": len(encodable.encode("utf-8")),
        "utf16_units": len(encodable.encode("utf-16-le")) // 2,
        "utf32": 4 * len(text),
    }
    clusters = graphemes(text)
    sizes["graphemes"] = len(clusters)
    return TextInfo(text, points, clusters, normal_forms(text), sizes)


def visible(text: str) -> str:
    """Text for a table cell: quotes kept off, controls and invisibles escaped.

    >>> visible("a\\tb\\n")
    'a\\\\tb\\\\n'
    """
    out = []
    for ch in text:
        if ch == " " or (ch.isprintable() and ch not in "\\"):
            out.append(ch)
        else:
            out.append(repr(ch)[1:-1] if ch != "\\" else "\\\\")
    return "".join(out)


VISIBLE_SPACE = "\u2423"  # ␣


def token_label(data: bytes) -> str:
    """A token's bytes as readable text: spaces as ␣ (a token of spaces is not blank), controls
    escaped, and bytes that are not (complete) UTF-8 shown as \\xNN rather than as U+FFFD, so the
    two halves of a split emoji differ.

    >>> token_label(b" a\\n\\xf0\\x9f")
    '␣a\\\\n\\\\xf0\\\\x9f'
    """
    out = []
    for ch in data.decode("utf-8", errors="surrogateescape"):
        code = ord(ch)
        out.append(f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF
                   else VISIBLE_SPACE if ch == " " else visible(ch))
    return "".join(out)


# CPython's "utf-16" and "utf-32" codecs write a byte order mark, then the code units in this
# machine's byte order (sys.byteorder): FF FE ... on little-endian machines, which almost all are.
BYTE_ORDER = sys.byteorder
PYTHON_CODECS = ("utf-8", "utf-16", "utf-32")
BASES = ("decimal", "hex")


def python_bytes(text: str) -> dict[str, list[int] | None]:
    """`list(text.encode(codec))` for UTF-8, UTF-16 and UTF-32, as the student's Python prints
    it (Python's own codecs, so the BOM and byte order are this machine's); None for a text
    Python cannot encode (a lone surrogate).

    >>> b = python_bytes("h")
    >>> b["utf-8"], b["utf-16"] == list("h".encode("utf-16")), len(b["utf-32"])
    ([104], True, 8)
    """
    out: dict[str, list[int] | None] = {}
    for codec in PYTHON_CODECS:
        try:
            out[codec] = list(text.encode(codec))
        except UnicodeEncodeError:
            out[codec] = None
    return out


def bom_note() -> str:
    """One line on the byte order mark of Python's "utf-16" / "utf-32" on this machine."""
    mark16, mark32 = "".encode("utf-16"), "".encode("utf-32")
    return (f"utf-16 and utf-32 start with a byte order mark ({list(mark16)} and {list(mark32)}), "
            f"then each code unit {BYTE_ORDER}-endian: the machine's order, as CPython writes them")


def code_values(char: str) -> dict[str, list[int]]:
    """A code point's UTF-8 bytes, UTF-16 code units and UTF-32 value as integers.

    >>> code_values("👋")
    {'utf8': [240, 159, 145, 139], 'utf16': [55357, 56395], 'utf32': [128075]}
    """
    cp = ord(char)
    if 0xD800 <= cp <= 0xDFFF:
        return {"utf8": [], "utf16": [cp], "utf32": [cp]}
    data = char.encode("utf-16-be")
    return {"utf8": list(char.encode("utf-8")),
            "utf16": [int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2)],
            "utf32": [cp]}


def number(value: int, base: str, width: int = 2) -> str:
    """An integer in decimal (as Python prints it) or upper-case hex of at least `width` digits.

    >>> number(104, "decimal"), number(104, "hex"), number(0xDC4B, "hex", 4)
    ('104', '68', 'DC4B')
    """
    if base not in BASES:
        raise ValueError(f"base {base!r}: use one of {', '.join(BASES)}")
    return str(value) if base == "decimal" else f"{value:0{width}X}"
