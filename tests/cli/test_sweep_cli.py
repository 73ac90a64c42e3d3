"""`tokexplorer sweep` without `--held-out`, or with `--eval FILE`: the corpus counted from its file
(a named pattern or none) and the evaluation file counted a block at a time, never read whole by
a tokenizer that does not need it; the table is the whole-text sweep's. What must see a text whole
is refused over its budget before training, in one line naming --max-mb."""

from __future__ import annotations

import json

import pytest

from tokexplorer.cli.commands import training
from tokexplorer.cli.main import main
from tokexplorer.core.analysis.sweep import sweep
from tokexplorer.core.files.text_blocks import TextFile
from tokexplorer.core.files.textfile import read_text_file
from tokexplorer.core.registry import load_tokenizer

SIZES = [256, 300, 400]


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def error_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if not line.startswith("merges: ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def corpus(tmp_path, corpora):
    path = tmp_path / "corpus.txt"
    path.write_text((corpora / "en/taylorswift.txt").read_text("utf-8")[:60_000]
                    + (corpora / "multilingual/ja_wagahaiwa_nekodearu.txt").read_text("utf-8")[:10_000], "utf-8")
    return path


@pytest.fixture
def reads(monkeypatch):
    """The texts read whole: the corpus (`_read_corpora`) and any `TextFile`."""
    seen = []
    monkeypatch.setattr(training, "_read_corpora", lambda *a, _read=training._read_corpora: seen.append(a) or _read(*a))
    monkeypatch.setattr(TextFile, "read", lambda self, _read=TextFile.read: seen.append(self.path) or _read(self))
    return seen


@pytest.mark.parametrize("pattern", ["gpt4", "none", r"\w+|\s+|[^\w\s]+"])
def test_the_corpus_evaluated_on_itself(capsys, corpus, reads, pattern):
    """Counted from the file with a named pattern or none (a custom pattern reads it whole, as
    training does); the references count the file a block at a time."""
    code, out, err = run(capsys, "sweep", corpus, "--vocab-sizes", "256,300,400", "-p", pattern, "-t", "gpt2",
                         "-t", "o200k_base", "--json")
    assert code == 0, err
    assert bool(reads) == (pattern not in ("gpt4", "none"))
    text = read_text_file(corpus)
    want = sweep(text, SIZES, pattern=None if pattern == "none" else pattern, eval_text=text,
                 eval_source="the corpus", references=[load_tokenizer("gpt2"), load_tokenizer("o200k_base")])
    assert json.loads(out) == json.loads(json.dumps(want.to_dict()))


@pytest.mark.parametrize("pattern", ["gpt2", "none"])
def test_an_evaluation_file_is_counted_a_block_at_a_time(capsys, tmp_path, corpus, corpora, reads, pattern):
    evaluation = tmp_path / "eval.txt"
    evaluation.write_bytes(b"\xef\xbb\xbf" + (corpora / "unicode/emoji-test.txt").read_bytes()
                           + (corpora / "multilingual/zh_hans_lunyu.txt").read_bytes())
    code, out, err = run(capsys, "sweep", corpus, "--vocab-sizes", "256,300,400", "-p", pattern,
                         "--eval", evaluation, "-t", "cl100k_base", "--json")
    assert code == 0, err
    assert reads == []
    want = sweep(read_text_file(corpus), SIZES, pattern=None if pattern == "none" else pattern,
                 eval_text=read_text_file(evaluation), eval_source="eval.txt",
                 references=[load_tokenizer("cl100k_base")])
    assert json.loads(out) == json.loads(json.dumps(want.to_dict()))


def test_a_custom_pattern_over_its_whole_text_budget_is_refused_before_training(capsys, tmp_path):
    """The trained BPE with a pattern of its own counts the evaluation text whole."""
    corpus, evaluation = tmp_path / "c.txt", tmp_path / "e.txt"
    corpus.write_text("the cat sat on the mat\n" * 400, "utf-8")  # 9 KB
    evaluation.write_text("the dog sat on the log\n" * 3000, "utf-8")  # 69,000 characters
    code, _, err = run(capsys, "sweep", corpus, "--vocab-sizes", "256,260", "-p", r"\w+|\W+", "--eval", evaluation,
                       "-t", "none", "--max-mb", 0.05)
    line = error_line(err)
    assert code == 1 and "merges:" not in err
    assert "the trained BPE encodes a text whole" in line and "--max-mb 1 to go on" in line
    code, out, err = run(capsys, "sweep", corpus, "--vocab-sizes", "256,260", "-p", "gpt4", "--eval", evaluation,
                         "-t", "none", "--max-mb", 0.05)
    assert code == 0 and "e.txt (69,000 bytes)" in out, err


def test_a_stretch_no_pattern_cannot_cut_is_refused_with_a_way_on(capsys, tmp_path):
    corpus, evaluation = tmp_path / "c.txt", tmp_path / "e.txt"
    corpus.write_text("a" * 1000 + "\n", "utf-8")
    evaluation.write_text("a" * 300_000, "utf-8")  # merged from a, aa, aaaa...: no place to cut
    code, _, err = run(capsys, "sweep", corpus, "--vocab-sizes", "256,260", "-p", "none", "--eval", evaluation,
                       "-t", "none", "--max-mb", 0.2)
    line = error_line(err)
    assert code == 1 and line.startswith("tokexplorer: error: the trained BPE at 260 has no split pattern "
                                         "and must merge 0.3 MB of the text at once")
    assert "over the 0.2 MB that keep memory near 40 MB" in line and "--max-mb 1 to go on (about 60 MB)" in line


def test_a_named_patterns_budget_is_on_the_distinct_chunks_as_trains(capsys, tmp_path):
    """Counted from the file, the corpus is not held: its size is not refused, its distinct
    chunks are (`train`'s budget); with no pattern it is held whole, and its size is refused."""
    corpus = tmp_path / "c.txt"
    words = [" " + "".join(chr(97 + i // 26 ** k % 26) for k in range(4)) for i in range(20_000)]
    corpus.write_text("".join(words) + "\n", "utf-8")  # 0.1 MB, 20,000 distinct chunks
    code, _, err = run(capsys, "sweep", corpus, "--vocab-sizes", "256,260", "-t", "none", "--max-mb", 0.05)
    assert code == 1 and "the corpus's distinct chunks passed 0.05 MB" in error_line(err)
    code, _, err = run(capsys, "sweep", corpus, "--vocab-sizes", "256,260", "-t", "none", "--max-mb", 0.09)
    assert code == 1 and "the corpus's distinct chunks passed 0.09 MB" in error_line(err)
    code, _, err = run(capsys, "sweep", corpus, "--vocab-sizes", "256,260", "-t", "none", "--max-mb", 0.11)
    assert code == 0, err
    code, _, err = run(capsys, "sweep", corpus, "--vocab-sizes", "256,260", "-t", "none", "-p", "none",
                       "--max-mb", 0.09)
    assert code == 1 and "over BPE training's budget of 0.09 MB" in error_line(err) and "merges:" not in err


@pytest.mark.parametrize("held_out", [[], ["--held-out", "0.5"]])
def test_a_corpus_that_is_not_utf8_is_one_line(capsys, tmp_path, held_out):
    """Measured for llama-sp's budget (it counts the corpus whole) or split: the reader's line."""
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"the cat sat\n" * 100 + b"\xff\n" + b"the mat\n" * 100)
    code, _, err = run(capsys, "sweep", corpus, "--vocab-sizes", "256,260", *held_out)
    assert code == 1 and error_line(err) == (f"tokexplorer: error: {corpus}: not UTF-8 text (byte 0xFF at offset 1200); "
                                             "if it is in another encoding, name it with --encoding (e.g. --encoding latin-1)")
