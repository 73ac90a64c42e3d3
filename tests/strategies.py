"""Hypothesis strategies for text that reaches the hard cases of tokenizers.

`hard_text` mixes hypothesis's own text (any code point but surrogates) with runs of hand-picked
pieces that plain random text almost never produces: astral characters, combining marks, ZWJ
sequences and flags, CJK, right-to-left scripts and their marks, whitespace runs of every kind,
digit runs, contractions, special-token text and its fragments, and SentencePiece's space mark.
`with_surrogates` adds lone surrogates, which every tokenizer takes as U+FFFD (`clean_text`).
"""

from __future__ import annotations

from hypothesis import strategies as st

HARD_PIECES = [
    # astral: emoji, mathematical letters, CJK extension B, a flag, a ZWJ family, a skin tone
    "👋", "😀", "𝕏", "𠀀", "🇺🇳", "👨\u200d👩\u200d👧", "👍🏽", "🏳️\u200d🌈",
    # combining marks: decomposed accents, stacked marks, a mark with nothing before it
    "e\u0301", "a\u0308\u0323", "\u0301", "Z\u0351\u036b\u0343", "é",
    # CJK, kana, Hangul, full-width forms
    "中文", "漢字", "ｱｲｳ", "カタカナ", "한국어", "１２", "。",
    # right to left: Arabic, Hebrew, marks and overrides
    "مرحبا", "שלום", "\u200f", "\u200e", "\u202e", "١٢٣",
    # Indic and Myanmar clusters
    "नमस्ते", "ကြီး",
    # whitespace and controls
    " ", "  ", "    ", "\t", "\n", "\n\n", "\r\n", "\r", " \n", "\u00a0", "\u3000", "\u2028", "\u2029",
    "\x0b", "\x85", "\x00", "\x1b", "\ufeff", "\u200b",
    # digits, words, contractions, punctuation
    "1", "12", "123", "1234567", "0.5", "hello", " world", "The", "'s", "'re", "'LL", "don't", "!!", "...",
    "--", "/*", "\"", "\ufffd",
    # special-token text, its fragments, SentencePiece's space mark
    "<|endoftext|>", "<|fim_prefix|>", "<|im_start|>", "<s>", "</s>", "<unk>", "<|", "|>", "endoftext",
    "\u2581",
]
LONE_SURROGATES = ["\ud800", "\udfff", "\ud83d", "\ude00"]


def text_of(chars: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Text of `chars`, or runs of hard pieces mixed with short text of `chars`."""
    pieces = st.lists(st.sampled_from(HARD_PIECES) | st.text(chars, max_size=3), max_size=16)
    return st.one_of(st.text(chars, max_size=40), pieces.map("".join))


hard_text = text_of(st.characters(exclude_categories=["Cs"]))
# Only characters Python's own Unicode tables (14.0 for 3.11) assign: the `regex` module (Unicode
# 17) and tiktoken's Rust regex (Unicode 16) disagree on \p{L} for the letters of Unicode 17, so a
# trained BPE's tiktoken fast path and minbpe's encoder split those differently (a known bug:
# test_properties.test_unicode_17_letters_split_as_minbpe).
assigned_text = text_of(st.characters(exclude_categories=["Cs", "Cn"]))
with_surrogates = st.one_of(
    hard_text,
    st.lists(st.sampled_from(HARD_PIECES + LONE_SURROGATES), max_size=12).map("".join),
)
