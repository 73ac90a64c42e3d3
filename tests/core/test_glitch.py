"""The glitch-token finder against the real vocabularies: the literature's ids and texts, the
unreachable and not-UTF-8 tokens as tiktoken's own encoder sees them, and the corpus ranking."""

from __future__ import annotations

import pytest

from tokexplorer.core.analysis.glitch import (NOT_UTF8, SPECIAL, UNSEEN, Corpus, find_glitch_tokens, known_tokens,
                                              reason_kind)
from tokexplorer.core.registry import get_builtin


@pytest.fixture(scope="module")
def gpt2_report():
    return find_glitch_tokens(get_builtin("gpt2"))


def by_id(report) -> dict[int, tuple[str, ...]]:
    return {t.id: t.reasons for t in report.tokens}


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_every_reported_token_has_its_text_in_the_real_vocabulary(name):
    """A listed id whose bytes are not the reported text would blame the wrong token."""
    tok = get_builtin(name)
    known = known_tokens()[name]
    assert known
    for k in known:
        assert tok.token_bytes(k.id) == k.text.encode("utf-8"), (name, k.id, k.text)
        assert k.cite in ("Rumbelow & Watkins 2023", "Land & Bartolo 2024")
        assert k.url.startswith("https://")


def test_solidgoldmagikarp_is_gpt2s_43453_from_the_lecture():
    tok = get_builtin("gpt2")
    assert tok.encode(" SolidGoldMagikarp").ids == [43453]
    assert any(k.id == 43453 and k.cite == "Rumbelow & Watkins 2023" for k in known_tokens()["gpt2"])


def test_gpt2_lists_solidgoldmagikarp_with_its_source_first(gpt2_report):
    reasons = by_id(gpt2_report)
    assert "reported under-trained (Rumbelow & Watkins 2023)" in reasons[43453]
    assert reasons[30898][:2] == ("reported under-trained (Rumbelow & Watkins 2023)",
                                  "reported under-trained (Land & Bartolo 2024)")
    reported = {k.id for k in known_tokens()["gpt2"]}
    first = [t.id for t in gpt2_report.tokens[:len(reported)]]
    assert set(first) == reported  # the literature leads the list


def test_gpt2_endoftext_is_special_and_unreachable_as_tiktoken_encodes_its_text(gpt2_report):
    tiktoken_ids = get_builtin("gpt2").library_encoder()[0]("<|endoftext|>")
    assert tiktoken_ids == [27, 91, 437, 1659, 5239, 91, 29]
    assert by_id(gpt2_report)[50256] == (f"unreachable: encodes as {tiktoken_ids}", SPECIAL)


def test_gpt2_fragments_of_characters_are_the_vocabularys_non_utf8_tokens(gpt2_report):
    tok = get_builtin("gpt2")
    expected = set()
    for data, rank in tok.mergeable_ranks.items():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            expected.add(rank)
    assert len(expected) == 344
    listed = {t.id for t in gpt2_report.tokens if NOT_UTF8 in t.reasons}
    assert listed == expected
    assert tok.token_bytes(447) == b"\xe2\x80" and next(t for t in gpt2_report.tokens if t.id == 447).text == "\\xe2\\x80"


def test_o200k_tokens_its_own_split_never_makes():
    """o200k's pattern splits " I'" before the apostrophe, and "\\n//" after the newline, so these
    tokens are never produced from text; cl100k has no such ordinary token."""
    o200k = get_builtin("o200k_base")
    report = find_glitch_tokens(o200k, Corpus(("hello",), "a word"), unseen_shown=0)
    reasons = by_id(report)
    assert o200k.token_bytes(3413) == b" I'"
    assert reasons[3413] == (f"unreachable: encodes as {o200k.library_encoder()[0](' I' + chr(39))}",)
    assert reasons[3413] == ("unreachable: encodes as [357, 6]",)
    assert reasons[3914] == ("unreachable: encodes as [198, 393]",)
    assert {i for i, r in reasons.items() if SPECIAL in r} == set(o200k.special_tokens.values())
    cl100k = find_glitch_tokens(get_builtin("cl100k_base"), Corpus(("hello",), "a word"), unseen_shown=0)
    unreachable = {t.id for t in cl100k.tokens if any(reason_kind(r) == "unreachable" for r in t.reasons)}
    assert unreachable == set(get_builtin("cl100k_base").special_tokens.values())


def test_never_produced_is_ranked_longest_then_rarest_and_the_corpus_counts():
    tok = get_builtin("gpt2")
    progress = []
    report = find_glitch_tokens(tok, Corpus((" hello world", " SolidGoldMagikarp"), "two lines"),
                                progress=lambda done, total: progress.append((done, total)), unseen_shown=50)
    produced = {43453, *tok.encode(" hello world").ids}
    ranked = sorted((i for i in range(tok.n_vocab - 1) if i not in produced),
                    key=lambda i: (len(tok.token_bytes(i)), i), reverse=True)
    assert {t.id for t in report.tokens if UNSEEN in t.reasons} == set(ranked[:50])
    # rows listed for no other reason come last, in that order
    assert [t.id for t in report.tokens if t.reasons == (UNSEEN,)] == [i for i in ranked[:50]
                                                                         if by_id(report)[i] == (UNSEEN,)]
    assert report.unseen == tok.n_vocab - 1 - 3  # all but <|endoftext|> and the three produced
    assert "small beside a tokenizer's training data" in report.corpus
    assert progress[-1][0] == progress[-1][1] and [d for d, _ in progress] == sorted(d for d, _ in progress)


def test_bundled_corpus_says_what_it_is(gpt2_report):
    assert gpt2_report.corpus.startswith("the UDHR in 56 languages")
    assert "Python source" in gpt2_report.corpus and " MB" in gpt2_report.corpus


def test_empty_corpus_is_refused():
    from tokexplorer.core.tokenizer import TokexplorerError

    with pytest.raises(TokexplorerError, match="empty"):
        find_glitch_tokens(get_builtin("gpt2"), Corpus(("",), "nothing"))


def test_sentencepiece_word_insides_are_reached_and_shadowed_byte_pieces_are_not():
    """Alone, "ing" would be encoded as a word start ("▁ing"); after a prefix it comes back as
    itself. The byte piece <0x41> never comes back: "A" has a piece of its own (330, "▁A")."""
    from tokexplorer.core.analysis.glitch import RoundTrip

    tok = get_builtin("llama-sp")
    pieces = tok.pieces
    round_trip = RoundTrip(tok)
    for piece in ("ing", "▁", "▁hell", "<0x0A>"):
        assert round_trip.unreachable(pieces.index(piece)) is None, piece
    assert round_trip.unreachable(pieces.index("<0x41>")) == [330] and pieces[330] == "▁A"
    report = find_glitch_tokens(tok, Corpus(("x",), "a letter"), unseen_shown=0)
    unreachable = {t.id for t in report.tokens if any(reason_kind(r) == "unreachable" for r in t.reasons)}
    assert len(unreachable) == 128 and {0, 1, 2, pieces.index("<0x41>")} <= unreachable
    assert pieces.index("ing") not in unreachable
