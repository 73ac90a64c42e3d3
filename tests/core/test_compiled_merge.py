"""The compiled merge loop (tokexplorer/core/training/_merge.c) learns exactly the Python loop's merges.

The Python loop is the reference here (itself checked against minbpe's plain algorithm in
test_bpe_training.py, which runs the compiled loop when it is built): both run on the same inputs,
random and real corpora, and must give the same MergeStep sequences, ties included. Without the
compiled module these tests are skipped, unless TOKEXPLORER_REQUIRE_COMPILED is set (CI: a machine
with a C compiler must have built it).
"""

from __future__ import annotations

import os
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokexplorer.core.training import bpe as bpe_training
from tokexplorer.core.training.bpe import (PURE_PYTHON_VARIABLE, count_chunks, iter_train, iter_train_chunks,
                                           merge_loop)
from tokexplorer.core.patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN

from .. import reference_bpe as ref

if os.environ.get("TOKEXPLORER_REQUIRE_COMPILED"):
    from tokexplorer.core.training import _merge
else:
    _merge = pytest.importorskip("tokexplorer.core.training._merge", reason="the compiled merge loop is not built")


def both(monkeypatch, train, *args, **kwargs) -> tuple[list, list]:
    """The steps of train(*args) by the compiled loop, then by the Python loop (the variable set)."""
    monkeypatch.delenv(PURE_PYTHON_VARIABLE, raising=False)
    compiled = list(train(*args, **kwargs))
    monkeypatch.setenv(PURE_PYTHON_VARIABLE, "1")
    python = list(train(*args, **kwargs))
    monkeypatch.delenv(PURE_PYTHON_VARIABLE)
    return compiled, python


def test_the_variable_chooses_the_loop(monkeypatch):
    def loop() -> str:  # the generator of batches: the compiled loop's, or the Python loop's batched
        batches = bpe_training._step_batches([b"ab"], [1], 1)
        return batches.gi_frame.f_locals.get("steps", batches).gi_code.co_name

    monkeypatch.delenv(PURE_PYTHON_VARIABLE, raising=False)
    assert merge_loop() == "compiled" and loop() == "_train_compiled"
    monkeypatch.setenv(PURE_PYTHON_VARIABLE, "1")
    assert merge_loop() == f"pure Python ({PURE_PYTHON_VARIABLE} is set)" and loop() == "_train_python"
    monkeypatch.setenv(PURE_PYTHON_VARIABLE, "0")
    assert merge_loop() == "compiled"


tie_text = st.text(alphabet="ab \n", max_size=80) | st.text(alphabet="aé😀 \x00", max_size=50)


@given(text=tie_text, extra=st.integers(1, 60),
       pattern=st.sampled_from([None, GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, r"..?", r"\S+|\s+"]))
def test_random_texts_give_the_same_steps(text, extra, pattern):
    if not text:
        return
    with pytest.MonkeyPatch.context() as mp:
        compiled, python = both(mp, iter_train, text, 256 + extra, pattern=pattern)
    assert compiled == python


@given(chunks=st.dictionaries(st.text(alphabet="ab😀", min_size=1, max_size=8), st.integers(1, 2**31),
                              min_size=1, max_size=30),
       extra=st.integers(1, 40))
def test_weighted_chunks_give_the_same_steps(chunks, extra):
    """Large multiplicities: counts past 32 bits, ties between weighted and unweighted pairs."""
    with pytest.MonkeyPatch.context() as mp:
        compiled, python = both(mp, iter_train_chunks, chunks, 256 + extra)
    assert compiled == python


@pytest.mark.parametrize("rel, pattern, vocab_size", [
    ("en/tinyshakespeare.txt", "gpt4", 32768),  # runs out of pairs before 32768
    ("multilingual/zh_hans_lunyu.txt", "gpt4", 4096),  # long chunks: a Chinese sentence is one
    ("code/pokemon.json", "gpt2", 4096),
    ("unicode/blns.txt", "o200k", 4096),
    ("multilingual/ja_wagahaiwa_nekodearu.txt", None, 1024),  # Basic: one chunk, counted once
])
def test_corpora_give_the_same_steps(corpora, monkeypatch, rel, pattern, vocab_size):
    text = (corpora / rel).read_text("utf-8")
    chunks = {text: 1} if pattern is None else count_chunks(text, pattern)
    compiled, python = both(monkeypatch, iter_train_chunks, chunks, vocab_size)
    assert compiled == python and len(compiled) > 700


def test_counts_past_32_bits_fall_back_to_python():
    """A chunk counted 2**32 times or more does not fit the compiled loop: Python's takes it."""
    steps = list(iter_train_chunks({"ab": 2**40, "abab": 3}, 258))
    assert [(s.pair, s.count, s.merged) for s in steps] == [((97, 98), 2**40 + 6, 2**40 + 6),
                                                            ((256, 256), 3, 3)]


def test_batches_stay_short_and_stop_at_the_total():
    merger = _merge.Merger([b"ab" * 100_000, b"cd" * 10], [1, 5], 3)
    first = merger.merge(64)
    assert first == [(1, 3, (97, 98), 256, 100_000, 100_000)]  # a large merge: one a call
    assert merger.merge(64) == [(2, 3, (256, 256), 257, 99_999, 50_000)]
    assert merger.merge(64) == [(3, 3, (257, 257), 258, 49_999, 25_000)]
    assert merger.merge(64) == []  # the total is reached


def test_bad_arguments_are_python_errors():
    with pytest.raises(ValueError, match="differ in length"):
        _merge.Merger([b"ab"], [1, 2], 3)
    with pytest.raises(TypeError, match="list of bytes"):
        _merge.Merger(["ab"], [1], 3)
    with pytest.raises(OverflowError):
        _merge.Merger([b"ab"], [-1], 3)
    unusable = _merge.Merger.__new__(_merge.Merger)
    with pytest.raises(RuntimeError, match="not usable"):
        unusable.merge(1)


def resident_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads /proc")
def test_an_abandoned_run_frees_its_state():
    """Cancel: the caller drops the generator between merges, and the merger's memory goes with it
    (over 20 MB a run here: 40 runs kept would be over a gigabyte)."""
    text = bytes(range(256)) * 4096  # 1 MB, every byte pair a different count of positions
    before = resident_mb()
    for _ in range(40):
        steps = bpe_training._train_stream([text], [1], 1000)
        next(steps)
        del steps
    assert resident_mb() - before < 300


OUT_OF_MEMORY = """
import resource
from tokexplorer.core.training._merge import Merger

def limit(headroom):
    with open("/proc/self/statm") as f:
        used = int(f.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (used + headroom, resource.RLIM_INFINITY))

merger = Merger([b"ab" * 2_000_000], [1], 10)  # the first merge makes a pair of 2,000,000 positions
chunks = [bytes(range(256)) * 40_000]  # 10 MB: about 100 MB of stream and positions
limit(2 << 20)
for what, call in [("set-up", lambda: Merger(chunks, [1], 100)), ("merge", lambda: merger.merge(64))]:
    try:
        call()
    except MemoryError:
        print(what, "MemoryError")
try:
    merger.merge(64)
except RuntimeError as exc:
    print("after:", exc)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads /proc")
def test_running_out_of_memory_is_a_memory_error(tmp_path):
    """In set-up or mid-merge, a failed allocation raises MemoryError (no crash), and a merger
    left half-way refuses to go on."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", OUT_OF_MEMORY], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["set-up MemoryError", "merge MemoryError",
                                        "after: Merger is not usable (its set-up or a merge failed)"]


def test_threads_train_at_once_with_the_same_merges():
    """Merges run with the interpreter lock released: separate runs in threads do not mix."""
    text = "the cat sat on the mat, the hat " * 300
    expected = [s.pair for s in iter_train(text, 600, pattern="gpt2")]
    results: list[list] = [[] for _ in range(4)]

    def run(out: list) -> None:
        out.extend(s.pair for s in iter_train(text, 600, pattern="gpt2"))

    threads = [threading.Thread(target=run, args=(out,)) for out in results]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4


def test_ids_past_16_bits_give_the_same_steps(corpora, monkeypatch):
    """A vocab size past 65,535 keeps the stream's tokens in 32 bits (16 below): the same steps,
    with and without a pattern, until no pair is left."""
    text = (corpora / "multilingual/ja_wagahaiwa_nekodearu.txt").read_text(encoding="utf-8")[:3000]
    for pattern in (None, GPT4_SPLIT_PATTERN):
        compiled, python = both(monkeypatch, iter_train, text, 256 + 70_000, pattern=pattern)
        assert compiled == python and 1000 < len(compiled) < 70_000


# (the peak from /proc: ru_maxrss counts the forked test process's before the exec)
PEAK = """
import sys
from tokexplorer.core.training._merge import Merger

def peak_kb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))

text = open(sys.argv[1], "rb").read()
text = text * (16_000_000 // len(text) + 1)
before = peak_kb()
merger = Merger([text], [1], 200)
while merger.merge(64):
    pass
print((peak_kb() - before) * 1024 / len(text))
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads /proc")
def test_a_stream_with_no_pattern_takes_about_eleven_bytes_a_byte(corpora):
    """Training with no pattern makes the whole corpus one stream: its state (2-byte tokens, a
    4-byte link and 4 bytes of pair positions a byte) peaks near 11 bytes a byte of the corpus,
    where nodes of four 32-bit fields took 22. (16 MB of English, 200 merges.)"""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", PEAK, str(corpora / "en/tinyshakespeare.txt")],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 0, proc.stderr
    assert 6 < float(proc.stdout) < 13


def test_a_pair_that_loses_most_of_its_positions_keeps_its_live_ones(monkeypatch):
    """Merging (x, a) takes 1,000 of the 1,130 occurrences of (a, b): its listed positions are
    mostly stale and are compacted; the steps after stay the Python loop's (and minbpe's)."""
    text = "xab " * 1000 + "yab " * 100 + "xa " * 1000 + "yab" * 30
    compiled, python = both(monkeypatch, iter_train, text, 256 + 12, pattern=None)
    assert compiled == python
    pairs = [s.pair for s in compiled]
    # (y, a) ties with (a, b) at 130 and wins by first occurrence, read off (a, b)'s compacted list
    assert pairs[0] == (120, 97) and pairs[9] == (121, 97) and compiled[9].count == 130
    assert dict(zip(pairs, range(256, 268))) == ref.train(text, 256 + 12)
