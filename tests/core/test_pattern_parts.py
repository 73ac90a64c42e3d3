"""The split regex explained: each chunk's alternative, and two patterns on the same text."""

from __future__ import annotations

import pytest

from tokexplorer.core.analysis.pattern_parts import (COMPARABLE, ENCODER_PY_PATTERN, alternative_names,
                                                     compare_splits, explain_chunks, top_alternatives)
from tokexplorer.core.patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, O200K_SPLIT_PATTERN, split
from tokexplorer.core.registry import get_builtin


def chunks(text: str, pattern: str) -> list[tuple[str, str]]:
    e = explain_chunks(text, pattern)
    return [(text[a:b], e.names[k]) for a, b, k in zip(e.starts.tolist(), e.ends.tolist(), e.alternatives.tolist())]


def test_the_lecture_sentence_under_encoder_py():
    """The lecture's example: re.findall(gpt2pat, "Hello world how've are.     you!!!?   ")."""
    text = "Hello world how've are.     you!!!?   "
    got = chunks(text, ENCODER_PY_PATTERN)
    assert [c for c, _ in got] == ['Hello', ' world', ' how', "'ve", ' are', '.', '    ', ' you', '!!!?', '   ']
    assert [n for _, n in got] == [
        "letters (a space before)", "letters (a space before)", "letters (a space before)", "contraction",
        "letters (a space before)", "punctuation (a space before)", "whitespace not before a non-space",
        "letters (a space before)", "punctuation (a space before)", "whitespace not before a non-space"]


def test_each_alternative_is_the_one_that_matched_alone():
    """The named group that matched is the first alternative that matches there on its own."""
    import regex

    text = "I'LL see you'll 2024 times!!\n\n   x  \t\n 🙂 안녕 "
    for pattern in (ENCODER_PY_PATTERN, GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, O200K_SPLIT_PATTERN):
        alternatives = [regex.compile(a) for a in top_alternatives(pattern)]
        e = explain_chunks(text, pattern)
        assert len(e.names) == len(alternatives) and (e.alternatives >= 0).all()
        for a, b, k in zip(e.starts.tolist(), e.ends.tolist(), e.alternatives.tolist()):
            first = next(j for j, alt in enumerate(alternatives) if (m := alt.match(text, a)) and m.end() > a)
            assert first == k and alternatives[k].match(text, a).end() == b


def test_names_of_the_known_patterns_and_of_others():
    assert alternative_names(GPT4_SPLIT_PATTERN)[:3] == ["contraction (any case)", "letters (one non-letter before)",
                                                         "digits (up to 3)"]
    assert alternative_names(r"[a-z]+|(?:\d|_)+") == ["alternative 1", "alternative 2"]
    assert top_alternatives(r"a(?:b|c)|[|]|\||d") == ["a(?:b|c)", "[|]", r"\|", "d"]


def test_encoder_py_and_tiktoken_gpt2_split_the_corpora_alike(corpora):
    """tiktoken's r50k pattern is encoder.py's rewritten for speed: the same chunks on every
    text here (what differs is only which alternative's name a whitespace chunk carries)."""
    files = sorted(p for p in corpora.rglob("*.txt") if p.stat().st_size < 300_000)
    assert len(files) > 20
    for path in files:
        text = path.read_text("utf-8", errors="replace")
        assert split(text, ENCODER_PY_PATTERN) == split(text, GPT2_SPLIT_PATTERN), path


def test_gpt2_against_gpt4_on_contractions_and_spaces():
    """Where the patterns differ: GPT-4 takes "'S" as a contraction, groups digits by three and
    keeps a space with the punctuation's run differently."""
    text = "HE'S got 12345 of them"
    e = explain_chunks(text, GPT2_SPLIT_PATTERN)
    differs = compare_splits(text, e.starts, e.ends, COMPARABLE["cl100k"][0])
    marked = [text[a:b] for a, b, d in zip(e.starts.tolist(), e.ends.tolist(), differs.tolist()) if d]
    assert marked == ["'", "S", " 12345"]
    assert not compare_splits(text, e.starts, e.ends, COMPARABLE["encoder.py"][0]).any()


def test_a_tokenizers_chunks_around_a_special_token():
    """Chunks cut by a special token are explained on their own (the `$` alternative at the cut)."""
    tok = get_builtin("cl100k_base")
    text = "end   <|endoftext|>next"
    enc = tok.encode(text, allowed_special="all")
    starts, ends = enc.chunk_arrays()
    e = explain_chunks(text, tok.split_pattern, starts, ends)
    got = {text[a:b]: e.names[k] if k >= 0 else "" for a, b, k in zip(starts.tolist(), ends.tolist(), e.alternatives.tolist())}
    assert got["   "] == "whitespace at the end of the text"
    assert got["<|endoftext|>"] == ""  # a special token: no alternative made it
    assert e.alternatives.tolist() == [1, 4, -1, 1]


@pytest.mark.parametrize("text", ["", "   ", "x"])
def test_small_texts(text):
    e = explain_chunks(text, GPT2_SPLIT_PATTERN)
    assert len(e.starts) == len(split(text, GPT2_SPLIT_PATTERN))


@pytest.mark.parametrize("name", ["gpt2", "o200k_base", "tekken"])
def test_a_tokenizers_chunks_are_explained_by_the_matches_with_their_spans(name, corpora, monkeypatch):
    """Given a tokenizer's chunks (cut by special tokens too), each is explained by the whole
    text's match with that very span, else by matching it alone: a slow reference (a dict of every
    match's span) against the pass in step, in blocks of 7 chunks so that blocks end anywhere."""
    from tokexplorer.core.analysis import pattern_parts

    monkeypatch.setattr(pattern_parts, "CHUNKS_AT_ONCE", 7)
    tok = get_builtin(name)
    text = (corpora / "unicode" / "blns.txt").read_text("utf-8")[:6000] + " <|endoftext|>x  \n"
    starts, ends = tok.encode(text, allowed_special="all").chunk_arrays()
    got = explain_chunks(text, tok.split_pattern, starts, ends).alternatives.tolist()
    wrapped = pattern_parts._wrapped(tok.split_pattern)
    by_span = {m.span(): int(m.lastgroup[1:]) for m in wrapped.finditer(text) if m.end() > m.start()}
    want = []
    for a, b in zip(starts.tolist(), ends.tolist()):
        alone = wrapped.match(text, a, b)
        want.append(by_span.get((a, b), int(alone.lastgroup[1:]) if alone is not None and alone.end() == b else -1))
    assert got == want and len(got) > 500
