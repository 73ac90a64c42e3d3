"""The decode box's reading of what is typed: token ids, or chr / ord look-ups, in real tokenizers."""

from __future__ import annotations

import pytest

from tokexplorer.core.analysis.id_lookup import CharacterLookup, DecodedIds, lookup, parse_characters
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.tokenizer import TokexplorerError


@pytest.mark.parametrize("typed, chars, asked", [
    ("U+0068", "h", "chr"), ("u+68", "h", "chr"), ("U+1F44B", "👋", "chr"), ("U+0068 U+0069", "hi", "chr"),
    ("chr(104)", "h", "chr"), ("chr(0x68)", "h", "chr"),
    ("'h'", "h", "ord"), ('"héllo"', "héllo", "ord"), ("ord('h')", "h", "ord"), ("h", "h", "ord"),
    ("👋🏽", "👋🏽", "ord"), ("안", "안", "ord"),
])
def test_characters_are_read_as_chr_and_ord_read_them(typed, chars, asked):
    assert parse_characters(typed) == (chars, asked)


@pytest.mark.parametrize("typed", ["104", "15339, 1917", "[5, 6, 6, 7]", "hello", "x1", "", "7"])
def test_numbers_and_unreadable_text_are_not_characters(typed):
    assert parse_characters(typed) is None


def test_a_bare_number_is_a_token_id_with_its_code_point_beside():
    tok = get_builtin("cl100k_base")
    found = lookup(tok, "104")
    assert isinstance(found, DecodedIds) and found.ids == [104]
    assert found.token_bytes == [tok.token_bytes(104)]
    assert found.code_point == chr(104) == "h"
    assert lookup(tok, "15339, 1917").code_point is None  # a list: ids only


def test_a_character_shows_its_code_point_and_its_tokens():
    tok = get_builtin("cl100k_base")
    found = lookup(tok, "'h'")
    assert isinstance(found, CharacterLookup)
    assert found.code_points == [ord("h")] == [104]
    assert found.ids == tok.encode("h", allowed_special="none").ids and found.token_bytes == [b"h"]
    emoji = lookup(get_builtin("gpt2"), "U+1F44B")
    assert emoji.chars == "👋" and emoji.ids == get_builtin("gpt2").encode("👋").ids and len(emoji.ids) == 2


def test_sentencepiece_names_its_pieces():
    """Pieces as sentencepiece's id_to_piece names them, for ids and for characters."""
    tok = get_builtin("llama-sp")
    ids = tok.encode_ids("hello\n 녕")  # 녕 is no piece of llama-sp: byte fallback
    found = lookup(tok, ", ".join(map(str, ids)))
    assert found.pieces == [tok.pieces[i] for i in ids] == [
        "▁hell", "o", "<0x0A>", "▁", "<0xEB>", "<0x85>", "<0x95>"]
    assert "<0x0A>" in found.pieces and any(p.startswith("▁") for p in found.pieces)
    assert lookup(tok, "'\n'").pieces == [tok.pieces[i] for i in tok.encode("\n").ids]
    assert lookup(get_builtin("gpt2"), "31373").pieces is None


@pytest.mark.parametrize("typed, message", [
    ("U+110000", "past the last code point"), ("15339, x1", "'x1' is not a token id"),
    ("hello", "quoted, 'h', or as U+0068"), ("100256", "token id 100256 is not in cl100k_base"),
])
def test_bad_input_says_what_to_type(typed, message):
    with pytest.raises(TokexplorerError, match=message.replace("(", r"\(").replace("+", r"\+")):
        lookup(get_builtin("cl100k_base"), typed)
