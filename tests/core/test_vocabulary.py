"""The vocabulary: every token of a tokenizer as arrays, searched by text, hex and id."""

from __future__ import annotations

import numpy as np
import pytest

from tokexplorer.core.registry import get_builtin
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.analysis.vocabulary import Kind, Vocabulary, parse_hex


@pytest.fixture(scope="module")
def o200k():
    tok = get_builtin("o200k_base")
    return tok, Vocabulary.of(tok)


def slow_search(tok, vocab, needle: bytes) -> list[int]:
    """The reference: ask the tokenizer for each used id's bytes."""
    return [i for i in vocab.ids() if needle in tok.token_bytes(i)]


def test_every_token_and_its_kind(o200k):
    tok, vocab = o200k
    assert len(vocab) == tok.n_vocab == 200_019
    assert all(vocab.token_bytes(i) == tok.token_bytes(i) for i in range(0, 199_998, 997))
    assert vocab.ids("special").tolist() == sorted(tok.special_tokens.values())
    assert len(vocab.ids()) == 200_000  # 17 ids below <|endofprompt|> are unused
    not_utf8 = vocab.ids("not-utf8")
    assert len(not_utf8) > 1000
    for i in not_utf8[:50]:
        with pytest.raises(UnicodeDecodeError):
            tok.token_bytes(int(i)).decode("utf-8")


def test_search_by_text_hex_and_id(o200k):
    tok, vocab = o200k
    hello = tok.encode_ids(" hello")[0]
    assert hello in vocab.search("␣hello").tolist()
    assert hello in vocab.search(" HELLO").tolist()  # ASCII case ignored unless asked
    assert hello not in vocab.search(" HELLO", match_case=True).tolist()
    quote = vocab.search("e2 80 99", by="hex")
    assert quote.tolist() == slow_search(tok, vocab, "’".encode())
    assert tok.encode_ids("’")[0] in quote.tolist()
    assert vocab.search("1000, 42", by="id").tolist() == [42, 1000]
    assert vocab.search("199998", by="id").tolist() == []  # unused
    assert vocab.search("ing", match_case=True).tolist() == slow_search(tok, vocab, b"ing")


def test_matches_inside_one_token_only():
    from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer

    # "xa" + "aa": the joined bytes "xaaa" hold "aa" at 1 (across two tokens) and at 2 (inside "aa").
    vocab = Vocabulary.of(TiktokenTokenizer.from_ranks("toy", {b"x": 0, b"a": 1, b"xa": 2, b"aa": 3}, r"\S+"))
    assert vocab.search("aa").tolist() == [3]
    assert vocab.search("xaa").tolist() == []


def test_sort_by_length_and_count(o200k):
    tok, vocab = o200k
    counts = vocab.counts(tok.encode("the cat and the dog and the bird"))
    assert counts[tok.encode_ids(" the")[0]] == 2 and counts.sum() == 8
    by_count = vocab.order(vocab.ids(), "count", counts=counts, descending=True)
    assert by_count[0] == tok.encode_ids(" the")[0] or by_count[0] == tok.encode_ids(" and")[0]
    assert counts[by_count[:6]].tolist() == [2, 2, 1, 1, 1, 1]
    longest = vocab.order(vocab.ids(), "length", descending=True)[0]
    assert len(tok.token_bytes(int(longest))) == int(vocab.lengths.max()) == 128
    np.testing.assert_array_equal(vocab.order(np.array([5, 3, 9]), "id"), [5, 3, 9])


def test_sentencepiece_byte_pieces():
    tok = get_builtin("llama-sp")
    vocab = Vocabulary.of(tok)
    pieces = vocab.ids("byte-fallback")
    assert len(pieces) == 256 and all(tok.pieces[i].startswith("<0x") for i in pieces)
    assert vocab.kinds[pieces[0]] & Kind.BYTE_FALLBACK
    assert vocab.scores is not None and vocab.scores[29871] == tok.score(29871)
    hello = tok.encode_ids("hello")[0]  # "▁hell"
    assert hello in vocab.search("▁hell", match_case=True).tolist()


def test_bad_queries():
    assert parse_hex("E2-80-99") == b"\xe2\x80\x99"
    with pytest.raises(TokexplorerError, match="hex"):
        parse_hex("zz")
    vocab = Vocabulary.of(get_builtin("gpt2"))
    with pytest.raises(TokexplorerError, match="not in the vocabulary"):
        vocab.search("50257", by="id")
    with pytest.raises(TokexplorerError, match="not a token id"):
        vocab.search("ten", by="id")


def slow_next(ids: list[int], token_id: int, after: int) -> int | None:
    """The next occurrence read plainly: the first index past `after` holding the id, else the
    first from the start."""
    later = [i for i, t in enumerate(ids) if t == token_id and i > after]
    earlier = [i for i, t in enumerate(ids) if t == token_id]
    return (later or earlier or [None])[0]


@pytest.mark.parametrize("block", [1, 3, 1 << 18])
def test_find_in_text_finds_the_next_occurrence(o200k, monkeypatch, block):
    """"Find in text": each id's count and next occurrence (wrapping round) as a plain reading of
    the ids gives them, for ids that occur once, often, or never, searched a block at a time."""
    from tokexplorer.core.analysis import vocabulary
    from tokexplorer.core.analysis.vocabulary import Occurrences, next_occurrence

    monkeypatch.setattr(vocabulary, "SEARCH_BLOCK", block)
    tok, vocab = o200k
    encoding = tok.encode("the cat and the dog and the bird; the end " * 50 + "zebra")
    ids = encoding.id_array
    occ = vocab.occurrences(encoding)
    assert occ.counts.tolist() == vocab.counts(encoding).tolist()
    for token_id in sorted(set(ids.tolist())) + [0, 199_997, -1, len(vocab)]:
        for after in (-1, 0, 7, len(ids) // 2, len(ids) - 2, len(ids) - 1, len(ids) + 5):
            want = slow_next(ids.tolist(), token_id, after)
            assert occ.next_after(token_id, after) == want == next_occurrence(ids, token_id, after)
    with pytest.raises(TokexplorerError):
        Occurrences.of(np.array([3, 10]), 10)


@pytest.mark.parametrize("block", [5, 1 << 22])
@pytest.mark.parametrize("needle, match_case", [(b"the", True), (b"THE", False), (b" ", True), (b"\xe2\x80", True),
                                                (b"ing ", True), (b"zzzzzzzzzzz", True)])
def test_containing_in_blocks_is_the_slow_scan(monkeypatch, block, needle, match_case):
    """The search reads the vocabulary's bytes a block at a time (a crafted vocabulary's 60 MB,
    searched for a needle found everywhere, took 2.6 GB at once): blocks of 5 bytes cut needles
    and tokens everywhere, and give what a scan of every token gives."""
    from tokexplorer.core.analysis import vocabulary

    monkeypatch.setattr(vocabulary, "SEARCH_BLOCK", block)
    v = Vocabulary.of(get_builtin("gpt2"))
    fold = (lambda b: b) if match_case else bytes.lower
    want = [i for i in range(len(v)) if fold(needle) in fold(v.token_bytes(i)) and not v.kinds[i] & Kind.UNUSED]
    assert v.containing(needle, match_case=match_case).tolist() == want
