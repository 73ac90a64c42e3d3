"""Incremental re-tokenization equals a full encode of the edited text, for every tokenizer.

The oracle is the tokenizer's own `encode` of the whole new text: ids, token bytes, spans, flags and
chunks must be identical after every edit, and `changed` must cover every token that is not the
old token at the same place (before the edit) or the old token shifted (after it).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokexplorer.core.backends.trained_bpe import BPETokenizer
from tokexplorer.core.training.bpe import train
from tokexplorer.core.encoding import Encoding
from tokexplorer.core.incremental.encoder import (
    LOCAL_PATTERNS,
    MINBPE_GPT2_PATTERN,
    MINBPE_GPT4_PATTERN,
    IncrementalEncoder,
    text_edit,
)
from tokexplorer.core.patterns import GPT4_SPLIT_PATTERN, split
from tokexplorer.core.registry import builtin_names, get_builtin
from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer
from tokexplorer.core.tokenizer import DisallowedSpecialError, TokexplorerError, clean_text

# Pieces that exercise the split patterns' alternatives and their lookahead: whitespace runs
# before words and at the end (\s+(?!\S), \s++$), newlines, contractions, digit runs, punctuation,
# combining marks, astral characters, CJK (with the kana punctuation DeepSeek's split sees), special
# and added-token text and fragments of it, and SentencePiece's own space mark.
PIECES = [
    " ", "  ", "   ", "\n", "\n\n", "\t", "\r\n", " \n", "\u00a0", "\u3000", "\x85", "\x1c", "\u2028", "\x0b",
    "      ", "\n    ",
    "a", "Z", "r", "e", "hello", "World", "ABC", "'s", "'re", "'r", "'", "'LL",
    "1", "12", "12345", ".", ",", "!?", "--", "/", "\"",
    "é", "e\u0301", "\u0301", "👋", "𝕏", "𠀀", "🇺🇳", "中文", "ｱｲｳ",
    "<|endoftext|>", "<|fim_prefix|>", "<s>", "</s>", "<unk>", "<|", "|>", "endoftext", "<",
    "\u2581", "ア・イ", "ー", "3中", "<｜User｜>", "<｜end▁of▁sentence｜>",
]
texts = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)
inserts = st.one_of(texts, st.lists(st.sampled_from(PIECES + ["\ud83d"]), max_size=3).map("".join))


@pytest.fixture(scope="module", params=builtin_names())
def builtin(request):
    """Every built-in (the shared fixture's four, and Qwen, Tekken and DeepSeek): each family's
    incremental path is checked against its own full encode."""
    from tokexplorer.core.registry import get_builtin

    return get_builtin(request.param)


def tokens(enc: Encoding) -> list[tuple[int, tuple[int, int]]]:
    return list(zip(enc.ids, enc.spans))


def assert_same(got: Encoding, expected: Encoding) -> None:
    assert got.text == expected.text
    assert got.ids == expected.ids
    assert list(got.token_bytes) == list(expected.token_bytes)
    assert got.spans == expected.spans
    assert got.flags.tolist() == expected.flags.tolist()
    assert got.chunks == expected.chunks
    assert got.stats() == expected.stats()


def assert_changed_covers(old: Encoding, new: Encoding, edit: tuple[int, int, int], changed) -> None:
    """Every new token outside `changed` is an old token: the same one at the same place wholly
    before the edit, or the same one shifted wholly after the inserted text."""
    start, end, delta = edit
    assert changed[0] <= start <= end <= changed[1]
    o, n = tokens(old), tokens(new)
    prefix = 0
    while prefix < min(len(o), len(n)) and o[prefix] == n[prefix] and n[prefix][1][1] <= start:
        prefix += 1
    suffix = 0
    while suffix < min(len(o), len(n)):
        (oid, (os, oe)), (nid, (ns, ne)) = o[-1 - suffix], n[-1 - suffix]
        if not (oid == nid and (os + delta, oe + delta) == (ns, ne) and ns >= end):
            break
        suffix += 1
    outside = [i for i, (_, (s, e)) in enumerate(n) if not changed[0] <= s <= e <= changed[1]]
    need_prefix = max((i + 1 for i in outside if n[i][1][0] < changed[0]), default=0)
    need_suffix = max((len(n) - i for i in outside if n[i][1][0] >= changed[0]), default=0)
    assert need_prefix <= prefix and need_suffix <= suffix
    assert need_prefix + need_suffix <= min(len(o), len(n))


def run_edits(tok, text: str, policy, data) -> None:
    """Apply random edits, checking each against a full encode."""
    if policy is None:
        text = text.replace("<", "")  # the default policy refuses special-token text
    inc = IncrementalEncoder(tok, text, allowed_special=policy)
    assert_same(inc.encoding, tok.encode(text, allowed_special=policy))
    for _ in range(data.draw(st.integers(1, 6), label="edits")):
        old = inc.encoding
        start = data.draw(st.integers(0, len(old.text)), label="start")
        removed = data.draw(st.integers(0, min(6, len(old.text) - start)), label="removed")
        inserted = data.draw(inserts, label="inserted")
        new_text = clean_text(old.text[:start] + inserted + old.text[start + removed :])
        try:
            expected = tok.encode(new_text, allowed_special=policy)
        except DisallowedSpecialError as exc:
            with pytest.raises(DisallowedSpecialError) as raised:
                inc.edit(start, removed, inserted)
            assert (raised.value.token, raised.value.position) == (exc.token, exc.position)
            assert inc.encoding is old
            continue
        enc, changed = inc.edit(start, removed, inserted)
        assert_same(enc, expected)
        assert inc.encoding is enc
        end = start + len(clean_text(inserted))
        assert_changed_covers(old, enc, (start, end, len(new_text) - len(old.text)), changed)


@given(text=texts, policy=st.sampled_from(["all", "none", None]), data=st.data())
def test_edits_equal_a_full_encode(builtin, text, policy, data):
    assert IncrementalEncoder(builtin).is_incremental
    run_edits(builtin, text, policy, data)


def toy_tokenizer(pattern: str) -> TiktokenTokenizer:
    """Bytes plus a few merges, with the given split pattern and one special token."""
    ranks = {bytes([b]): b for b in range(256)}
    for merge in [b"he", b"ll", b"hell", b"hello", b" w", b"  ", b"12", b"\n\n", b"'s", b"\xf0\x9f"]:
        ranks[merge] = len(ranks)
    return TiktokenTokenizer.from_ranks("toy", ranks, pattern, {"<|endoftext|>": len(ranks)})


@pytest.mark.parametrize(
    "pattern", [MINBPE_GPT2_PATTERN, MINBPE_GPT4_PATTERN], ids=["minbpe-gpt2", "minbpe-gpt4"]
)
@given(text=texts, data=st.data())
def test_minbpe_patterns_are_incremental(pattern, text, data):
    tok = toy_tokenizer(pattern)
    assert pattern in LOCAL_PATTERNS and IncrementalEncoder(tok).is_incremental
    run_edits(tok, text, "all", data)


@pytest.fixture(scope="module")
def trained_bpe(corpora) -> BPETokenizer:
    text = (corpora / "en/taylorswift.txt").read_text("utf-8")[:20_000]
    return train(text, 400, pattern="gpt4", special_tokens=["<|endoftext|>"])


@given(text=texts, data=st.data())
def test_trained_bpe_is_incremental(trained_bpe, text, data):
    assert trained_bpe.fast_path and IncrementalEncoder(trained_bpe).is_incremental
    run_edits(trained_bpe, text, "all", data)


@given(text=texts, data=st.data())
def test_bpe_on_its_python_encoder_is_incremental(text, data):
    # "abc" reads differently by rank and by pair, so this one encodes without tiktoken.
    merges = {(98, 99): 256, (97, 98): 257, (257, 99): 258, (32, 97): 259}
    tok = BPETokenizer(merges, GPT4_SPLIT_PATTERN, {"<|endoftext|>": 260})
    assert not tok.fast_path and IncrementalEncoder(tok).is_incremental
    run_edits(tok, text + "abc", "all", data)


@given(text=texts, data=st.data())
def test_custom_pattern_falls_back_to_full_encode(text, data):
    tok = toy_tokenizer(r"\S+(?=\s)|\S+|\s+")
    assert not IncrementalEncoder(tok).is_incremental
    run_edits(tok, text, "all", data)


@given(old=texts, new=texts)
def test_update_finds_the_edit(builtin, old, new):
    inc = IncrementalEncoder(builtin, old, allowed_special="all")
    enc, changed = inc.update(new)
    assert_same(enc, builtin.encode(new, allowed_special="all"))
    start, removed, inserted = text_edit(old, new)
    assert old[:start] + inserted + old[start + removed :] == new


@pytest.mark.parametrize(
    "old, new",
    [("", ""), ("", "ab"), ("ab", ""), ("abc", "abc"), ("aaa", "aaaa"), ("x👋y", "x👋👋y"),
     ("a" * 5000 + "b", "a" * 5000 + "cb"), ("𝕏" * 3000, "𝕏" * 2999)],
)
def test_text_edit(old, new):
    start, removed, inserted = text_edit(old, new)
    assert old[:start] + inserted + old[start + removed :] == new
    assert start == len(os.path.commonprefix([old, new]))  # the whole common prefix is kept
    if old == new:
        assert (removed, inserted) == (0, "")


# --- deterministic cases ----------------------------------------------------------------------


def check_edit(tok, text: str, start: int, removed: int, inserted: str, policy="all"):
    inc = IncrementalEncoder(tok, text, allowed_special=policy)
    old = inc.encoding
    enc, changed = inc.edit(start, removed, inserted)
    assert_same(enc, tok.encode(enc.text, allowed_special=policy))
    delta = len(enc.text) - len(text)
    assert_changed_covers(old, enc, (start, start + len(inserted), delta), changed)
    return enc, changed


@pytest.mark.parametrize(
    "text, start, removed, inserted",
    [
        ("hello world", 0, 0, "Oh, "),  # at the start
        ("hello world", 11, 0, "!"),  # at the end
        ("hello world", 0, 11, ""),  # delete everything
        ("", 0, 0, "hello 👋"),  # into nothing
        ("a   ", 4, 0, "b"),  # trailing whitespace: \s++$ becomes \s+(?!\S) + " b"
        ("a   b", 4, 1, ""),  # and back
        ("x" + " " * 50 + "y", 51, 1, ""),  # a long run before a word loses the word
        ("a\n\nb", 3, 1, " "),  # the chunk two before the edit looked ahead into it
        ("\n" + " " * 10 + "x", 11, 1, ""),  # \s*[\r\n] ended 10 before the edit, \s++$ now wins
        ("ab'r", 4, 0, "e"),  # o200k: "ab" read two characters past its end for "'re"
        ("don't stop", 4, 1, "T"),  # contractions
        ("I'VE 12345 apples", 8, 0, "6"),  # digit groups of three re-align
        ("ab<|endoftext|>cd", 7, 1, ""),  # break a special token
        ("ab<|endoftext|>cd", 2, 0, "<|endoftext|>"),  # add one before another
        ("ab<|endoftext>cd", 14, 0, "|"),  # complete one
        ("hi 👋 there", 4, 0, "👋"),  # astral characters, partial UTF-8 tokens
        ("line one\nline two\n", 9, 0, "\n"),  # SentencePiece: a new line
        ("line one\nline two", 8, 1, ""),  # SentencePiece: join two lines
        ("<s>hello\n world", 3, 0, " "),  # SentencePiece: a part after a special token
        ("<s> ", 0, 1, ""),  # SentencePiece: "s> " no longer starts a part at the space
        ("one two  three four", 9, 1, "X"),  # SentencePiece: words around the edit
        ("one two  three four", 7, 0, "<s>"),  # SentencePiece: the space now starts a part
    ],
)
@pytest.mark.parametrize("policy", ["all", "none"])  # "none": no special-token margin either
def test_edit_cases(builtin, text, start, removed, inserted, policy):
    check_edit(builtin, text, start, removed, inserted, policy)


def test_a_normalised_token_that_loses_text_is_changed():
    """Qwen reads U+0340 as U+0300 (NFC): its "0" token covered "0\u0340"; deleting the U+0340
    leaves the same id at the same start, covering less (found by test_properties)."""
    from tokexplorer.core.registry import get_builtin

    check_edit(get_builtin("qwen2.5"), "00\u0340", 2, 1, "")


def test_refused_special_token_raises_and_keeps_state(builtin):
    token = next(t for t in builtin.special_tokens if t.startswith("<") and len(t) > 3)
    text = "hello " + token[:-1] + " world"
    inc = IncrementalEncoder(builtin, text)  # the default policy: refuse special-token text
    old = inc.encoding
    with pytest.raises(DisallowedSpecialError) as raised:
        inc.edit(6 + len(token) - 1, 0, token[-1])
    assert (raised.value.token, raised.value.position) == (token, 6)
    assert inc.encoding is old and inc.text == text
    enc, _ = inc.edit(0, 0, "oh ")  # still usable
    assert_same(enc, builtin.encode("oh " + text))


def test_out_of_range_edit_is_an_error(builtin):
    inc = IncrementalEncoder(builtin, "abc")
    for start, removed in [(-1, 0), (4, 0), (2, 2), (0, -1)]:
        with pytest.raises(TokexplorerError, match="out of range"):
            inc.edit(start, removed, "x")
    assert inc.text == "abc"


def test_lone_surrogates_become_replacement_characters(builtin):
    inc = IncrementalEncoder(builtin, "ab")
    enc, changed = inc.edit(1, 0, "\ud83d")
    assert enc.text == "a\ufffdb" and changed[0] <= 1 < 2 <= changed[1]
    assert_same(enc, builtin.encode("a\ufffdb"))


def test_update_keeps_the_text_it_is_given(builtin):
    """The server keeps an encoder per recent tokenizer of a document; each brought up to date by
    `update` must hold the document's one text, not a copy of its own (a 1 MB text with an emoji
    is 4 MB a copy)."""
    inc = IncrementalEncoder(builtin, "hello 👋 world " * 200)
    new = "hello, 👋 world " + "hello 👋 world " * 199
    enc, _ = inc.update(new)
    assert enc.text is new
    assert_same(enc, builtin.encode(new))
    enc, _ = inc.update(new)  # (no change)
    assert enc.text is new
    lone = "hello \ud83d world"  # a lone surrogate: the cleaned text, not the given one
    enc, _ = inc.update(lone)
    assert enc.text == "hello \ufffd world"


def test_the_text_after_the_edit_given_is_taken_as_it_is(builtin):
    """A caller that holds the edited text already (the server's copy) hands it over: the
    Encoding's text is that very object; one not clean, or of the wrong length, is put together."""
    inc = IncrementalEncoder(builtin, "hello world")
    given = "hello, world"
    enc, _ = inc.edit(5, 0, ",", new_text=given)
    assert enc.text is given
    assert_same(enc, builtin.encode(given))
    enc, _ = inc.edit(5, 1, "\ud83d", new_text="hello\ud83d world")  # (a lone surrogate: cleaned)
    assert enc.text == "hello\ufffd world"
    enc, _ = inc.edit(0, 1, "j", new_text="jello\ufffd world!")  # (one too long: not this edit's)
    assert enc.text == "jello\ufffd world"
    assert_same(enc, builtin.encode("jello\ufffd world"))


def test_edits_on_a_real_corpus_stay_local(builtin, corpora, tricky_strings):
    text = (corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:60_000]
    text += "".join(s for _, s in tricky_strings[:40])
    inc = IncrementalEncoder(builtin, text, allowed_special="all")
    positions = [0, 1, 29_999, 30_000, 45_678, 59_999, len(text) // 2, len(text) - 1, len(text)]
    for i, pos in enumerate(positions):
        pos = min(pos, len(inc.text))
        removed = min(i % 3, len(inc.text) - pos)
        inserted = ["x", " ", "\n", "'s", "👋", ""][i % 6]
        old = inc.encoding
        enc, changed = inc.edit(pos, removed, inserted)
        assert_same(enc, builtin.encode(enc.text, allowed_special="all"))
        assert_changed_covers(old, enc, (pos, pos + len(inserted), len(enc.text) - len(old.text)), changed)
        assert changed[1] - changed[0] < 200, "an edit in running text should change a few tokens"


def test_a_window_too_large_is_encoded_whole(builtin):
    """Inserting a digit before 40,000 digits regroups every group of three (cl100k, o200k)."""
    check_edit(builtin, "1" * 40_000 + " end", 0, 0, "2")
    check_edit(builtin, "", 0, 0, "word " * 20_000)  # a paste into an empty document


@pytest.mark.parametrize("text, start, removed, inserted", [
    ("a" * 30_000, 15_000, 0, "b"),  # one chunk of 30,000 letters
    ("x" + "ab" * 15_000 + " " * 12_000 + "y", 20_000, 1, "q"),  # and a long run of spaces after it
    ("x" + " " * 12_000 + "y", 6_000, 0, " "),  # spaces before a word: alone, the run would be one chunk
    ("x" + " " * 12_000, 6_000, 0, "\t"),  # spaces at the end of the text
    ("é" * 12_000 + "1" * 12_000, 100, 1, "e\u0301"),  # letters then digits
])
def test_long_chunks_equal_a_full_encode(builtin, text, start, removed, inserted):
    """An edit in or beside a chunk of 10,000 characters or more: the ids stay a full encode's."""
    assert len(text) > 10_000
    check_edit(builtin, text, start, removed, inserted)


def test_chunks_are_precomputed(builtin):
    inc = IncrementalEncoder(builtin, "hello world")
    enc, _ = inc.edit(5, 0, ",")
    if builtin.family == "sentencepiece":
        assert enc.chunks is None
    else:
        assert "_chunk_spans" in enc.__dict__ and enc.chunks == [(0, 5), (5, 6), (6, 12)]


def test_a_huge_text_is_split_in_pieces_as_a_whole(builtin, corpora, tricky_strings, monkeypatch):
    """The chunks the encoder keeps for its windows, found piece by piece, are the whole text's."""
    from tokexplorer.core import patterns

    from .test_builtins import mixed_text

    text = mixed_text(corpora, tricky_strings)
    expected = IncrementalEncoder(builtin, text, allowed_special="all").encoding
    monkeypatch.setattr(patterns, "PIECE_SIZE", 2_000)
    inc = IncrementalEncoder(builtin, text, allowed_special="all")
    assert_same(inc.encoding, expected)
    if expected.chunks is not None:
        assert inc.encoding.chunks == expected.chunks == builtin.encode(text, allowed_special="all").chunks
    enc, _ = inc.edit(len(text) // 2, 1, "x\n")
    assert_same(enc, builtin.encode(enc.text, allowed_special="all"))


def test_a_split_beside_the_encode_gives_the_same_state(builtin, corpora, monkeypatch):
    """A long text's chunks are found in a second thread while the library encodes: the state
    (ids, chunks) and the next edit are those of the split done after the encode."""
    from tokexplorer.core.incremental import encoder as incremental
    from tokexplorer.core.incremental import regex_rule

    text = (corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:20_000] + "<|endoftext|> 12345 é\r\n"
    monkeypatch.setattr(incremental, "OVERLAP_TEXT", 10 ** 9)
    after = IncrementalEncoder(builtin, text, allowed_special="all")
    monkeypatch.setattr(incremental, "OVERLAP_TEXT", 1_000)
    beside = IncrementalEncoder(builtin, text, allowed_special="all")
    assert_same(beside.encoding, after.encoding)
    assert beside.encoding.chunks == after.encoding.chunks
    if type(beside._local) is regex_rule.RegexRule:
        assert beside._state.chunk_bounds is not None
        assert np.array_equal(beside._state.chunk_bounds, after._state.chunk_bounds)
    for inc in (after, beside):
        enc, _ = inc.edit(10_000, 3, "x\n")
        assert_same(enc, builtin.encode(enc.text, allowed_special="all"))


def test_a_long_texts_tokens_do_not_wait_for_its_split(corpora, monkeypatch):
    """The encoder of a long text returns its tokens while the split for its chunks still runs;
    the chunks and the next edit wait for it, and are the split's; a split that fails raises
    once where the chunks are asked for, and from then on they are found the slow way."""
    import threading

    from tokexplorer.core.incremental import encoder as incremental
    from tokexplorer.core.incremental import regex_rule

    tok = get_builtin("cl100k_base")
    text = (corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:20_000]
    monkeypatch.setattr(incremental, "OVERLAP_TEXT", 1_000)
    release, bounds = threading.Event(), regex_rule.RegexRule.bounds

    def held(self, *args, **kwargs):
        assert release.wait(30)
        return bounds(self, *args, **kwargs)

    monkeypatch.setattr(regex_rule.RegexRule, "bounds", held)
    inc = IncrementalEncoder(tok, text)  # would wait 30 s for the split, and fail, if it joined it
    assert inc.encoding.ids == tok.encode(text).ids
    release.set()
    assert inc.encoding.chunks == [(a, b) for a, b in split(text, tok.split_pattern)]
    enc, _ = inc.edit(10_000, 3, "x\n")
    assert_same(enc, tok.encode(enc.text))

    def failing(self, *args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(regex_rule.RegexRule, "bounds", failing)
    inc = IncrementalEncoder(tok, text)
    assert inc.encoding.ids == tok.encode(text).ids
    with pytest.raises(MemoryError):
        inc.encoding.chunk_arrays()
    assert inc.encoding.chunks == [(a, b) for a, b in split(text, tok.split_pattern)]  # the library's split
    with pytest.raises(MemoryError):
        inc.edit(10, 0, "x")
    monkeypatch.setattr(regex_rule.RegexRule, "bounds", bounds)
    enc, _ = inc.edit(10, 0, "x")  # the text encoded whole, and split again
    assert_same(enc, tok.encode(enc.text))


def test_chunks_that_do_not_tile_the_text_mean_whole_encodes(monkeypatch):
    """Should a split leave text out (no pattern of the fast path does), the encoder keeps no
    chunk bounds, edits encode the whole text, and the chunks come from the tokenizer's own
    split: correct, not fast."""
    import regex

    from tokexplorer.core.incremental import encoder as incremental

    tok = get_builtin("gpt2")
    text = "hello world, again " * 100
    inc = IncrementalEncoder(tok, text)
    monkeypatch.setattr(inc._local, "_regex", regex.compile("[a-z]+"))  # skips spaces and commas
    for overlap in (10 ** 9, 100):  # split after the encode, and beside it
        monkeypatch.setattr(incremental, "OVERLAP_TEXT", overlap)
        inc.reset(text)
        assert inc._state.chunk_bounds is None
        assert inc.encoding.chunks == split(text, tok.split_pattern)
        enc, _ = inc.edit(5, 0, "!")
        assert_same(enc, tok.encode(enc.text))


def test_views_asking_for_chunks_at_once_all_wait_for_the_one_split(corpora, monkeypatch):
    """Two threads (the chunk view's job, the trace's) asking for a long text's chunks while its
    split runs both get the split's arrays: neither splits the text again."""
    import threading

    from tokexplorer.core.incremental import encoder as incremental
    from tokexplorer.core.incremental import regex_rule

    text = (corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:20_000]
    monkeypatch.setattr(incremental, "OVERLAP_TEXT", 1_000)
    release, bounds = threading.Event(), regex_rule.RegexRule.bounds
    monkeypatch.setattr(regex_rule.RegexRule, "bounds",
                        lambda self, *a, **k: release.wait(30) and bounds(self, *a, **k))
    enc = IncrementalEncoder(get_builtin("gpt2"), text).encoding
    got: list = []
    askers = [threading.Thread(target=lambda: got.append(enc.chunk_arrays())) for _ in range(2)]
    for t in askers:
        t.start()
    release.set()
    for t in askers:
        t.join(30)
    assert len(got) == 2 and got[0][0].base is not None and got[0][0].base is got[1][0].base
    assert [(a, b) for a, b in zip(*(x.tolist() for x in got[1]))] == split(text, get_builtin("gpt2").split_pattern)


def test_a_split_nothing_wants_stops(corpora, monkeypatch):
    """Once its encoder and Encoding are gone (another text, another tokenizer), the split
    still running for them stops at its next piece instead of running on through the text."""
    import gc
    import threading

    from tokexplorer.core.incremental import encoder as incremental
    from tokexplorer.core.incremental import regex_rule

    text = (corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:20_000]
    monkeypatch.setattr(incremental, "OVERLAP_TEXT", 1_000)
    monkeypatch.setattr(regex_rule, "SPLIT_PIECE", 100)  # 200 pieces
    release, pieces, real = threading.Event(), [], regex_rule.piece_spans

    def counted(*args, **kwargs):
        for piece in real(*args, **kwargs):
            assert release.wait(30)
            pieces.append(piece)
            yield piece

    monkeypatch.setattr(regex_rule, "piece_spans", counted)
    inc = IncrementalEncoder(get_builtin("gpt2"), text)
    (thread,) = [t for t in threading.enumerate() if t.name == "tokexplorer-split"]
    del inc
    gc.collect()
    release.set()
    thread.join(30)
    assert not thread.is_alive() and len(pieces) <= 1


@pytest.mark.parametrize(
    "text, start, removed, inserted",
    [
        ("abc 123456 def", 6, 0, "7"),  # digit groups regroup after the edit
        ("x中文y", 2, 0, "1"),  # a digit splits a CJK run
        ("アイ・ウ", 2, 1, ""),  # the regex splits a kana run further
        ("a" * 3000 + " " * 2000 + "b", 10, 0, "c"),  # no segment end near: the search looks further
        ("a " + " " * 3000 + "\n" * 3 + "x", 1, 0, "b"),  # a whitespace run past the first look
        ("hi <｜User｜> there", 1, 0, "!"),  # an added token near the edit: the whole text
        ("hi <｜User｜" + " there" * 300, 1600, 0, "!"),  # far from one: a window
    ],
)
def test_deepseek_edit_cases(text, start, removed, inserted):
    from tokexplorer.core.registry import get_builtin

    for policy in ("all", "none"):
        check_edit(get_builtin("deepseek-v4"), text, start, removed, inserted, policy)


def test_code_point_spans_stay_one_array_through_edits():
    """A non-ASCII text whose tokens all begin and end on characters keeps its code-point starts
    and ends as views of one array, opened and after each edit (half the memory of two), and goes
    to two arrays once a token cuts a character; every state equals a fresh encode."""
    def one_array(enc: Encoding) -> bool:
        return np.shares_memory(enc.starts, enc.ends)

    for name in ("o200k_base", "gpt2"):
        tok = get_builtin(name)
        inc = IncrementalEncoder(tok, "Grüße aus Köln, naïve café. " * 40, allowed_special="none")
        assert one_array(inc.encoding)
        edits = [(5, 0, " und Zürich"), (0, 0, "Ça va? "), (30, 3, ""),
                 (12, 0, " 👋 "),  # a token boundary inside the emoji's bytes
                 (12, 3, "é")]  # gone again (the spans stay two arrays)
        shared, kept = True, 0
        for start, removed, inserted in edits:
            enc, _ = inc.edit(start, removed, inserted)
            assert_same(enc, tok.encode(enc.text, allowed_special="none"))
            assert np.shares_memory(enc.byte_starts, enc.byte_ends)  # the byte spans always tile
            if shared:  # from one array: still one unless a token now cuts a character
                assert one_array(enc) == (not enc.flags.any()), (name, inserted)
            shared = one_array(enc)
            kept += shared
        assert kept >= 1 and not shared
        ascii_ = IncrementalEncoder(tok, "plain ASCII text " * 40, allowed_special="none")
        enc, _ = ascii_.edit(6, 0, "naïve ")  # from the byte bounds of an ASCII text
        assert_same(enc, tok.encode(enc.text, allowed_special="none"))
        assert one_array(enc)
