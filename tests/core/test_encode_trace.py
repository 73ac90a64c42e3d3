"""The encode trace: a plain rank-by-rank BPE whose final ids must equal each tokenizer's own."""

from __future__ import annotations

import json

import pytest

from tokexplorer.core.bpe_training import train
from tokexplorer.core.encode_trace import MAX_TRACE_BYTES, chunk_at, trace_at, trace_bytes, trace_pieces
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.sentencepiece_training import llama2_options, train_sentencepiece
from tokexplorer.core.tokenizer import TokexplorerError


def test_gpt2_hello_golden():
    """GPT-2 on " hello": h+e (258), l+l (297), " "+he (339), " he"+ll (5968), " hell"+o (23748).

    Each step takes the pair of lowest rank; 258 < 297 < 339 < 5968 < 23748, so the order is the
    ranks' order, and the last step leaves the one token tiktoken gives."""
    tok = get_builtin("gpt2")
    trace = trace_bytes(tok, b" hello")
    assert [(s.left.bytes, s.right.bytes, s.rank) for s in trace.steps] == [
        (b"h", b"e", 258), (b"l", b"l", 297), (b" ", b"he", 339), (b" he", b"ll", 5968), (b" hell", b"o", 23748)]
    assert [p.bytes for p in trace.sequence(2)] == [b" ", b"he", b"ll", b"o"]
    assert trace.final == tok.encode_ids(" hello") == [23748]


def _chunks_agree(tok, text: str) -> int:
    """Trace every chunk of the text; each trace's final ids equal the encoding's. Returns how many."""
    enc = tok.encode(text, allowed_special="none")
    i, traced = 0, 0
    while i < len(enc):
        first, stop = chunk_at(tok, enc, i)
        assert first <= i < stop
        trace = trace_at(tok, enc, i)
        assert trace.final == enc.ids[first:stop], trace.chunk
        traced += 1
        i = stop
    return traced


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base", "llama-sp"])
def test_trace_ends_with_the_tokenizers_ids(name, corpora):
    tok = get_builtin(name)
    text = (corpora / "code/cpython311_tokenize.py").read_text("utf-8")[:6000]
    text += (corpora / "multilingual/udhr/udhr_kor.txt").read_text("utf-8")[:1500]
    text += "    hello world!!! 👋🏽 naïve 𝕏 <|endoftext|>\n"
    assert _chunks_agree(tok, text) > 100


def test_trained_bpe_and_sentencepiece_traces(corpora):
    text = (corpora / "en/taylorswift.txt").read_text("utf-8")[:30_000]
    assert _chunks_agree(train(text, 400, pattern="gpt4"), text[:3000]) > 100
    assert _chunks_agree(train(text, 300, pattern=None), text[:500]) == 1  # Basic: one chunk
    sp = train_sentencepiece(text, llama2_options(500))
    assert _chunks_agree(sp, text[:3000]) > 100


def test_sentencepiece_byte_fallback_is_the_last_step():
    sp = get_builtin("llama-sp")
    trace = trace_pieces(sp, " 안녕하세요")
    assert trace.fallback == ["녕"]  # not a piece of llama-sp: its three UTF-8 bytes
    assert trace.final == sp.encode_ids("안녕하세요")


def test_what_cannot_be_traced(corpora):
    with pytest.raises(TokexplorerError, match="unigram"):
        unigram = train_sentencepiece("hello world\nhello there\n" * 50,
                                      llama2_options(12, "unigram", byte_fallback=False))
        trace_pieces(unigram, "hello")
    tok = get_builtin("gpt2")
    enc = tok.encode("hi <|endoftext|>", allowed_special="all")
    with pytest.raises(TokexplorerError, match="special token"):
        trace_at(tok, enc, len(enc) - 1)
    with pytest.raises(TokexplorerError, match="up to"):
        trace_bytes(tok, b" " * (MAX_TRACE_BYTES + 1))


def test_trace_json():
    data = json.loads(json.dumps(trace_bytes(get_builtin("gpt2"), b"ing").to_dict()))
    assert data["initial"] == [72, 77, 70] and data["final"] == [278]
    assert [s["ids"] for s in data["steps"]] == [[259, 70], [278]]
