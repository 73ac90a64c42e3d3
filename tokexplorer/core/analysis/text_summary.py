"""A summary of a text too long to take apart code point by code point (`tokexplorer inspect` of a
book or a dump): counts per script and per general category, the unusual code points (controls,
invisibles, bidi controls, ...) with how often and where they first occur, sizes, which normal
forms differ, and one page of the per-code-point table.

Memory stays near the text's own size: characters are counted once (a Counter of the distinct
characters, counted in C), each distinct character is looked up once, and graphemes are counted
without listing them. It does not build the whole table (see `unicode_info.inspect_text`).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass

import regex

from tokexplorer.core.tokenizer import clean_text
from tokexplorer.core.analysis.unicode_info import UNICODE_VERSION, CodePointInfo, code_point_info, kinds_of, script_of

MAX_UNUSUAL = 50  # distinct unusual code points listed (most frequent first)


@dataclass(frozen=True)
class Unusual:
    """An unusual code point: what it is, how often it occurs and where first."""

    info: CodePointInfo  # `index` is its first position
    count: int


@dataclass(frozen=True)
class TextSummary:
    sizes: dict[str, int]
    scripts: dict[str, int]  # script -> code points, most first
    categories: dict[str, int]  # general category -> code points, most first
    unusual: list[Unusual]  # up to MAX_UNUSUAL, most frequent first
    unusual_distinct: int  # how many distinct unusual code points there are
    normal_forms_differ: list[str]  # "NFC", ... where normalising would change the text
    page: list[CodePointInfo]  # the code points offset .. offset + limit
    offset: int
    unicode_version: str = UNICODE_VERSION


def summarise_text(text: str, *, offset: int = 0, limit: int = 100) -> TextSummary:
    """Summarise a text, with the per-code-point rows offset .. offset + limit.

    >>> s = summarise_text("ab\\u200bc 日本", limit=2)
    >>> s.scripts, [u.info.codepoint for u in s.unusual], [c.char for c in s.page]
    ({'Latin': 3, 'Common': 2, 'Han': 2}, ['U+200B'], ['a', 'b'])
    """
    counts = Counter(text)
    scripts: Counter[str] = Counter()
    categories: Counter[str] = Counter()
    unusual = []
    for char, n in counts.items():
        scripts[script_of(char)] += n
        categories[unicodedata.category(char)] += n
        if kinds_of(char):
            unusual.append((n, char))
    unusual.sort(key=lambda item: (-item[0], item[1]))
    encodable = clean_text(text)  # the same object when it has no lone surrogate
    utf8 = (sum(n * len(c.encode("utf-8")) for c, n in counts.items()) if encodable is text
            else len(encodable.encode("utf-8")))
    sizes = {
        "code_points": len(text),
        "graphemes": sum(1 for _ in regex.finditer(r"\X", text)),
        "utf8": utf8,
        "utf16_units": len(text) + sum(n for c, n in counts.items() if ord(c) > 0xFFFF),
        "utf32": 4 * len(text),
    }
    forms = [] if encodable is not text else [
        form for form in ("NFC", "NFD", "NFKC", "NFKD") if not unicodedata.is_normalized(form, text)]
    offset = max(0, min(offset, len(text)))
    page = [code_point_info(c, offset + i) for i, c in enumerate(text[offset:offset + max(0, limit)])]
    return TextSummary(
        sizes=sizes,
        scripts=dict(scripts.most_common()),
        categories=dict(categories.most_common()),
        unusual=[Unusual(code_point_info(c, text.find(c)), n) for n, c in unusual[:MAX_UNUSUAL]],
        unusual_distinct=len(unusual),
        normal_forms_differ=forms,
        page=page,
        offset=offset,
    )
