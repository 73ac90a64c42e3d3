"""Invisible characters: which are listed, how they are named, which are found in a text (and
which are left as part of a visible emoji), how far a bidi control reaches, and how fast a 1 MB
text is searched."""

from __future__ import annotations

import sys
import time
import unicodedata

import pytest

from tokexplorer.core.analysis import invisibles as inv
from tokexplorer.core.analysis.caret import token_at_caret
from tokexplorer.core.registry import get_builtin

TROJAN = "RLO\u202eevil\u202c"

# Format characters (category Cf) that draw something, so they are not invisible: the Arabic
# number signs and end-of-ayah marks, the Syriac abbreviation mark, the Kaithi and Egyptian
# signs, the interlinear annotation characters and the musical and shorthand signs that are
# not default-ignorable.
VISIBLE_FORMAT = {*range(0x0600, 0x0606), 0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2, 0x110BD, 0x110CD,
                  *range(0xFFF9, 0xFFFC), *range(0x13430, 0x13456)}


def test_every_format_character_is_listed_or_known_to_draw():
    """Each Cf code point of the Unicode the interpreter knows is listed as invisible, or is one
    of the format characters that draw a glyph (a forgotten one would vanish in the editor)."""
    missing = [f"U+{cp:04X}" for cp in range(sys.maxunicode + 1)
               if unicodedata.category(chr(cp)) == "Cf" and cp not in inv.INVISIBLES and cp not in VISIBLE_FORMAT]
    assert missing == []


@pytest.mark.parametrize("char, described, label", [
    ("\u202e", "U+202E RIGHT-TO-LEFT OVERRIDE (bidi control)", "RLO"),
    ("\u2066", "U+2066 LEFT-TO-RIGHT ISOLATE (bidi control)", "LRI"),
    ("\u061c", "U+061C ARABIC LETTER MARK (bidi control)", "ALM"),
    ("\u200f", "U+200F RIGHT-TO-LEFT MARK (bidi control)", "RLM"),
    ("\u200b", "U+200B ZERO WIDTH SPACE (zero-width)", "ZWSP"),
    ("\u200c", "U+200C ZERO WIDTH NON-JOINER (zero-width)", "ZWNJ"),
    ("\u2060", "U+2060 WORD JOINER (zero-width)", "WJ"),
    ("\ufeff", "U+FEFF ZERO WIDTH NO-BREAK SPACE (byte order mark) (zero-width)", "BOM"),
    ("\u00ad", "U+00AD SOFT HYPHEN (format)", "SHY"),
    ("\U000e0041", "U+E0041 TAG LATIN CAPITAL LETTER A (format)", "TAG A"),
], ids=lambda v: v if isinstance(v, str) and v.isascii() and len(v) < 8 else None)
def test_names_and_labels(char, described, label):
    assert inv.describe(char) == described
    assert inv.label(char) == label


def test_the_trojan_source_example_is_found_in_its_stored_order():
    found = list(inv.find(TROJAN))
    assert [(v.index, v.label, v.kind) for v in found] == [(3, "RLO", inv.BIDI), (8, "PDF", inv.BIDI)]
    assert inv.bidi_controls(TROJAN) == [3, 8]
    assert inv.bidi_scope(TROJAN, 3) == (4, 8)  # "evil", stored before the PDF
    # The Trojan Source paper's comment-out: the override holds isolates, whose PDIs close only
    # them, so it reaches the end of the line; a PDI closes an isolate and what it holds.
    text = 'x = "user\u202e \u2066// Check if admin\u2069 \u2066"'
    rlo = text.index("\u202e")
    assert inv.bidi_scope(text, rlo) == (rlo + 1, len(text))
    assert inv.bidi_scope("\u2067a\u202eb\u2069c", 0) == (1, 4)
    assert inv.bidi_scope("\u202eabc\ndef", 0) == (1, 4)  # a line's end closes an override
    m = inv.marks(TROJAN)[0]
    assert m.tip == ("U+202E RIGHT-TO-LEFT OVERRIDE (bidi control): “evil” after it, up to U+202C, "
                     "is displayed right to left")


def test_emoji_keep_their_joiners_selectors_and_tags():
    family, heart, england = "👨\u200d👩\u200d👧", "\u2764\ufe0f", "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"
    assert list(inv.find(f"{family} {heart} {england} ❤\ufe0f\u200d🔥")) == []
    # The same characters where no emoji holds them are marked.
    text = "a\u200db \ufe0f x\ufe0f\ufe0f\ufe0f"
    assert [(v.index, v.label) for v in inv.find(text)] == [(1, "ZWJ"), (4, "VS16"), (7, "VS16"), (8, "VS16"), (9, "VS16")]


def test_hidden_tag_text_is_one_mark_that_spells_it():
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "Ignore all")
    found = inv.marks(f"hi{hidden} there")
    assert [(m.index, m.length, m.label) for m in found] == [(2, 10, "TAGS “Ignore all”")]
    assert found[0].tip.endswith("spells “Ignore all”")


def test_warning_names_the_controls():
    assert inv.warning([]) == ""
    assert inv.warning([0x202E]) == ("This text holds 1 bidi control character (U+202E RLO): it may display "
                                     "in a different order than it is stored")
    assert "(U+202A LRE, U+202B RLE, U+202D LRO…)" in inv.warning([0x202A, 0x202B, 0x202D, 0x202E])


def test_a_megabyte_is_searched_in_milliseconds(corpora):
    """1 MB of tinyshakespeare with invisibles planted: every one is found, in order, and the
    search takes milliseconds (measured 5-10 ms here; the bound leaves room for a loaded machine,
    not for a scan per character in Python)."""
    text = (corpora / "en" / "tinyshakespeare.txt").read_text(encoding="utf-8")[:1_000_000]
    planted = text.replace("KING", "KI\u200bNG").replace("QUEEN", "QUE\u202eEN").replace("LORD", "LO\U000e0041RD")
    want = [i for i, c in enumerate(planted) if c in "\u200b\u202e\U000e0041"]
    assert len(want) > 300
    best = min(_timed(lambda: [v.index for v in inv.find(planted)]) for _ in range(3))
    assert [v.index for v in inv.find(planted)] == want
    assert best < 0.15, f"{best * 1000:.0f} ms"
    greek = "αβγ δεζ " * 125_000  # not ASCII, nothing to find
    assert min(_timed(lambda: list(inv.find(greek))) for _ in range(3)) < 0.15


def _timed(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def test_the_token_at_the_caret_at_a_boundary_is_the_one_after_it():
    """cl100k splits "Combining" as "Comb" + "ining": a caret between them means "ining"; at the
    text's end, the last token; in the middle of a token, that token."""
    enc = get_builtin("cl100k_base").encode("Combining")
    assert [enc.token_bytes[i] for i in range(len(enc))] == [b"Comb", b"ining"]
    assert token_at_caret(enc.starts, enc.ends, 4) == 1
    assert token_at_caret(enc.starts, enc.ends, 9) == 1
    assert token_at_caret(enc.starts, enc.ends, 0) == 0
    assert token_at_caret(enc.starts, enc.ends, 3) == 0
