"""Selection counts and the inspection of a selection, with the real tokenizers; counts checked
against a slow reference that looks at every token's bytes."""

from __future__ import annotations

import json
import random

import pytest

from tokexplorer.core.encoding import TokenFlag
from tokexplorer.core.analysis.quirks import quirk
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.analysis.selection import caret_range, inspect_selection, selection_counts

TRICKY = "hi 👋 there, e\u0301 🇺🇳 한국어 똠 👨\u200d👩\u200d👧 क्षत्रिय \u202eevil\u202c 𝕏\u00a0x  \n\tend "


def reference_counts(enc, start, end):
    """Touched and whole tokens by looking at every token's byte span."""
    b0 = len(enc.text[:start].encode())
    b1 = b0 + len(enc.text[start:end].encode())
    touched = [i for i in range(len(enc)) if enc.byte_starts[i] < b1 and enc.byte_ends[i] > b0
               and enc.byte_ends[i] > enc.byte_starts[i]]
    whole = [i for i in touched if enc.byte_starts[i] >= b0 and enc.byte_ends[i] <= b1]
    return touched, whole, b1 - b0


def test_counts_match_the_slow_reference(builtin):
    enc = builtin.encode(TRICKY)
    rng = random.Random(7)
    ranges = [(a, min(b, len(TRICKY))) for a in range(len(TRICKY)) for b in (a + 1, a + 2)] + [
        tuple(sorted(rng.sample(range(len(TRICKY) + 1), 2))) for _ in range(200)] + [(0, len(TRICKY))]
    for a, b in ranges:
        touched, whole, n_bytes = reference_counts(enc, a, b)
        c = selection_counts(enc, a, b)
        assert (list(c.token_indices), c.whole, c.chars, c.bytes) == (touched, len(whole), b - a, n_bytes), (a, b)


def test_an_emoji_split_by_gpt2_touches_two_tokens_one_whole():
    enc = get_builtin("gpt2").encode("hi 👋 there")  # ' \xf0\x9f\x91' + '\x8b': derived from the real vocab
    c = selection_counts(enc, 3, 4)
    assert (c.tokens, c.whole, c.chars, c.bytes) == (2, 1, 1, 4)
    assert [enc.ids[i] for i in c.token_indices] == [50169, 233]


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_what_the_trailing_space_costs(name):
    q = quirk("trailing-space")
    text = dict(q.samples)["with it"]
    enc = get_builtin(name).encode(text)
    c = selection_counts(enc, len(text) - 1, len(text))
    # The final space is a token of its own: one more token than the text without it.
    assert (c.tokens, c.whole, c.bytes) == (1, 1, 1)
    assert len(enc) == len(get_builtin(name).encode(text[:-1])) + 1


def test_json_costs_more_than_yaml():
    parts = dict(quirk("json-vs-yaml").samples)
    text = parts["JSON"] + parts["YAML"]
    tok = get_builtin("cl100k_base")
    enc = tok.encode(text)
    json_c = selection_counts(enc, 0, len(parts["JSON"]))
    yaml_c = selection_counts(enc, len(parts["JSON"]), len(text))
    # Both parts end in a newline, so no token straddles them: each costs what it costs alone.
    assert json_c.tokens == json_c.whole == len(tok.encode(parts["JSON"]))
    assert yaml_c.tokens == yaml_c.whole == len(tok.encode(parts["YAML"]))
    assert yaml_c.tokens < json_c.tokens


def test_the_dummy_prefix_piece_touches_nothing():
    enc = get_builtin("llama-sp").encode("한 x")  # '▁' (no bytes of the text), '한', '▁x'
    c = selection_counts(enc, 0, 1)
    assert (c.tokens, c.whole, c.first) == (1, 1, 1)


def inspect(name, text, start, end=None):
    enc = get_builtin(name).encode(text)
    return enc, inspect_selection(enc, start, start if end is None else end, tokenizer=name)


def test_emoji_split_across_gpt2_tokens():
    # The caret in front of the emoji is in token 1, ' \xf0\x9f\x91': its characters are the
    # space and the emoji, whose last byte is token 2.
    enc, info = inspect("gpt2", "hi 👋 there", 3)
    assert info.caret_token == 1 and (info.counts.start, info.counts.end) == (2, 4)
    assert [r.info.codepoint for r in info.rows] == ["U+0020", "U+1F44B"]
    assert [(f"{b.value:02X}", b.token) for b in info.bytes] == [
        ("20", 1), ("F0", 1), ("9F", 1), ("91", 1), ("8B", 2)]
    assert info.rows[1].tokens == (1, 2)
    assert [t.id for t in info.tokens] == [50169, 233]
    assert all(t.flags & TokenFlag.PARTIAL for t in info.tokens)
    assert any("inside a character" in n for n in info.notes)


def test_a_flag_is_one_cluster_of_two_regional_indicators():
    enc, info = inspect("cl100k_base", "a 🇺🇳!", 2, 4)
    assert [r.info.codepoint for r in info.rows] == ["U+1F1FA", "U+1F1F3"]
    assert info.clusters == [(2, 4)] and {r.cluster for r in info.rows} == {0}
    assert " ".join(f"{b.value:02X}" for b in info.bytes) == "F0 9F 87 BA F0 9F 87 B3"
    assert info.rows[0].info.name == "REGIONAL INDICATOR SYMBOL LETTER U"


def test_a_combining_mark_and_its_normal_forms():
    enc, info = inspect("cl100k_base", "cafe\u0301", 3, 5)
    assert [r.info.codepoint for r in info.rows] == ["U+0065", "U+0301"]
    assert info.clusters == [(3, 5)]
    assert info.rows[1].info.category == "Mn" and "combining" in info.rows[1].info.kinds
    assert info.normal_forms == {"NFC": "\u00e9", "NFKC": "\u00e9"}


def test_a_hangul_syllable_under_llama_byte_fallback():
    enc, info = inspect("llama-sp", "x 똠", 2)  # 똠 is not in Llama's vocabulary: three byte pieces
    assert [r.info.name for r in info.rows] == ["HANGUL SYLLABLE DDOM"]
    assert [t.label for t in info.tokens] == ["<0xEB>", "<0x98>", "<0xA0>"]
    assert [b.value for b in info.bytes] == [0xEB, 0x98, 0xA0]
    assert [b.token for b in info.bytes] == [t.index for t in info.tokens]
    assert all(t.flags & TokenFlag.BYTE_FALLBACK for t in info.tokens)
    assert any("byte-fallback" in n and "EB 98 A0" in n for n in info.notes)
    assert info.normal_forms["NFD"] == "\u1104\u1169\u11b7"


def test_a_zwj_family_is_one_cluster_and_the_joiners_are_called_out():
    family = "👨\u200d👩\u200d👧"
    enc, info = inspect("gpt2", family + " ok", 0, 5)
    assert info.clusters == [(0, 5)]
    assert [r.info.codepoint for r in info.rows] == ["U+1F468", "U+200D", "U+1F469", "U+200D", "U+1F467"]
    assert len(info.bytes) == 18 and info.counts.tokens == 10
    assert "U+200D ZERO WIDTH JOINER (invisible) ×2" in info.notes


def test_bidi_controls_are_called_out_by_name():
    enc, info = inspect("o200k_base", "a\u202eb\u202c", 0, 4)
    assert "U+202E RIGHT-TO-LEFT OVERRIDE (bidi, invisible)" in info.notes
    assert "U+202C POP DIRECTIONAL FORMATTING (bidi, invisible)" in info.notes


def test_a_large_selection_is_bounded_but_counted_whole():
    text = "The quick brown fox. " * 50_000  # 1 MB
    enc, info = inspect("cl100k_base", text, 0, len(text))
    assert info.shown == 256 and info.truncated and info.counts.chars == len(text)
    assert info.counts.tokens == len(enc)
    assert [t.index for t in info.tokens] == [i for i in range(len(enc)) if enc.byte_starts[i] < 256]
    assert len(info.bytes) == 256


def test_json_and_text_reports():
    enc, info = inspect("gpt2", "hi 👋", 3, 4)
    data = json.loads(json.dumps(info.as_dict()))
    assert data["counts"] == {"tokens": 2, "whole_tokens": 1, "chars": 1, "bytes": 4}
    assert data["code_points"][0]["codepoint"] == "U+1F44B" and data["code_points"][0]["tokens"] == [1, 2]
    assert [b["hex"] for b in data["bytes"]] == ["F0", "9F", "91", "8B"]
    text = info.as_text()
    assert "U+1F44B\tWAVING HAND SIGN" in text and "bytes: F0 9F 91 8B" in text


def test_caret_at_the_end_takes_the_last_token():
    enc = get_builtin("gpt2").encode("ab cd")
    assert caret_range(enc, 5) == (2, 5, 1)
    assert caret_range(get_builtin("gpt2").encode(""), 0) == (0, 0, None)


def test_byte_offsets_match_encoding_the_prefix(builtin, tricky_strings):
    from tokexplorer.core.analysis.selection import byte_offset, utf8_offset

    text = TRICKY + "".join(t for _, t in tricky_strings[:60])
    enc = builtin.encode(text, allowed_special="none")
    assert [byte_offset(enc, i) for i in range(len(text) + 1)] == [utf8_offset(text, i) for i in range(len(text) + 1)]


def test_a_long_run_of_cut_characters_falls_back_to_the_slow_way():
    from tokexplorer.core.analysis.selection import byte_offset, utf8_offset

    text = "ab " + "🇺🇳" * 200  # GPT-2 cuts every flag: every token after the space is partial
    enc = get_builtin("gpt2").encode(text)
    assert [byte_offset(enc, i) for i in range(0, len(text) + 1, 7)] == [utf8_offset(text, i) for i in range(0, len(text) + 1, 7)]
