"""The encode trace by merge rule: the lecture's loop (lowest-ranked pair, every occurrence at
once), one line per rule applied, against the tokenizers' own encoders."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tokexplorer.core.analysis.encode_trace import trace_bytes
from tokexplorer.core.analysis.rule_trace import rules_at, trace_rules
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.training.bpe import train


def notebook_encode(text: str, merges: dict[tuple[int, int], int]) -> tuple[list[int], list[tuple[int, int]]]:
    """The lecture's encode loop, written out as the notebook writes it (get_stats, min by the
    merge's index, merge), returning the ids and the pairs in the order it merged them."""
    tokens, order = list(text.encode("utf-8")), []
    while len(tokens) >= 2:
        stats = Counter(zip(tokens, tokens[1:]))
        pair = min(stats, key=lambda p: merges.get(p, float("inf")))
        if pair not in merges:
            break
        idx, out, i = merges[pair], [], 0
        while i < len(tokens):
            if i < len(tokens) - 1 and (tokens[i], tokens[i + 1]) == pair:
                out.append(idx)
                i += 2
            else:
                out.append(tokens[i])
                i += 1
        tokens = out
        order.append(pair)
    return tokens, order


def test_twenty_merges_give_twenty_lines_where_the_occurrence_trace_gives_thousands(corpora):
    """As in the lecture: 20 merges learned on a text (vocab 276, minbpe's exact trainer), then
    the same text encoded: one line per merge rule, in the order learned, ending with the
    tokenizer's own ids, while the per-occurrence trace takes one step per merge done."""
    text = (corpora / "en/taylorswift.txt").read_text("utf-8")[:24_000]
    tok = train(text, 276)
    enc = tok.encode(text)
    trace = rules_at(tok, enc, 0, len(enc))
    assert len(trace.rules) == 20
    assert [r.new_id for r in trace.rules] == list(range(256, 276))
    assert [r.pair for r in trace.rules] == list(tok.merges)
    assert trace.final == enc.ids
    ids, order = notebook_encode(text, tok.merges)
    assert ids == enc.ids and order == [r.pair for r in trace.rules]
    steps = len(trace_bytes(tok, text.encode("utf-8")).steps)
    assert trace.occurrences == steps > 4000
    lengths = [len(trace.initial)] + [r.length for r in trace.rules]
    assert all(a - b == len(r.positions) for a, b, r in zip(lengths, lengths[1:], trace.rules))
    assert lengths[-1] == len(enc.ids)
    assert round(len(text.encode("utf-8")) / len(enc.ids), 2) > 1.2  # the lecture's ~1.27x


def test_positions_and_sequences_replay_the_loop():
    """Each rule's positions are where its pair stood before the pass; replaying them gives the
    loop's sequence after every pass (the minbpe docstring's example)."""
    tok = train("aaabdaaabac", 259)
    trace = trace_rules(tok, b"aaabdaaabac")
    assert [(r.pair, r.new_id, r.positions, r.length) for r in trace.rules] == [
        ((97, 97), 256, (0, 5), 9), ((256, 97), 257, (0, 4), 7), ((257, 98), 258, (0, 3), 5)]
    assert trace.sequence(1) == ([256, 97, 98, 100, 256, 97, 98, 97, 99],
                                 [b"aa", b"a", b"b", b"d", b"aa", b"a", b"b", b"a", b"c"])
    assert trace.sequence(3)[0] == trace.final == [258, 100, 258, 97, 99]
    data = json.loads(json.dumps(trace.to_dict()))
    assert data["rules"][0] == {"pair": [97, 97], "new_id": 256, "rank": 256, "bytes": "6161",
                                "positions": [0, 5], "length": 9}


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_tiktoken_ranks_by_rule_end_with_the_encoders_ids(name, corpora):
    """Over tiktoken's ranks (a pair's rank is its joined bytes'), every chunk of real text
    ends, by rule, with tiktoken's ids."""
    tok = get_builtin(name)
    text = (corpora / "code/cpython311_tokenize.py").read_text("utf-8")[:3000] + " 안녕하세요 👋🏽 naïve"
    enc = tok.encode(text, allowed_special="none")
    from tokexplorer.core.analysis.encode_trace import chunk_at

    i, chunks = 0, 0
    while i < len(enc):
        first, stop = chunk_at(tok, enc, i)
        trace = rules_at(tok, enc, first, stop)
        assert trace.final == enc.ids[first:stop], trace.chunk
        i, chunks = stop, chunks + 1
    assert chunks > 300


def test_gpt2_hello_by_rule():
    trace = trace_rules(get_builtin("gpt2"), b" hello")
    assert [(r.left, r.right, r.new_id, r.positions, r.length) for r in trace.rules] == [
        (b"h", b"e", 258, (1,), 5), (b"l", b"l", 297, (2,), 4), (b" ", b"he", 339, (0,), 3),
        (b" he", b"ll", 5968, (0,), 2), (b" hell", b"o", 23748, (0,), 1)]


def test_what_has_no_rules(monkeypatch):
    with pytest.raises(TokexplorerError, match="piece score"):
        trace_rules(get_builtin("llama-sp"), b" hello")
    tok = get_builtin("gpt2")
    enc = tok.encode("hi <|endoftext|>", allowed_special="all")
    with pytest.raises(TokexplorerError, match="special token"):
        rules_at(tok, enc, len(enc) - 1, len(enc))
    from tokexplorer.core.analysis import rule_trace

    monkeypatch.setattr(rule_trace, "MAX_RULE_WORK", 1000)  # a chunk past the work bound: refused, not run
    basic = train("ab" * 50 + "cd" * 50, 300)
    assert len(trace_rules(basic, b"ab" * 200).rules) > 1
    with pytest.raises(TokexplorerError, match="1,000 parts"):
        trace_rules(basic, b"ab" * 600)
