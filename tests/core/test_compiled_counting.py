"""The compiled chunk count (tokexplorer/core/training/_count.c) beside its slow references.

- Its split of ASCII text is GPT-4's pattern as the `regex` module runs it, chunk for chunk: every
  short string of the characters that matter to the pattern, hypothesis texts, whole corpus files.
- Its counts are `PyChunkCounts`' (a `collections.Counter`): the same chunks, counts and order of
  first occurrence, given the same calls.
- A training run over files, counted by it, learns the slow reference trainer's merges
  (tests/reference_bpe.py, minbpe's plain algorithm), ties included, on English, Japanese, code,
  the naughty strings, and a text made of ties.

Without the compiled module these tests are skipped, unless TOKEXPLORER_REQUIRE_COMPILED is set
(CI: a machine with a C compiler must have built it).
"""

from __future__ import annotations

import itertools
import os
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokexplorer.core.files.textfile import read_text_file
from tokexplorer.core.patterns import GPT4_SPLIT_PATTERN, compile_pattern
from tokexplorer.core.training.counting import PURE_PYTHON_VARIABLE, PyChunkCounts, chunk_counts
from tokexplorer.core.training.runner import Report, TrainingRequest, run_bpe

from .. import reference_bpe as ref

if os.environ.get("TOKEXPLORER_REQUIRE_COMPILED"):
    from tokexplorer.core.training import _count
else:
    _count = pytest.importorskip("tokexplorer.core.training._count", reason="the compiled count is not built")


def split(text: str) -> list[tuple[bytes, int]]:
    """The compiled split and count of an ASCII text."""
    counts = _count.ChunkCounts()
    data = text.encode("ascii")
    assert counts.split_gpt4(data, 0, len(data)) is True
    return list(zip(counts.chunks(), counts.counts()))


def reference(text: str) -> list[tuple[bytes, int]]:
    """The `regex` module's chunks of the text, counted in order of first occurrence."""
    return [(w.encode("utf-8"), n) for w, n in Counter(compile_pattern(GPT4_SPLIT_PATTERN).findall(text)).items()]


# Each alternative of the pattern and where it gives way to the next: contractions in both cases and
# cut short, letters after a space, a tab, an apostrophe or a line end, digit runs past three, an
# optional space before punctuation, whitespace runs with and without line ends, at the text's end
# and before a letter, and the separators \x1c-\x1f that `regex` does not take for spaces.
ASCII_PIECES = [*"sSdDtTlLvVrReEmMa1 \t\n\r\x0b\x0c\x1c\x1f'/.", "'ll", "'Ve", "''", "  ", "\r\n", "\n\n",
                "123", "4567", " !", "\t\t"]


def test_every_short_ascii_string_splits_as_the_pattern():
    for n in range(1, 4):
        for parts in itertools.product(ASCII_PIECES, repeat=n):
            text = "".join(parts)
            assert split(text) == reference(text), text


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=200))
@pytest.mark.property
def test_ascii_texts_split_as_the_pattern(text):
    assert split(text) == (reference(text) if text else [])


@pytest.mark.parametrize("rel", ["en/tinyshakespeare.txt", "code/cpython311_argparse.py"])
def test_ascii_corpus_files_split_as_the_pattern(corpora, rel):
    text = read_text_file(corpora / rel)
    assert text.isascii()
    assert split(text) == reference(text)


def test_a_stretch_with_a_non_ascii_byte_counts_nothing_and_says_so():
    counts = _count.ChunkCounts()
    data = "ok café ok".encode()
    assert counts.split_gpt4(data, 0, len(data)) is False
    assert len(counts) == 0 and counts.unique_bytes == 0
    assert counts.split_gpt4(data, 0, 3) is True  # "ok ": the ASCII part alone
    assert list(zip(counts.chunks(), counts.counts())) == [(b"ok", 1), (b" ", 1)]
    with pytest.raises(ValueError):
        counts.split_gpt4(data, 5, 3)


calls = st.lists(st.one_of(
    st.tuples(st.just("add"), st.lists(st.one_of(st.text(max_size=4), st.binary(max_size=4)), max_size=12)),
    st.tuples(st.just("add_counts"), st.lists(st.tuples(st.binary(max_size=4), st.integers(1, 10**12)),
                                              max_size=12)),
    st.tuples(st.just("split_gpt4"), st.text(alphabet=st.characters(max_codepoint=200), max_size=30)),
), max_size=8)


@settings(max_examples=200, deadline=None)
@given(calls)
@pytest.mark.property
def test_the_counts_are_the_python_twins_counts(script):
    """The same calls on the compiled count and on `PyChunkCounts`: the same chunks in the same order,
    the same counts and distinct bytes (empty chunks are not counted)."""
    compiled, python = _count.ChunkCounts(), PyChunkCounts()
    for what, arg in script:
        for counts in (compiled, python):
            if what == "add":
                counts.add(arg)
            elif what == "add_counts":
                counts.add_counts([c for c, _ in arg], [n for _, n in arg])
            else:
                data = arg.encode("utf-8")
                assert counts.split_gpt4(data, 0, len(data)) is data.isascii()
    assert compiled.chunks() == python.chunks() and compiled.counts() == python.counts()
    assert compiled.unique_bytes == python.unique_bytes == sum(map(len, python.chunks()))
    assert b"" not in compiled.chunks()


def test_the_variable_chooses_the_python_count(monkeypatch):
    monkeypatch.delenv(PURE_PYTHON_VARIABLE, raising=False)
    assert isinstance(chunk_counts(), _count.ChunkCounts)
    monkeypatch.setenv(PURE_PYTHON_VARIABLE, "1")
    assert isinstance(chunk_counts(), PyChunkCounts)


# The reference trainer is quadratic: each text is cut to what it trains in a second or two.
CORPORA = ["en/taylorswift.txt", "multilingual/ja_wagahaiwa_nekodearu.txt", "code/cpython311_argparse.py",
           "unicode/blns.txt"]
# Every pair of this text occurs equally often: each merge is a tie, broken by first occurrence.
TIES = "ab ba cd dc ef fe 12 21 'S 'll\n" * 40 + "é中 中é\r\n" * 40


@pytest.mark.parametrize("rel", [*CORPORA, "ties"])
def test_a_run_over_files_learns_the_reference_merges(corpora, tmp_path, rel):
    """Counted by the compiled count (ASCII pieces split by it, the others by `regex`), trained by
    the compiled merge loop: the merges of minbpe's plain algorithm, in order."""
    text = TIES if rel == "ties" else read_text_file(corpora / rel)[:12_000]
    path = tmp_path / "corpus.txt"
    path.write_bytes(text.encode("utf-8"))
    run = run_bpe(TrainingRequest("t", "bpe", 330, (str(path),), pattern=GPT4_SPLIT_PATTERN), Report())
    assert list(run.merges.items()) == list(ref.train(text, 330, GPT4_SPLIT_PATTERN).items())
