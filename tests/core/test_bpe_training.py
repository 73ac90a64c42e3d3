"""Fast BPE training learns exactly minbpe's merges (the slow reference is the oracle)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokexplorer.core.backends.trained_bpe import BPETokenizer
from tokexplorer.core.training.bpe import (
    assign_special_ids,
    check_vocab_size,
    count_chunks,
    iter_records,
    iter_train,
    iter_train_chunks,
    preview_chunks,
    train,
)
from tokexplorer.core.patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, resolve_pattern
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.training.runner import Report, TrainingRequest, run_bpe

from .. import reference_bpe as ref

PATTERNS = {"basic": None, "gpt2": GPT2_SPLIT_PATTERN, "gpt4": GPT4_SPLIT_PATTERN}


def fast_merges(text: str, vocab_size: int, pattern: str | None) -> list:
    return [(s.pair, s.new_id) for s in iter_train(text, vocab_size, pattern=pattern)]


@pytest.mark.parametrize("pattern", ["basic", "gpt4"])
def test_taylorswift_merges_equal_the_reference(corpora, pattern):
    text = (corpora / "en/taylorswift.txt").read_text("utf-8")
    size = 320 if pattern == "basic" else 300
    assert fast_merges(text, size, PATTERNS[pattern]) == list(ref.train(text, size, PATTERNS[pattern]).items())


@pytest.mark.parametrize("rel", ["multilingual/ja_wagahaiwa_nekodearu.txt", "code/cpython311_argparse.py",
                                 "unicode/blns.txt", "en/tinyshakespeare.txt"])
@pytest.mark.parametrize("pattern", ["basic", "gpt2", "gpt4"])
def test_corpus_slices_merges_equal_the_reference(corpora, rel, pattern):
    text = (corpora / rel).read_text("utf-8")[:12_000]
    assert fast_merges(text, 330, PATTERNS[pattern]) == list(ref.train(text, 330, PATTERNS[pattern]).items())


def test_lecture_twenty_merges_and_compression():
    """The lecture's toy run: 20 merges, and the text shrinks by a factor of about 1.27.

    The first merges are the lecture's, e.g. (101, 32) 'e ' into 256, (105, 110) 'in' into 257.
    """
    text = ("A Programmer's Introduction to Unicode. Unicode is the text of the world; "
            "the encodings are interesting, and the strings are in UTF-8 in the end. ") * 20
    steps = list(iter_train(text, 276))
    assert [s.step for s in steps] == list(range(1, 21)) and steps[-1].total == 20
    tok = train(text, 276)
    assert tok.decode(tok.encode(text).ids) == text
    assert len(text.encode()) / len(tok.encode(text).ids) > 1.2


# Small alphabets make many equal counts: the tie rule decides almost every merge.
tie_text = st.text(alphabet="ab \n", min_size=0, max_size=60) | st.text(alphabet="aé😀 ", max_size=40)


@pytest.mark.parametrize("pattern", [r"[a-z]+", r" ?(\w+)", r"(x)?\w", GPT4_SPLIT_PATTERN + "|x"])
def test_a_custom_pattern_counts_what_findall_finds(corpora, pattern):
    """A pattern that cannot be cut is counted match by match, as minbpe's findall gives them
    (with one capturing group: the group, empty where it did not take part)."""
    from collections import Counter

    from tokexplorer.core.patterns import compile_pattern

    text = (corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:50_000] + " xyz 1x"
    whole = Counter(compile_pattern(pattern).findall(text))
    whole.pop("", None)
    assert list(count_chunks(text, pattern).items()) == list(whole.items())


@pytest.mark.parametrize("pattern", ["gpt4", r"\w+|\s+|[^\w\s]+"])
def test_counting_chunks_does_not_hold_the_texts_chunk_list(corpora, monkeypatch, pattern):
    """The chunks of a text take about 15 times its size as a list; counting keeps a piece's."""
    import tracemalloc

    from tokexplorer.core.training import bpe as bpe_training

    monkeypatch.setattr(bpe_training, "COUNT_PIECE_MAX", 1 << 17)
    text = (corpora / "en/tinyshakespeare.txt").read_text("utf-8") * 2  # 2.2 MB, 500k chunks
    tracemalloc.start()
    try:
        counts = count_chunks(text, pattern)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sum(counts.values()) > 400_000
    assert peak < 4 * len(text), f"{peak / 1e6:.1f} MB traced while counting {len(text) / 1e6:.1f} MB"


@given(text=tie_text, extra=st.integers(1, 40))
def test_basic_ties_equal_the_reference(text, extra):
    if not text:
        return
    assert fast_merges(text, 256 + extra, None) == list(ref.train(text, 256 + extra, None).items())


@given(text=tie_text, extra=st.integers(1, 40), pattern=st.sampled_from([GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, r"\S+|\s+", r"..?"]))
def test_regex_ties_equal_the_reference(text, extra, pattern):
    if not text:
        return
    assert fast_merges(text, 256 + extra, pattern) == list(ref.train(text, 256 + extra, pattern).items())


def test_stops_cleanly_when_no_pair_is_left():
    steps = list(iter_train("abab", 300))
    assert [s.pair for s in steps] == [(97, 98), (256, 256)]
    tok = train("ab ab", 300, pattern="gpt2")
    assert tok.n_vocab == 258  # 'ab', ' ab' ... then nothing left to merge
    assert train("x", 300).n_vocab == 256


def test_steps_report_progress_and_cancel_keeps_what_was_learned(corpora):
    text = (corpora / "en/taylorswift.txt").read_text("utf-8")
    learned = {}
    for s in iter_train(text, 1000, pattern="gpt4"):
        learned[s.pair] = s.new_id
        assert s.total == 744 and s.count > 0
        if s.step == 50:
            break  # the user pressed cancel
    assert list(learned.items()) == list(train(text, 306, pattern="gpt4").merges.items())


def test_special_tokens_count_in_the_vocab_size():
    tok = train("hello hello", 260, pattern="gpt4", special_tokens=["<|endoftext|>"])
    assert tok.special_tokens == {"<|endoftext|>": 259} and len(tok.merges) == 3
    assert tok.n_vocab == 260
    assert tok.encode("hello<|endoftext|>", allowed_special="all").ids[-1] == 259


@pytest.mark.parametrize("call, message", [
    (lambda: train("", 300), "empty"),
    (lambda: train("abc", 255), "at least 256"),
    (lambda: train("abc", 256, special_tokens=["<|x|>"]), "at least 257"),
    (lambda: train("abc", 300, pattern="(unclosed"), "invalid split pattern"),
    (lambda: train("abc", 300, pattern="(a)(b)"), "capturing groups"),
    (lambda: assign_special_ids({"<|x|>": 100}, 300), "byte or merged token"),
    (lambda: assign_special_ids({"<|x|>": 300, "<|y|>": 300}, 300), "both have id 300"),
])
def test_bad_input_is_one_clear_error(call, message):
    with pytest.raises(TokexplorerError, match=message):
        call()


def test_pathological_pattern_is_time_boxed(monkeypatch):
    from tokexplorer.core.training import bpe as bpe_training

    monkeypatch.setattr(bpe_training, "SPLIT_TIMEOUT_FLOOR", 0.5)
    with pytest.raises(TokexplorerError, match="catastrophic backtracking"):
        train("a" * 40 + "!", 300, pattern=r"(?:a|aa)+$")


def test_check_vocab_size():
    assert check_vocab_size(1024, 2) == 766
    assert resolve_pattern("gpt4") == GPT4_SPLIT_PATTERN


@given(words=st.lists(st.sampled_from(["aa", "ab", "ba", "aab", " a", "b", "aaa", "\n"]), max_size=80),
       extra=st.integers(1, 30))
def test_repeated_chunks_weigh_as_often_as_they_occur(words, extra):
    text = " ".join(words)
    if not text:
        return
    assert fast_merges(text, 256 + extra, GPT4_SPLIT_PATTERN) == list(ref.train(text, 256 + extra, GPT4_SPLIT_PATTERN).items())
    assert fast_merges(text, 256 + extra, None) == list(ref.train(text, 256 + extra, None).items())


@pytest.mark.parametrize("name", ["gpt2", "gpt4", "o200k"])
def test_counting_chunks_piece_by_piece_equals_the_whole(corpora, name):
    from collections import Counter

    from tokexplorer.core.patterns import NAMED_PATTERNS, compile_pattern, piece_spans

    compiled = compile_pattern(NAMED_PATTERNS[name])
    text = "".join((corpora / rel).read_text("utf-8")[:60_000] for rel in [
        "code/cpython311_argparse.py", "multilingual/ja_wagahaiwa_nekodearu.txt",
        "unicode/blns.txt", "en/tinyshakespeare.txt", "code/pokemon.json"])
    pieces = [text[a:b] for a, b in piece_spans(text, size=2_000)]
    assert len(pieces) > 30 and "".join(pieces) == text
    by_piece = Counter()
    for piece in pieces:
        by_piece.update(compiled.findall(piece))
    assert list(by_piece.items()) == list(Counter(compiled.findall(text)).items())


@pytest.mark.parametrize("threads", [1, 3])
def test_counting_in_threads_keeps_counts_and_first_occurrence_order(corpora, monkeypatch, threads):
    from collections import Counter

    from tokexplorer.core.training import bpe as bpe_training
    from tokexplorer.core.patterns import compile_pattern

    text = "".join((corpora / rel).read_text("utf-8")[:60_000] for rel in [
        "multilingual/zh_hans_lunyu.txt", "en/tinyshakespeare.txt", "code/pokemon.json"])
    monkeypatch.setattr(bpe_training, "COUNT_PIECE_MIN", 1_000)
    monkeypatch.setattr(bpe_training, "COUNT_THREADS", threads)
    monkeypatch.setattr(bpe_training.os, "cpu_count", lambda: 8)
    whole = Counter(compile_pattern(GPT4_SPLIT_PATTERN).findall(text))
    assert list(count_chunks(text, "gpt4").items()) == list(whole.items())


@given(text=tie_text | st.lists(st.sampled_from(["ab", "ba", "abab", " a", "b", "aab", "\n"])).map(" ".join),
       extra=st.integers(1, 40), pattern=st.sampled_from([None, GPT4_SPLIT_PATTERN]))
def test_vectorised_merges_equal_the_reference(text, extra, pattern):
    """Every merge of two different tokens through the numpy path, whatever its size."""
    from tokexplorer.core.training import bpe as bpe_training

    if not text:
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(bpe_training.PURE_PYTHON_VARIABLE, "1")  # the numpy path is part of the Python loop
        mp.setattr(bpe_training, "VECTOR_MERGE_MIN", 1)
        mp.setattr(bpe_training, "NUMPY_STREAM_MIN", 0)
        fast = fast_merges(text, 256 + extra, pattern)
    assert fast == list(ref.train(text, 256 + extra, pattern).items())


def test_vectorised_merges_on_a_corpus(corpora, monkeypatch):
    from tokexplorer.core.training import bpe as bpe_training

    monkeypatch.setenv(bpe_training.PURE_PYTHON_VARIABLE, "1")
    monkeypatch.setattr(bpe_training, "VECTOR_MERGE_MIN", 1)
    monkeypatch.setattr(bpe_training, "NUMPY_STREAM_MIN", 0)
    text = (corpora / "multilingual/ja_wagahaiwa_nekodearu.txt").read_text("utf-8")[:12_000]
    for pattern in (None, GPT4_SPLIT_PATTERN):
        assert fast_merges(text, 330, pattern) == list(ref.train(text, 330, pattern).items())


@pytest.mark.parametrize("pattern", [None, GPT4_SPLIT_PATTERN])
def test_small_and_large_streams_start_from_the_same_state(corpora, pattern):
    """A small stream starts in plain Python, a large one with numpy: the same state either way."""
    from tokexplorer.core.training import bpe as bpe_training

    text = (corpora / "multilingual/ja_wagahaiwa_nekodearu.txt").read_text("utf-8")[:20_000]
    chunks = {text: 1} if pattern is None else count_chunks(text, pattern)
    data = b"".join(w.encode("utf-8") for w in chunks)
    lengths = [len(w.encode("utf-8")) for w in chunks]
    states = [f(data, lengths, list(chunks.values()), 256 + 100)
              for f in (bpe_training._stream_python, bpe_training._stream_numpy)]
    (tokens, *arrays, counts, positions), (tokens_np, *arrays_np, counts_np, positions_np) = states
    assert tokens == list(tokens_np) and arrays == [list(a) for a in arrays_np] and counts == counts_np
    assert {p: list(w) for p, w in positions.items()} == {p: list(w) for p, w in positions_np.items()}
    assert pattern is None or max(chunks.values()) > 1  # weights other than 1 are compared too


def test_a_pair_overlapping_itself_is_counted_twice_and_merged_once():
    """minbpe counts (a, a) twice in "aaa" (so that count picks the pair) but a left-to-right
    rewrite merges it once: "aaa" -> [256, 97], two tokens, not one."""
    (step,) = iter_train("aaa", 257)
    assert (step.pair, step.count, step.merged) == ((97, 97), 2, 1)


@given(text=tie_text, extra=st.integers(1, 40), pattern=st.sampled_from([None, GPT2_SPLIT_PATTERN, r"..?"]))
def test_merged_occurrences_shorten_the_text_as_the_reference(text, extra, pattern):
    if not text:
        return
    steps = list(iter_train(text, 256 + extra, pattern=pattern))
    chunks = ref.chunks_of(text, pattern)  # "..?" skips newlines: only matched bytes count
    n_bytes = sum(map(len, chunks))
    for s in steps:
        chunks = [ref.merge(ids, s.pair, s.new_id) for ids in chunks]
    assert n_bytes - sum(s.merged for s in steps) == sum(map(len, chunks))


def test_merged_occurrences_on_a_corpus_with_the_vectorised_path(corpora, monkeypatch):
    from tokexplorer.core.training import bpe as bpe_training

    monkeypatch.setenv(bpe_training.PURE_PYTHON_VARIABLE, "1")
    monkeypatch.setattr(bpe_training, "NUMPY_STREAM_MIN", 0)
    text = (corpora / "en/taylorswift.txt").read_text("utf-8")
    steps = list(iter_train(text, 300))  # Basic: the first merges have thousands of occurrences
    chunks = ref.chunks_of(text, None)
    for s in steps:
        chunks = [ref.merge(ids, s.pair, s.new_id) for ids in chunks]
    assert len(text.encode("utf-8")) - sum(s.merged for s in steps) == sum(map(len, chunks))


@pytest.mark.parametrize("pattern", [None, "gpt4"])
def test_records_count_the_corpus_tokens_after_each_merge(corpora, pattern):
    """A record's token count is what the tokenizer of the merges so far encodes the corpus to."""
    text = (corpora / "en/taylorswift.txt").read_text("utf-8")[:10_000]
    n_bytes = len(text.encode("utf-8"))
    records = list(iter_records(iter_train(text, 300, pattern=pattern), n_bytes))
    merges = {}
    for r in records:
        merges[r.pair] = r.rank
        if r.rank % 11 == 0 or r is records[-1]:
            tok = BPETokenizer(dict(merges), None if pattern is None else GPT4_SPLIT_PATTERN)
            assert r.tokens == len(tok.encode_ids(text)), r.rank
            assert r.token == tok.token_bytes(r.rank)


def test_a_run_trains_only_on_what_the_pattern_matches():
    """run_bpe's trained bytes are the chunks' bytes times their counts (the text the pattern skips
    between matches is not there), its corpus bytes the whole text's."""
    chunks = count_chunks("ab, ab; ab", r"\w+")
    assert list(iter_train_chunks(chunks, 257))[0].pair == (97, 98)
    run = run_bpe(TrainingRequest("t", "bpe", 257, text="ab, ab; ab", pattern=r"\w+"), Report())
    assert (run.trained_bytes, run.corpus_bytes, run.merges) == (6, 10, {(97, 98): 256})


def test_preview_chunks_refuses_bad_and_runaway_patterns():
    assert preview_chunks("hello  world", r"\w+|\s+") == ["hello", "  ", "world"]
    with pytest.raises(TokexplorerError, match="invalid split pattern"):
        preview_chunks("x", "(")
    with pytest.raises(TokexplorerError, match="capturing groups"):
        preview_chunks("ab", "(a)(b)")
    with pytest.raises(TokexplorerError, match="catastrophic backtracking"):
        preview_chunks("a" * 2000 + "!", r"(?:a+)+b", timeout=0.1)
