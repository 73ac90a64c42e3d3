"""BPE by hand (core.analysis.bpe_by_hand): the lecture's get_stats / merge loop step by step,
checked against the plain loop (tests/reference_bpe.py) and against cases worked by hand."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokexplorer.core.analysis.bpe_by_hand import (MAX_TEXT_BYTES, PATTERNS, TOP_PAIRS, BpeByHand, merge,
                                                   LessonRuns, merge_typed, pair_counts, parse_ids,
                                                   sorted_counts)
from tokexplorer.core.tokenizer import TokexplorerError

from .. import reference_bpe
from ..strategies import hard_text


def plain_steps(text: str, pattern: str, merges: int):
    """The lecture's loop written out: recount, take max(stats, key=stats.get), merge everywhere.
    Each step as (pair, count, new id, length after, sorted table's first rows, tied pairs)."""
    chunks = reference_bpe.chunks_of(text, PATTERNS[pattern])
    steps = []
    for k in range(merges):
        stats = reference_bpe.pair_counts(chunks)
        if not stats:
            break
        pair = max(stats, key=stats.get)
        table = sorted(((v, k) for k, v in stats.items()), reverse=True)[:TOP_PAIRS]
        tied = tuple(p for p, c in stats.items() if c == stats[pair])
        chunks = [reference_bpe.merge(ids, pair, 256 + k) for ids in chunks]
        steps.append((pair, stats[pair], 256 + k, sum(map(len, chunks)), tuple(table), tied if len(tied) > 1 else ()))
    return steps, [i for ids in chunks for i in ids]


# Few letters, so pairs repeat and counts tie often; and the hard pieces (emoji, CJK, marks).
small_alphabet = st.text(st.sampled_from("ab \n'é1語👋"), max_size=120)


@pytest.mark.parametrize("pattern", list(PATTERNS))
@given(text=small_alphabet | hard_text, merges=st.integers(0, 40))
def test_every_step_is_the_plain_loops(pattern, text, merges):
    lesson = BpeByHand(text, pattern)
    steps = lesson.run(merges)
    expected, sequence = plain_steps(text, pattern, merges)
    assert [tuple(s) for s in steps] == expected
    assert lesson.sequence() == sequence and lesson.length == len(sequence)
    assert lesson.n_bytes == len(text.encode("utf-8"))


@given(ids=st.lists(st.integers(0, 5), max_size=30), pair=st.tuples(st.integers(0, 5), st.integers(0, 5)))
def test_merge_is_the_plain_merge(ids, pair):
    assert merge(ids, pair, 99) == reference_bpe.merge(ids, pair, 99)


def test_lecture_merge_of_a_typed_list():
    typed = merge_typed("5, 6, 6, 7, 9, 1", "6, 7", "99")
    assert typed.merged == (5, 6, 99, 9, 1)
    # (5,6) (6,6) (6,7) (7,9) (9,1) once each: sorted() lists the largest pair first
    assert typed.counts == ((1, (9, 1)), (1, (7, 9)), (1, (6, 7)), (1, (6, 6)), (1, (5, 6)))
    assert merge_typed("[1, 1, 1]", "(1, 1)", "2").merged == (2, 1)


@pytest.mark.parametrize("ids, pair, new_id, message", [
    ("5, six, 7", "6, 7", "99", "'six' is not a whole number"),
    ("5, -6", "6, 7", "99", "'-6' is not a whole number"),
    ("5, 6", "6", "99", "the pair needs two numbers"),
    ("5, 6", "6, 7", "99, 100", "the new id is one whole number"),
])
def test_typed_input_errors_say_what_to_write(ids, pair, new_id, message):
    with pytest.raises(TokexplorerError, match=message):
        merge_typed(ids, pair, new_id)


def test_get_stats_order_and_sorted_table():
    """get_stats keeps first occurrences in order; sorted() breaks equal counts by the larger pair."""
    counts = pair_counts([1, 2, 3, 1, 2, 3, 4])
    assert list(counts.items()) == [((1, 2), 2), ((2, 3), 2), ((3, 1), 1), ((3, 4), 1)]
    assert sorted_counts(counts) == [(2, (2, 3)), (2, (1, 2)), (1, (3, 4)), (1, (3, 1))]
    assert parse_ids(" 1 2,3 ") == [1, 2, 3]


def test_by_hand_wikipedia_example():
    """'aaabdaaabac' (Wikipedia's example), bytes 97 a, 98 b, 99 c, 100 d.
    aa occurs 4 times (twice in each aaa) -> 256: 'Z a b d Z a b a c' (9 ids).
    Then (256, 97) twice -> 257: 'Y b d Y b a c' (7), then (257, 98) twice -> 258: 'X d X a c' (5)."""
    lesson = BpeByHand("aaabdaaabac")
    steps = lesson.run(3)
    assert [(s.pair, s.count, s.new_id, s.length) for s in steps] == [
        ((97, 97), 4, 256, 9), ((256, 97), 2, 257, 7), ((257, 98), 2, 258, 5)]
    assert lesson.sequence() == [258, 100, 258, 97, 99]
    assert lesson.vocab == {256: b"aa", 257: b"aaa", 258: b"aaab"}


def test_tie_rule_takes_the_pair_met_first_where_the_table_lists_another():
    """'ab cd ab cd': a b ␣ c d ␣ a b ␣ c d. ab, b␣, ␣c and cd occur twice each (d␣ and ␣a once).
    minbpe takes the first met, ab = (97, 98); sorted() lists the largest, cd = (99, 100), first.
    After the merge: 256 ␣ c d ␣ 256 ␣ c d, 9 ids."""
    lesson = BpeByHand("ab cd ab cd")
    step = lesson.step()
    assert step.pair == (97, 98) and step.count == 2 and step.length == 9
    assert step.tied == ((97, 98), (98, 32), (32, 99), (99, 100))
    assert step.table_first == (99, 100)
    assert step.top[:4] == ((2, (99, 100)), (2, (98, 32)), (2, (97, 98)), (2, (32, 99)))
    assert lesson.sequence() == [256, 32, 99, 100, 32, 256, 32, 99, 100]
    # Next (256, ␣), (␣, c) and (c, d) lead with 2 each, in that order of first occurrence
    assert lesson.step().tied == ((256, 32), (32, 99), (99, 100))
    # No tie, nothing recorded: 'aaab' has aa twice, ab once
    assert BpeByHand("aaab").step().tied == ()


def test_pairs_never_cross_regex_chunks():
    """GPT-2 splits 'ab ab' into 'ab', ' ab': the pair (b, ␣) is never counted, so after (a, b)
    (twice, -> 256) the only pair left is (␣, 256)."""
    lesson = BpeByHand("ab ab", "gpt2")
    assert lesson.table() == [(2, (97, 98)), (1, (32, 97))]
    lesson.run(2)
    assert [s.pair for s in lesson.steps] == [(97, 98), (32, 256)]
    assert lesson.sequence() == [256, 257] and lesson.step() is None
    assert BpeByHand("ab ab", "none").table()[1] == (1, (98, 32))


def snapshot(text: str, merges: int, pattern: str = "none", shown: int = 2000):
    lesson = BpeByHand(text, pattern)
    lesson.run(merges)
    return lesson.snapshot(shown=shown)


def test_snapshot_marks_the_next_pairs_occurrences():
    snap = snapshot("ab ab abab", 0, "gpt4", shown=100)
    assert snap.next_pair == (97, 98) and snap.chunk_starts == (0, 2, 5)
    assert snap.head == tuple(b"ab ab abab") and snap.marks == (0, 3, 6, 8)
    snap = snapshot("ab ab abab", 1, "gpt4")
    assert snap.head == (256, 32, 256, 32, 256, 256) and snap.length == 6
    assert snap.ratio == pytest.approx(10 / 6) and snap.token_bytes(256) == b"ab"
    assert snapshot("aa aa", 1, "none", shown=2).head == (256, 32)


def test_runs_continue_the_last_run_and_start_over_when_asked():
    """The server's runs: 3 then 5 merges continue one run; fewer, another text or another pattern
    start over. Every answer equals a run from the start."""
    runs, reported = LessonRuns(), []
    text = "the cat sat on the mat with the hat"
    first = runs.snapshot(text, 3)
    kept = runs._run
    assert runs.snapshot(text, 5, progress=lambda done, total: reported.append((done, total))) == snapshot(text, 5)
    assert runs._run is kept and reported == [(4, 5), (5, 5)]
    assert runs.snapshot(text, 3) == first and runs._run is not kept
    assert runs.snapshot(text, 3, "gpt2") == snapshot(text, 3, "gpt2")
    assert runs.snapshot(text + "!", 3) == snapshot(text + "!", 3)
    with pytest.raises(TokexplorerError, match="at most 10,000,000"):
        runs.snapshot("x" * (MAX_TEXT_BYTES + 1), 1)


def test_empty_text_and_a_single_byte_have_no_pairs():
    assert BpeByHand("").run(5) == [] and BpeByHand("x", "gpt2").run(5) == []
    assert snapshot("", 3).next_pair is None


def test_refuses_too_big_text_and_unknown_pattern():
    with pytest.raises(TokexplorerError, match=r"at most 10,000,000 \(10 MB\)"):
        BpeByHand("x" * (MAX_TEXT_BYTES + 1))
    with pytest.raises(TokexplorerError, match="use none, gpt2, gpt4"):
        BpeByHand("x", "o200k")
    with pytest.raises(TokexplorerError, match="lone surrogate"):
        BpeByHand("a\ud800b")
    with pytest.raises(TokexplorerError, match="0 or more"):
        BpeByHand("ab").run(-1)


def test_twenty_merges_on_a_megabyte_take_seconds(corpora):
    """The step loop touches only each merge's occurrences: 20 merges on 1 MB of English (1.3 s on
    the development machine) stay well under the bound below, however loaded the machine is."""
    text = (corpora / "en/taylorswift.txt").read_text("utf-8")
    text = (text * (1_000_000 // len(text) + 1))[:1_000_000]
    start = time.perf_counter()
    lesson = BpeByHand(text)
    steps = lesson.run(20)
    assert time.perf_counter() - start < 20
    assert len(steps) == 20 and lesson.length < 850_000
    # the first merge is the plain loop's on the same megabyte
    stats = pair_counts(list(text.encode("utf-8")))
    assert steps[0].pair == max(stats, key=stats.get) and steps[0].count == stats[steps[0].pair]


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_merges_are_the_trainers(corpora, pattern):
    """On a real text, 300 merges by hand are the ones `tokexplorer train` learns (the trainer is
    checked against minbpe itself), counts included."""
    from tokexplorer.core.training.bpe import iter_train

    text = (corpora / "en/taylorswift.txt").read_text("utf-8")[:60_000]
    lesson = BpeByHand(text, pattern)
    lesson.run(300)
    trained = list(iter_train(text, 256 + 300, pattern=None if pattern == "none" else pattern))
    assert [(s.pair, s.count) for s in lesson.steps] == [(s.pair, s.count) for s in trained]
