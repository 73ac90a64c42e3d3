"""Encoding with a trained BPE: tiktoken's fast path gives the reference encoder's ids."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokexplorer.core.backends.trained_bpe import BPETokenizer
from tokexplorer.core.training.bpe import train
from tokexplorer.core.patterns import GPT4_SPLIT_PATTERN
from tokexplorer.core.tokenizer import DisallowedSpecialError, TokexplorerError

from .. import reference_bpe as ref

EVAL_FILES = ["en/taylorswift.txt", "en/tinyshakespeare.txt", "multilingual/zh_hans_lunyu.txt",
              "code/cpython311_typing.py", "unicode/blns.txt", "unicode/emoji-test.txt"]


@pytest.fixture(scope="module")
def swift(corpora) -> BPETokenizer:
    text = (corpora / "en/taylorswift.txt").read_text("utf-8")
    return train(text, 1024, pattern="gpt4", special_tokens=["<|endoftext|>"])


@pytest.mark.parametrize("rel", EVAL_FILES)
def test_fast_path_equals_reference_encoder(corpora, swift, rel):
    assert swift.fast_path and swift.fast_path_note is None
    text = (corpora / rel).read_text("utf-8")[:20_000]
    assert swift.encode_ids(text, allowed_special="none") == ref.encode(text, swift.merges, GPT4_SPLIT_PATTERN)


@given(st.text(alphabet=st.sampled_from("aebt h\n'é😀1"), max_size=40))
def test_python_encoder_equals_reference_on_random_chunks(swift, text):
    data = text.encode("utf-8")
    assert swift.encode_chunk(data) == ref.encode_chunk(data, swift.merges)
    assert swift.encode_ids(text, allowed_special="none") == ref.encode(text, swift.merges, GPT4_SPLIT_PATTERN)


def test_basic_tokenizer_encodes_as_reference(corpora):
    text = (corpora / "en/taylorswift.txt").read_text("utf-8")[:30_000]
    tok = train(text, 400)
    assert not tok.fast_path and "Basic" in tok.fast_path_note
    sample = (corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:5_000]
    enc = tok.encode(sample)
    assert enc.ids == ref.encode(sample, tok.merges, None)
    assert b"".join(enc.token_bytes) == sample.encode() and tok.decode(enc.ids) == sample


def test_rank_and_pair_disagreement_is_detected_and_falls_back():
    """'abc' was learned as ("ab", "c"); "bc" is learned before "ab". Merging by pair gives
    a + bc and stops (no merge (a, bc)); merging by rank joins a + bc into "abc" because that
    string is a token. The tokenizer must notice and keep the pair semantics."""
    merges = {(98, 99): 256, (97, 98): 257, (257, 99): 258}
    tok = BPETokenizer(merges, GPT4_SPLIT_PATTERN)
    assert not tok.fast_path and "258" in tok.fast_path_note
    assert tok.encode("abc").ids == ref.encode("abc", merges, GPT4_SPLIT_PATTERN) == [97, 256]
    harmless = BPETokenizer({(97, 98): 256, (98, 99): 257, (256, 99): 258}, GPT4_SPLIT_PATTERN)
    assert harmless.fast_path  # two readings of "abc", but both encoders agree


def test_trace_shows_each_merge_in_order(swift):
    steps = swift.trace(" Taylor")
    assert steps and steps[-1].ids == swift.encode_chunk(" Taylor".encode())
    ranks = [s.new_id for s in steps]
    assert ranks == sorted(ranks)
    assert all(swift.merges[s.pair] == s.new_id for s in steps)


def test_special_tokens_policy(swift):
    text = "hi<|endoftext|>"
    with pytest.raises(DisallowedSpecialError):
        swift.encode(text)
    assert swift.encode(text, allowed_special="all").ids[-1] == 1023
    assert 1023 not in swift.encode(text, allowed_special="none").ids
    basic = BPETokenizer({(104, 105): 256}, None, {"<|end|>": 257})
    enc = basic.encode("hi<|end|>hi", allowed_special="all")
    assert enc.ids == [256, 257, 256] and list(enc.special_mask) == [False, True, False]


def test_decode_and_errors(swift):
    text = "Taylor Swift 🎸 — ünïcödé"
    assert swift.decode(swift.encode(text).ids) == text
    with pytest.raises(TokexplorerError, match="not in"):
        swift.decode([5000])
    with pytest.raises(TokexplorerError, match="corrupt"):
        BPETokenizer({(97, 98): 300}, None)
    with pytest.raises(TokexplorerError, match="already a byte or merged token"):
        BPETokenizer({(97, 98): 256}, None, {"<|x|>": 256})
