"""The split regex explained: each chunk's alternative, and two patterns on the same text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def first_alternative(text: str, pattern: str, a: int, end: int) -> tuple[int, int] | None:
    """The slow reference: the first top-level alternative of `pattern`, compiled on its own, that
    matches at `a` in text[:end] (as a regex tries them left to right); (its index, its end)."""
    import regex

    for k, alternative in enumerate(top_alternatives(pattern)):
        m = regex.compile(alternative).match(text, a, end)
        if m is not None:
            return k, m.end()
    return None


def reference_alternatives(text: str, pattern: str, starts, ends) -> list[int]:
    """Each chunk's alternative by `first_alternative`: in the whole text if it ends the chunk,
    else in the text cut at the chunk's end, else -1."""
    out = []
    for a, b in zip(starts.tolist(), ends.tolist()):
        k = -1
        for end in (len(text), b):
            found = first_alternative(text, pattern, a, end)
            if found is not None and found[1] == b:
                k = found[0]
                break
        out.append(k)
    return out


@pytest.mark.parametrize("name", ["gpt2", "o200k_base", "tekken"])
def test_a_tokenizers_chunks_are_explained_by_the_alternative_matching_at_their_start(name, corpora, monkeypatch):
    """Given a tokenizer's chunks (cut by special tokens too), each is explained by the first
    alternative that matches at its start (in blocks of 7 chunks, so that blocks end anywhere),
    against the slow reference that compiles each alternative on its own."""
    from tokexplorer.core.analysis import pattern_parts

    monkeypatch.setattr(pattern_parts, "CHUNKS_AT_ONCE", 7)
    tok = get_builtin(name)
    text = (corpora / "unicode" / "blns.txt").read_text("utf-8")[:3000] + " <|endoftext|>x  \n"
    starts, ends = tok.encode(text, allowed_special="all").chunk_arrays()
    got = explain_chunks(text, tok.split_pattern, starts, ends).alternatives.tolist()
    assert got == reference_alternatives(text, tok.split_pattern, starts, ends) and len(got) > 300
    assert -1 not in got[:-4]  # (the special token's chunk is the one without)


PIECES = ["the", " ", "  ", "\n", "\r\n", "'s", "'LL", "12345", "!!", "?\n\n", "naïve", "日本語", "👋🏽", "\t",
          "<|endoftext|>", "x", "  \n ", "é"]


@settings(max_examples=60, deadline=None)
@given(base=st.lists(st.sampled_from(PIECES), min_size=0, max_size=40),
       edits=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 6),
                                st.lists(st.sampled_from(PIECES), max_size=3)), min_size=1, max_size=4),
       name=st.sampled_from(["gpt2", "cl100k_base", "o200k_base", "qwen2.5", "tekken"]))
def test_an_edited_texts_explanation_from_the_previous_one_equals_a_fresh_one(base, edits, name):
    """Explaining an edited text from the explanation before the edit (only the chunks the edit
    can have changed matched again) gives what explaining it afresh gives, edit after edit; the
    tokenizer's chunks are cut by the special token it allows."""
    from tokexplorer.core.analysis import pattern_parts

    tok = get_builtin(name)
    text = "".join(base)
    previous = explain_chunks(text, tok.split_pattern, *tok.encode(text, allowed_special="all").chunk_arrays())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pattern_parts, "CHUNKS_AT_ONCE", 5)  # blocks of chunks end anywhere
        for at, removed, inserted in edits:
            at = min(at, len(text))
            text = text[:at] + "".join(inserted) + text[at + removed:]
            arrays = tok.encode(text, allowed_special="all").chunk_arrays()
            got = explain_chunks(text, tok.split_pattern, *arrays, previous=previous)
            want = explain_chunks(text, tok.split_pattern, *arrays)
            assert got.alternatives.tolist() == want.alternatives.tolist()
            previous = got


def test_an_edit_matches_only_the_chunks_near_it(monkeypatch):
    """On a long text, an edit in the middle matches a few chunks again, not all of them."""
    import regex

    from tokexplorer.core.analysis import pattern_parts

    text = "Hello world, how are you? 12345\n" * 2000
    first = explain_chunks(text, GPT2_SPLIT_PATTERN)
    edited = text[:30_000] + "XYZ" + text[30_000:]
    calls = []

    def counting(wrapped: regex.Pattern, text: str, a: int, b: int) -> int:
        calls.append(a)
        return alternative(wrapped, text, a, b)

    alternative = pattern_parts._alternative
    monkeypatch.setattr(pattern_parts, "_alternative", counting)
    got = explain_chunks(edited, GPT2_SPLIT_PATTERN, previous=first)
    assert 0 < len(calls) < 10 and len(got.starts) > 15_000
    assert got.alternatives.tolist() == explain_chunks(edited, GPT2_SPLIT_PATTERN).alternatives.tolist()
    calls.clear()
    explain_chunks(edited, GPT4_SPLIT_PATTERN, previous=first)  # another pattern: every chunk
    assert len(calls) == len(split(edited, GPT4_SPLIT_PATTERN))
