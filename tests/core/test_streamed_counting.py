"""The streamed, parallel count of a corpus's chunks (core/training/counting.py) is the whole-text
count exactly: the same chunks, counts and order of first occurrence, so the same merges, whatever
the block size (block ends asked for inside chunks and inside UTF-8 characters), however many files
and workers."""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokexplorer.core.files.textfile import read_text_file
from tokexplorer.core.patterns import NAMED_PATTERNS, compile_pattern, piece_spans
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.training.bpe import count_chunks, iter_batches, iter_train_chunks
from tokexplorer.core.training.counting import (CorpusFiles, _is_cut, ascii_twin, count_corpus, open_corpus,
                                                plan_blocks)
from tokexplorer.core.training.runner import Report, TrainingRequest, run_bpe

PATTERNS = ("gpt2", "gpt4", "o200k")

# A representative set of the shared corpora: English prose, lyrics, code, Japanese, Chinese and
# Hindi, the naughty strings, CRLF and BOM files where the corpora have them.
FILES = ["en/tinyshakespeare.txt", "en/taylorswift.txt", "code/cpython311_argparse.py",
         "multilingual/ja_wagahaiwa_nekodearu.txt", "unicode/blns.txt"]


# What generated texts are made of: letters, digits, punctuation, every kind of space and line end,
# indentation, and characters of 2, 3 and 4 bytes (a letter, a combining mark, a number that is no digit).
PIECES = [*"ab Z1.'\n\r\t", "é", "中", "😀", "\u00a0", "\u3000", "\x0b", "\x1c", "ſ", "ǅ", "\u0301", "²",
          "’s", "    ", "\r\n"]


def reference(text: str, pattern: str) -> list[tuple[bytes, int]]:
    """The whole-text count (bpe.count_chunks), keys in UTF-8, in order."""
    return [(w.encode("utf-8"), n) for w, n in count_chunks(text, pattern).items()]


def streamed(paths, pattern: str, **kwargs) -> list[tuple[bytes, int]]:
    return list(zip(*count_corpus(open_corpus([str(p) for p in paths]), NAMED_PATTERNS[pattern], **kwargs)))


def test_the_cuts_on_bytes_are_piece_spans_cuts_and_more_for_gpt4(corpora):
    """Every place the bytes may be cut under GPT-2 is a place `piece_spans` cuts the text, and the
    reverse; GPT-4 and o200k cut there and in more places: in code, many more."""
    for rel in FILES:
        text = read_text_file(corpora / rel)[:200_000]
        data = text.encode("utf-8")
        ends = [b for _, b in piece_spans(text, size=0)[:-1]]
        by_text = set(itertools.accumulate(len(text[a:b].encode("utf-8")) for a, b in zip([0, *ends], ends)))
        newlines = [n for n in range(len(data)) if data[n] == 10]
        strict = {n + 1 for n in newlines if _is_cut(data, n, False)}
        loose = {n + 1 for n in newlines if _is_cut(data, n, True)}
        assert strict == by_text and strict <= loose, rel
        if rel.startswith("code/"):
            assert len(strict) < 10 and len(loose) > 500, (len(strict), len(loose))


@pytest.mark.parametrize("rel", FILES)
def test_each_corpus_counts_the_same_in_small_blocks(corpora, rel, tmp_path):
    """Each file's first 300,000 characters, each pattern, blocks of 4 KB."""
    text = read_text_file(corpora / rel)[:300_000]
    path = tmp_path / "part.txt"
    path.write_bytes(text.encode("utf-8"))
    for pattern in PATTERNS:
        assert streamed([path], pattern, workers=1, block_size=4096) == reference(text, pattern), pattern


@pytest.mark.slow
def test_every_shared_corpus_file_counts_the_same(corpora):
    """All the corpora's text files, one by one, in blocks of 64 KB, GPT-4 pattern (40 s on a busy
    machine: the faster tests above cover a representative set)."""
    from tokexplorer.bench.training import all_corpora_files

    files = all_corpora_files()
    assert len(files) >= 10
    for path in files:
        text = read_text_file(path)
        if text:
            assert streamed([path], "gpt4", workers=1, block_size=1 << 16) == reference(text, "gpt4"), path


def test_worker_processes_count_many_files_as_their_text_concatenated(corpora):
    """Two spawned workers, blocks of 32 KB, five files end to end (a chunk runs across a file's
    end: the count is that of the concatenated text), merges identical at a small vocab size."""
    paths = [corpora / rel for rel in FILES[1:]]  # (tinyshakespeare, the largest, left out: time)
    text = "".join(read_text_file(p) for p in paths)
    got = streamed(paths, "gpt4", workers=2, block_size=1 << 15)
    want = reference(text, "gpt4")
    assert got == want
    chunks, freq = map(list, zip(*got))  # what run_bpe gives the merge loop
    steps = [(s.pair, s.count) for batch in iter_batches(chunks, freq, 400) for s in batch]
    assert steps == [(s.pair, s.count) for s in iter_train_chunks(count_chunks(text, "gpt4"), 400)]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=60).map("".join), min_size=1, max_size=4),
       st.integers(1, 40), st.sampled_from(PATTERNS))
@pytest.mark.property
def test_generated_texts_count_the_same_in_tiny_blocks(parts, block_size, pattern):
    """Blocks of 1 to 40 bytes ask for a cut at nearly every byte (inside chunks, inside UTF-8
    characters); the text in up to four files, one possibly empty."""
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for i, part in enumerate(parts):
            paths.append(Path(folder) / f"{i}.txt")
            paths[-1].write_bytes(part.encode("utf-8"))
        text = "".join(parts)
        got = streamed(paths, pattern, workers=1, block_size=block_size) if text else []
        assert got == (reference(text, pattern) if text else [])


def test_blocks_tile_the_stream_and_end_after_a_newline(corpora):
    corpus = open_corpus([str(corpora / "en/tinyshakespeare.txt")])
    blocks = plan_blocks(corpus, 10_000, loose=True)
    assert blocks[0][0] == 0 and blocks[-1][1] == corpus.size
    assert all(a[1] == b[0] for a, b in zip(blocks, blocks[1:]))
    data = corpus.read(0, corpus.size)
    assert all(data[end - 1] == 10 for _, end in blocks[:-1]) and 80 < len(blocks) < 140


def test_a_utf8_bom_is_dropped_and_utf16_is_left_to_the_whole_text_reader(tmp_path):
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbfhello world\n")
    assert open_corpus([str(bom)]) == CorpusFiles((str(bom),), (3,), (12,))
    assert streamed([bom], "gpt4", workers=1) == [(b"hello", 1), (b" world", 1), (b"\n", 1)]
    utf16 = tmp_path / "utf16.txt"
    utf16.write_bytes("hello\n".encode("utf-16"))
    assert open_corpus([str(bom), str(utf16)]) is None


def test_a_bad_byte_in_a_later_block_is_reported_as_the_reader_reports_it(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"\xef\xbb\xbf" + b"Some text\nHere\n" * 2000 + b"caf\xe9\nEnd\n")
    with pytest.raises(TokexplorerError) as whole:
        read_text_file(path)
    with pytest.raises(TokexplorerError) as blocks:
        count_corpus(open_corpus([str(path)]), NAMED_PATTERNS["gpt4"], workers=1, block_size=1000)
    assert str(blocks.value) == str(whole.value) and "offset 30006" in str(whole.value)


def test_the_distinct_chunks_budget_stops_counting_with_one_line(corpora):
    corpus = open_corpus([str(corpora / "en/tinyshakespeare.txt")])
    seen = []
    with pytest.raises(TokexplorerError) as exc:
        count_corpus(corpus, NAMED_PATTERNS["gpt4"], workers=1, block_size=100_000, max_unique_mb=0.1,
                     progress=lambda done, size: seen.append(done))
    message = str(exc.value)
    assert "\n" not in message and "distinct chunks passed 0.1 MB" in message
    assert "over BPE training's budget of 0.1 MB of distinct chunks" in message and "--max-mb" in message
    assert seen and seen[-1] < corpus.size  # it stopped before the end
    assert count_corpus(corpus, NAMED_PATTERNS["gpt4"], workers=1, max_unique_mb=1)[0]  # 0.11 MB: within


def test_a_training_run_over_files_streams_and_learns_the_whole_text_merges(corpora, tmp_path):
    """run_bpe over files (streamed) and over the same text given whole: the same merges, sizes and
    tokens; the streamed run reports its progress in KB."""
    paths = (str(corpora / "en/taylorswift.txt"), str(corpora / "multilingual/ja_wagahaiwa_nekodearu.txt"))

    class Phases(Report):
        def __init__(self):
            self.seen = []

        def phase(self, what, done, total):
            self.seen.append((what, done, total))

    text = "".join(read_text_file(p) for p in paths)
    report = Phases()
    files = run_bpe(TrainingRequest("s", "bpe", 600, paths, pattern=NAMED_PATTERNS["gpt4"]), report)
    whole = run_bpe(TrainingRequest("w", "bpe", 600, text=text, pattern=NAMED_PATTERNS["gpt4"]), Report())
    assert list(files.merges.items()) == list(whole.merges.items()) and len(files.merges) == 344
    assert (files.corpus_bytes, files.trained_bytes, files.tokens) == (whole.corpus_bytes, whole.trained_bytes,
                                                                       whole.tokens)
    size = len(text.encode("utf-8")) // 1000  # in KB
    assert ("splitting into chunks", size, size) in report.seen


ASCII_PIECES = [*"sSdDtlLvVreE'aA1 \t\n\r\x0b\x0c\x1c\x1f/.-_", "ll", "'s", "'ve", "  ", "\r\n", "123", "4567"]


def test_the_ascii_forms_split_every_short_ascii_string_as_the_patterns_do():
    """Every string of up to three of these pieces (contractions in both cases, digits, every
    ASCII space and the separators `re` takes for spaces and `regex` does not)."""
    import itertools as it

    for name in PATTERNS:
        pattern = NAMED_PATTERNS[name]
        twin, compiled = ascii_twin(pattern), compile_pattern(pattern)
        for n in range(1, 4):
            for parts in it.product(ASCII_PIECES, repeat=n):
                text = "".join(parts)
                assert twin.findall(text.encode()) == [c.encode() for c in compiled.findall(text)], (name, text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80), st.sampled_from(PATTERNS))
@pytest.mark.property
def test_the_ascii_forms_split_ascii_text_as_the_patterns_do(text, name):
    pattern = NAMED_PATTERNS[name]
    assert ascii_twin(pattern).findall(text.encode()) == [c.encode() for c in compile_pattern(pattern).findall(text)]


def test_worker_processes_count_only_what_one_core_would_count_for_longer(corpora, tmp_path):
    """English and ASCII code count in this process whatever their size here (the compiled split
    outruns starting workers); text that is mostly not ASCII (`regex`) in workers from a few MB."""
    from tokexplorer.core.training.counting import _parallel_pays

    def corpus(rel: str, mb: int) -> CorpusFiles:
        data = (corpora / rel).read_bytes()
        path = tmp_path / Path(rel).name
        path.write_bytes(data * (mb * 1_000_000 // len(data) + 1))
        return open_corpus([str(path)])

    gpt4 = NAMED_PATTERNS["gpt4"]
    assert not _parallel_pays(open_corpus([str(corpora / "en/tinyshakespeare.txt")]), gpt4)
    assert not _parallel_pays(corpus("code/cpython311_typing.py", 8), gpt4)
    assert _parallel_pays(corpus("multilingual/ja_wagahaiwa_nekodearu.txt", 3), gpt4)
    assert not _parallel_pays(corpus("multilingual/ja_wagahaiwa_nekodearu.txt", 1), gpt4)
