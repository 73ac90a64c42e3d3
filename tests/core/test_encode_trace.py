"""The encode trace: a plain rank-by-rank BPE whose final ids must equal each tokenizer's own."""

from __future__ import annotations

import json

import pytest

from tokexplorer.core.training.bpe import train
from tokexplorer.core.analysis.encode_trace import MAX_TRACE_BYTES, Part, chunk_at, trace_at, trace_bytes, trace_pieces
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.training.sentencepiece import llama2_options, train_sentencepiece
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


def slow_trace(ranks: dict[bytes, int], chunk: bytes) -> list[tuple]:
    """The reference: rescan every adjacent pair per step, take the lowest rank, leftmost on ties.
    Returns (position, left bytes, right bytes, rank, sequence after the step) per step."""
    parts, steps = [bytes([b]) for b in chunk], []
    while True:
        best = None
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, i)
        if best is None:
            return steps
        rank, i = best
        left, right = parts[i], parts[i + 1]
        parts[i : i + 2] = [left + right]
        steps.append((i, left, right, rank, list(parts)))


@pytest.mark.parametrize("text", ["aaaaaaaaaaa", "    hello world!!! hello hello", "1234567890" * 3,
                                  "naïve 👋🏽 안녕", "\n\n\n    \t  x"])
def test_heap_merging_equals_the_rescanning_reference(text):
    """Every step (position, pair, rank) and the sequence after it, against the rescanning loop,
    on ties (runs of one byte), digits, spaces and multi-byte characters."""
    tok = get_builtin("cl100k_base")
    chunk = text.encode("utf-8")
    trace = trace_bytes(tok, chunk)
    expected = slow_trace(tok.mergeable_ranks, chunk)
    assert len(trace.steps) == len(expected)
    for k, (step, (position, left, right, rank, after)) in enumerate(zip(trace.steps, expected), 1):
        assert (step.position, step.left.bytes, step.right.bytes, step.rank) == (position, left, right, rank)
        assert step.new_id == tok.mergeable_ranks[left + right]
        assert [p.bytes for p in trace.sequence(k)] == after
        assert [p.id for p in trace.sequence(k)] == [tok.mergeable_ranks[b] for b in after]
    assert trace.sequence(0) == trace.initial == [Part(tok.mergeable_ranks[bytes([b])], bytes([b])) for b in chunk]


def test_long_chunks_trace_within_the_bound():
    """A chunk far over the old 2 KB limit: a Basic BPE's whole text, and a long run of spaces
    under cl100k_base (ties everywhere); the final ids equal the encoder's, and a page of the
    sequence is cheap to read."""
    tok = get_builtin("cl100k_base")
    spaces = b" " * 20_000
    trace = trace_bytes(tok, spaces)
    assert len(trace.steps) > 19_000 and trace.final == tok.encode_ids(" " * 20_000)
    firsts, stops, ids = trace.parts(len(trace.steps) // 2)
    page = trace.sequence(len(trace.steps) // 2, 100, 110)
    assert [p.id for p in page] == ids[100:110].tolist() and len(page) == 10
    text = "the quick brown fox jumps over the lazy dog. " * 200  # 9,000 bytes, one chunk for Basic
    basic = train(text, 300, pattern=None)
    enc = basic.encode(text)
    assert chunk_at(basic, enc, 0) == (0, len(enc))
    assert trace_at(basic, enc, 0).final == enc.ids
    with pytest.raises(TokexplorerError, match="65,536 bytes"):
        trace_bytes(tok, b"x" * (MAX_TRACE_BYTES + 1))


@pytest.mark.parametrize("chunk", [b" hello world", "naïve café 👋 ".encode() * 3, b"a" * 300, b"the " * 40])
def test_walk_shows_each_step_and_the_ids_around_it_as_the_whole_sequence_does(chunk):
    """`walk` (linear) against the slow reference: the sequence after every step rebuilt whole."""
    trace = trace_bytes(get_builtin("gpt2"), chunk)
    walked = list(trace.walk(3))
    assert len(walked) == len(trace.steps) > 0
    for k, (step, first, shown) in enumerate(walked):
        assert step == trace.steps[k]
        after = [p.id for p in trace.sequence(k + 1)]
        assert 0 <= first <= step.position < first + len(shown)
        assert shown == after[first:first + len(shown)]
        assert step.position - first == min(3, step.position)  # up to 3 parts before the merge
        assert len(shown) - (step.position - first) - 1 == min(3, len(after) - step.position - 1)


def test_json_of_a_long_chunk_grows_with_its_steps_not_their_square():
    """8,000 bytes of one letter: 6,000 steps; each lists the ids around its merge, not all."""
    from tokexplorer.core.analysis.encode_trace import AROUND, WHOLE_SEQUENCE

    trace = trace_bytes(get_builtin("gpt2"), b"a" * 8000)
    data = trace.to_dict()
    assert len(data["steps"]) == len(trace.steps) > 5000
    assert max(len(s["ids"]) for s in data["steps"]) == 2 * AROUND + 1
    last = data["steps"][-1]
    assert last["ids"] == [p.id for p in trace.sequence(len(trace.steps))][last["ids_from"]:][:len(last["ids"])]
    short = trace_bytes(get_builtin("gpt2"), b"ing").to_dict()  # a short chunk lists whole sequences
    assert all(s["ids_from"] == 0 for s in short["steps"]) and len(b"ing") <= WHOLE_SEQUENCE
