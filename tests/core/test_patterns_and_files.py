"""Split patterns (the encodings' own, a custom regex, a pathological one) and text files."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings, strategies as st
from tiktoken_ext import openai_public

from tokexplorer.core import patterns
from tokexplorer.core.encoding import uncovered
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.patterns import resolve_pattern, split, split_texts
from tokexplorer.core.files.textfile import NotUtf8Error, decode_text, read_text_file, write_atomic
from tokexplorer.core.tokenizer import TokexplorerError

# The GPT-4 pattern as printed in the lecture and in minbpe (before tiktoken's possessive form).
LECTURE_GPT4 = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"""


def test_named_patterns_are_tiktokens_own():
    source = openai_public.__file__
    text = open(source, encoding="utf-8").read()
    assert patterns.GPT2_SPLIT_PATTERN == openai_public.r50k_pat_str
    assert repr(patterns.GPT4_SPLIT_PATTERN)[1:-1] in text or patterns.GPT4_SPLIT_PATTERN in text
    for part in patterns.O200K_SPLIT_PATTERN.split("|"):
        assert part in text


# Letters of every case class, marks alone and after letters, digits of several scripts, symbols,
# spaces, tabs, line breaks, an astral emoji, apostrophes (the contractions).
TILING_ALPHABET = "aZǅʰ中\u0301\u093f5٣Ⅻ.,'!$ \t\r\n\u00a0\u2028😀-/"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=TILING_ALPHABET, max_size=30), st.sampled_from(sorted(patterns.TILING_PATTERNS)))
def test_tiling_patterns_leave_no_text_between_chunks(text, pattern):
    """What lets an encode skip the split that finds dropped text (a 50-150 ms hold of the
    interpreter lock on a book): the chunks of these patterns cover every character."""
    assert uncovered(split(text, pattern), len(text)) == []


@pytest.mark.parametrize("name", ["qwen2.5", "qwen3.6", "tekken"])
def test_open_model_encodes_keep_their_chunks_and_drop_nothing(name, corpora):
    text = (corpora / "unicode" / "blns.txt").read_text("utf-8")[:6000] + " don't 12345\r\n"
    enc = get_builtin(name).encode(text)
    assert enc.chunks == split(text, get_builtin(name).tiktoken_encoding._pat_str)
    assert enc.dropped == ()


def test_gpt4_pattern_splits_the_corpora_as_the_lecture_form(corpora):
    for rel in ["en/taylorswift.txt", "code/cpython311_tokenize.py", "multilingual/udhr/udhr_hin.txt",
                "unicode/blns.txt"]:
        text = (corpora / rel).read_text("utf-8")
        assert split(text, patterns.GPT4_SPLIT_PATTERN) == split(text, LECTURE_GPT4), rel


def test_gpt2_quirks_from_the_lecture():
    # Contractions are case-sensitive in GPT-2 ("'S" is not split off); GPT-4 ignores case.
    assert split_texts("HOW'S it's", patterns.GPT2_SPLIT_PATTERN) == ["HOW", "'", "S", " it", "'s"]
    assert split_texts("HOW'S it's", patterns.GPT4_SPLIT_PATTERN) == ["HOW", "'S", " it", "'s"]
    # Runs of spaces: all but the last space form a chunk; GPT-4 caps digit runs at three.
    assert split_texts("    hello world!!!", patterns.GPT2_SPLIT_PATTERN) == ["   ", " hello", " world", "!!!"]
    assert split_texts("1234567", patterns.GPT4_SPLIT_PATTERN) == ["123", "456", "7"]


def test_resolve_pattern():
    assert resolve_pattern("GPT4") == patterns.GPT4_SPLIT_PATTERN
    assert resolve_pattern(r"\w+") == r"\w+"
    with pytest.raises(TokexplorerError, match="invalid split pattern"):
        resolve_pattern("(unclosed")


def test_pathological_pattern_is_time_boxed():
    t0 = time.perf_counter()
    with pytest.raises(TokexplorerError, match="catastrophic backtracking"):
        split("a" * 40 + "!", r"(a|aa)+$")
    assert time.perf_counter() - t0 < 30


def test_text_decoding_rules(tmp_path):
    assert decode_text(b"\xef\xbb\xbfa\r\nb") == "a\r\nb"  # BOM dropped, CRLF kept
    assert decode_text("hé👋".encode("utf-16")) == "hé👋"  # UTF-16 with its BOM
    assert decode_text(b"caf\xe9", encoding="latin-1") == "café"
    with pytest.raises(NotUtf8Error) as info:
        decode_text(b"\xef\xbb\xbfok \xff", source="f.txt")
    assert info.value.offset == 6 and info.value.byte == 0xFF  # offset in the file, BOM included
    with pytest.raises(TokexplorerError, match="unknown encoding"):
        decode_text(b"x", encoding="klingon")


def test_read_text_file_errors(tmp_path):
    with pytest.raises(TokexplorerError, match="no such file"):
        read_text_file(tmp_path / "nope.txt")
    with pytest.raises(TokexplorerError, match="folder"):
        read_text_file(tmp_path)


def test_write_atomic_replaces_whole_or_not_at_all(tmp_path, monkeypatch):
    target = tmp_path / "out.txt"
    target.write_bytes(b"old")
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new"

    import os
    def failing_replace(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(TokexplorerError, match="disk full"):
        write_atomic(target, b"half")
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]  # no temp file left behind


@pytest.mark.parametrize("name", ["cl100k_base", "qwen2.5"])
def test_a_long_texts_ids_are_tiktokens_kept_as_one_array(name, corpora):
    """From ENCODE_PIECE characters on, the ids come as an array (no Python int per id for the
    allocator to keep arenas for): the same ids as tiktoken's own encode."""
    from tokexplorer.core.encoding import TokenIds
    from tokexplorer.core.backends.tiktoken_family import ENCODE_PIECE

    text = (corpora / "en" / "tinyshakespeare.txt").read_text("utf-8")[: ENCODE_PIECE + 1000] + "<|endoftext|>"
    tok = get_builtin(name)
    enc = tok.encode(text, allowed_special="all")
    assert isinstance(enc.ids, TokenIds)
    assert enc.ids.tolist() == tok.tiktoken_encoding.encode(text, allowed_special="all")
