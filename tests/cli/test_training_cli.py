"""`tokexplorer train | merges | sweep`: the lecture's experiments, files other commands open, bad input."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from tokexplorer.cli.main import main
from tokexplorer.core.training import bpe as bpe_training
from tokexplorer.core.registry import load_tokenizer

def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def lecture_notebook(seeds) -> str:
    return seeds["000"]


def test_lecture_twenty_merges_on_the_unicode_article(tmp_path, capsys, lecture_notebook, lecture_article):
    """The lecture trains 20 merges (vocab 276, bytes only) on the Unicode article and prints
    'merging (101, 32) into a new token 256' ... and 'compression ratio: 1.27X' (24597 -> 19438)."""
    article = lecture_article
    expected = [tuple(map(int, m)) for m in re.findall(r"merging \((\d+), (\d+)\) into a new token", lecture_notebook)][:20]
    corpus = tmp_path / "unicode.txt"
    corpus.write_text(article, "utf-8")
    code, out, err = run(capsys, "train", corpus, "--vocab-size", 276, "--pattern", "none", "-o", tmp_path / "lecture")
    assert code == 0 and "merges: 20/20" in err
    assert "24597 bytes -> 19438 tokens, compression ratio 1.27X" in out
    tok = load_tokenizer(tmp_path / "lecture.model")
    assert list(tok.merges) == expected


def test_lecture_sentencepiece_toy_model(tmp_path, capsys, lecture_notebook):
    start = lecture_notebook.index('f.write("SentencePiece is')
    toy = ast.literal_eval(lecture_notebook[start + len("f.write("):lecture_notebook.index('")', start) + 1])
    corpus = tmp_path / "toy.txt"
    corpus.write_text(toy, "utf-8")
    code, out, _ = run(capsys, "train", corpus, "--algorithm", "sentencepiece", "--vocab-size", 400,
                       "-o", tmp_path / "tok400")
    assert code == 0 and "vocab size 400" in out
    vocab = (tmp_path / "tok400.vocab").read_text("utf-8").splitlines()
    assert [line.split("\t")[0] for line in vocab[259:262]] == ["en", "▁t", "ce"]
    code, out, _ = run(capsys, "encode", "-t", tmp_path / "tok400.model", "--json", "hello 안녕하세요")
    assert code == 0 and "byte_fallback" in out
    code, out, _ = run(capsys, "train", corpus, "--algorithm", "sentencepiece", "--vocab-size", 400,
                       "--option", "byte_fallback=false", "--show-options")
    assert json.loads(out)["byte_fallback"] is False and json.loads(out)["split_digits"] is True


def test_trained_model_works_in_every_command(tmp_path, capsys, corpora):
    prefix = tmp_path / "swift"
    code, out, _ = run(capsys, "train", corpora / "en/taylorswift.txt", "--vocab-size", 512,
                       "--special", "<|endoftext|>", "--tiktoken", "--gpt2", "--json", "-o", prefix)
    summary = json.loads(out)
    assert code == 0 and summary["merges"] == 255 and summary["special_tokens"] == {"<|endoftext|>": 511}
    assert sorted(Path(f).name for f in summary["files"]) == [
        "encoder.json", "swift.model", "swift.tiktoken", "swift.vocab", "vocab.bpe"]
    for other in [f"{prefix}.tiktoken", tmp_path / "swift-gpt2" / "encoder.json"]:
        code, out, _ = run(capsys, "encode", "-t", other, "--ids-only", "Taylor Swift")
        assert code == 0 and out.split() == [str(i) for i in load_tokenizer(f"{prefix}.model").encode("Taylor Swift").ids]
    code, out, _ = run(capsys, "encode", "-t", f"{prefix}.model", "--ids-only", "--allowed-special", "all",
                       "Taylor Swift<|endoftext|>")
    assert code == 0 and out.split()[-1] == "511"
    code, out, _ = run(capsys, "merges", "-t", f"{prefix}.model", "--token", " Taylor", "--json")
    tree = json.loads(out)["trees"][0]
    assert code == 0 and tree["text"] == " Taylor" and len(tree["children"]) == 2
    code, out, _ = run(capsys, "merges", "-t", "gpt2", "--token", "31373")
    assert code == 0 and out.splitlines()[0] == "31373 hello" and "└─" in out


def test_sweep_evaluates_prefixes_of_one_merge_list(tmp_path, capsys, corpora):
    corpus = tmp_path / "c.txt"
    corpus.write_text((corpora / "en/taylorswift.txt").read_text("utf-8")[:40_000], "utf-8")
    code, out, _ = run(capsys, "sweep", corpus, "--vocab-sizes", "256,300,400", "--json")
    results = json.loads(out)["results"]
    assert code == 0 and [r["vocab_size"] for r in results] == [256, 300, 400]
    tokens = [r["tokens"] for r in results]
    assert tokens[0] == len(corpus.read_bytes()) and tokens[0] > tokens[1] > tokens[2]
    smaller = bpe_training.train(corpus.read_text("utf-8"), 300, pattern="gpt4")
    assert tokens[1] == len(smaller.encode_ids(corpus.read_text("utf-8"), allowed_special="none"))


def test_cancel_keeps_what_was_learned(tmp_path, capsys, monkeypatch):
    real = bpe_training._step_batches  # behind every way of training

    def interrupted(*args, **kwargs):
        yield next(real(*args, **kwargs))[:5]  # a batch of five merges learned, then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(bpe_training, "_step_batches", interrupted)
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat with the hat " * 50, "utf-8")
    code, out, _ = run(capsys, "train", corpus, "--vocab-size", 300, "-o", tmp_path / "part")
    assert code == 130 and "interrupted: kept the 5 merges" in out
    assert len(load_tokenizer(tmp_path / "part.model").merges) == 5


def test_says_which_merge_loop_ran(tmp_path, capsys, monkeypatch):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat " * 20, "utf-8")
    monkeypatch.setenv(bpe_training.PURE_PYTHON_VARIABLE, "1")
    code, out, _ = run(capsys, "train", corpus, "--vocab-size", 300, "-o", tmp_path / "m")
    assert code == 0 and "(merge loop: pure Python (TOKEXPLORER_PURE_PYTHON is set))" in out
    monkeypatch.delenv(bpe_training.PURE_PYTHON_VARIABLE)
    code, out, _ = run(capsys, "train", corpus, "--vocab-size", 300, "-o", tmp_path / "m", "--json")
    assert code == 0 and json.loads(out)["merge_loop"] == bpe_training.merge_loop()


def test_stops_cleanly_when_no_pair_is_left(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("ab ab ab", "utf-8")
    code, out, _ = run(capsys, "train", corpus, "--vocab-size", 1000, "-o", tmp_path / "m")
    assert code == 0 and "no pair left" in out and "vocab size reached is 258" in out


@pytest.mark.parametrize("setup, argv, message", [
    (lambda d: (d / "c.txt").write_text(""), ["c.txt", "--vocab-size", "300"], "corpus is empty"),
    (lambda d: (d / "c.txt").write_text("abc"), ["c.txt", "--vocab-size", "200"], "at least 256"),
    (lambda d: (d / "c.txt").write_text("abc"), ["c.txt", "--vocab-size", "257", "--special", "<|a|>",
                                                 "--special", "<|b|>"], "at least 258"),
    (lambda d: (d / "c.txt").write_bytes(b"ok\n\xff\xfe"), ["c.txt", "--vocab-size", "300"],
     r"c\.txt: not UTF-8 text \(byte 0xFF at offset 3\)"),
    (lambda d: (d / "c.txt").write_text("abc"), ["c.txt", "--vocab-size", "300", "--pattern", "(?<"],
     "invalid split pattern"),
    (lambda d: (d / "c.txt").write_text("abc"), ["c.txt", "--vocab-size", "300", "--special", "<|a|>=100"],
     "byte or merged token"),
    (lambda d: (d / "c.txt").write_text("abc"), ["c.txt", "--vocab-size", "300", "--special", "<|a|>=299",
                                                 "--special", "<|b|>=299"], "both have id 299"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, monkeypatch, setup, argv, message):
    monkeypatch.chdir(tmp_path)
    setup(tmp_path)
    before = set(tmp_path.iterdir())
    code, out, err = run(capsys, "train", *argv, "-o", "out")
    assert code == 1 and re.search(message, err) and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err and set(tmp_path.iterdir()) == before


@pytest.mark.parametrize("algorithm", ["bpe", "sentencepiece"])
def test_missing_output_folder_is_refused_before_training(tmp_path, capsys, algorithm):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world " * 50, "utf-8")
    code, _, err = run(capsys, "train", corpus, "--algorithm", algorithm, "--vocab-size", 300,
                       "-o", tmp_path / "missing" / "m")
    assert code == 1 and "does not exist" in err and "Traceback" not in err


def test_corrupt_model_file_in_other_commands(tmp_path, capsys):
    bad = tmp_path / "bad.model"
    bad.write_text("minbpe v1\n\n0\n97 98\n256\n", "utf-8")
    code, _, err = run(capsys, "encode", "-t", bad, "hello")
    assert code == 1 and "truncated or corrupt" in err and "Traceback" not in err


@pytest.mark.parametrize("args, says", [
    (["--vocab-size", "100000"], r"use --vocab-size \d+ or less"),
    (["--vocab-size", "300", "--option", "character_coverage=2"], r"--option character_coverage="),
    (["--vocab-size", "300", "--option", "no_such=1"], r"no option no_such: --option takes the names --show-options"),
])
def test_sentencepiece_errors_speak_our_options(tmp_path, capsys, corpora, args, says):
    corpus = tmp_path / "c.txt"
    corpus.write_text((corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:100_000], "utf-8")
    code, out, err = run(capsys, "train", str(corpus), "--algorithm", "sentencepiece", *args,
                         "-o", str(tmp_path / "sp"))
    assert code == 1 and re.search(says, err.strip().splitlines()[-1]), err


def test_a_pattern_that_skips_text_warns_and_encode_shows_it_dropped(tmp_path, capsys):
    """Train with --pattern '[a-z]+' and encode "hi, there!": the warning counts the corpus bytes
    the pattern leaves out (11 of every 43); the table and the JSON put "there" at 4:9 and show ", " and "!" as
    dropped (no id), while the ids stay what minbpe's encoder gives."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("hi there, the other thing there. hi there! " * 20, encoding="utf-8")
    code, out, err = run(capsys, "train", corpus, "--vocab-size", 270, "--pattern", "[a-z]+", "-o", tmp_path / "az")
    assert code == 0 and "the pattern leaves out 220 of the corpus's 860 bytes" in err
    model = tmp_path / "az.model"
    code, out, err = run(capsys, "encode", "-t", model, "--json", "hi, there!")
    data = json.loads(out)
    tok = load_tokenizer(str(model))
    assert data["ids"] == tok.encode_chunk(b"hi") + tok.encode_chunk(b"there")
    assert [(t["start"], t["end"]) for t in data["tokens"]][-1][1] == 9
    assert "".join(t["text"] for t in data["tokens"]) == "hithere"
    assert data["dropped"] == [{"start": 2, "end": 4, "text": ", "}, {"start": 9, "end": 10, "text": "!"}]
    code, out, err = run(capsys, "encode", "-t", model, "hi, there!")
    rows = [line.split() for line in out.splitlines() if line.rstrip().endswith("dropped")]
    assert [row[-2:] for row in rows] == [["2:4", "dropped"], ["9:10", "dropped"]]


def test_sentencepiece_summary_counts_a_sample_of_a_big_corpus(tmp_path, capsys, corpora, monkeypatch):
    """Encoding a whole big corpus for the summary would take as long as training: a bounded
    prefix is counted, and said to be a sample."""
    from tokexplorer.core.training import sentencepiece as sentencepiece_training

    monkeypatch.setattr(sentencepiece_training, "SAMPLE_BYTES", 3_000)
    corpus = tmp_path / "swift.txt"
    text = (corpora / "en/taylorswift.txt").read_text("utf-8")[:30_000]
    corpus.write_text(text, "utf-8")
    code, out, _ = run(capsys, "train", corpus, "--algorithm", "sentencepiece", "--vocab-size", 400,
                       "-o", tmp_path / "sp", "--json")
    summary = json.loads(out)
    assert code == 0 and summary["corpus_tokens"] is None
    assert 2_000 < summary["counted_bytes"] <= 3_000 and summary["counted_tokens"] > 0
    sample = text.encode("utf-8")[:summary["counted_bytes"]].decode("utf-8")
    assert sample.endswith("\n")  # whole lines where there is a line end
    tok = load_tokenizer(tmp_path / "sp.model")
    assert summary["counted_tokens"] == len(tok.encode_ids(sample, allowed_special="none"))
    code, out, _ = run(capsys, "train", corpus, "--algorithm", "sentencepiece", "--vocab-size", 400,
                       "-o", tmp_path / "sp")
    assert f"its first {summary['counted_bytes']} bytes (a sample) -> {summary['counted_tokens']} tokens" in out


def test_sentencepiece_ctrl_c_during_the_summary_says_the_model_is_saved(tmp_path, capsys, monkeypatch):
    from tokexplorer.core.training import sentencepiece as sentencepiece_training

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(sentencepiece_training, "count_sample", interrupted)
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat with the hat\n" * 200, "utf-8")
    code, out, err = run(capsys, "train", corpus, "--algorithm", "sentencepiece", "--vocab-size", 300,
                         "-o", tmp_path / "sp")
    assert code == 130 and "the model is complete and saved" in err and "Traceback" not in err
    assert load_tokenizer(tmp_path / "sp.model").n_vocab == 300
    assert (tmp_path / "sp.vocab").read_text("utf-8").count("\n") == 300


def test_train_imports_only_what_it_needs(tmp_path):
    """`tokexplorer train` is a whole process a user waits for: a small corpus trains and saves
    without numpy, the tokenizer registry (every family's code), tiktoken or Qt."""
    import subprocess
    import sys

    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat with the hat; " * 200, "utf-8")
    code = ("import sys; from tokexplorer.cli.main import main; "
            f"code = main(['train', {str(corpus)!r}, '--vocab-size', '300', '-o', {str(tmp_path / 'm')!r}]); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'tiktoken', 'PySide6', "
            "'multiprocessing') or m == 'tokexplorer.core.registry'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "m.model").exists()


def test_ctrl_c_after_the_merge_loop_keeps_the_whole_model(tmp_path, capsys, monkeypatch):
    """A real SIGINT while the files are being written: they are written whole, the command says
    so and exits 130 (it used to save nothing)."""
    import os
    import signal

    from tokexplorer.core.training import runner

    real = runner.write_outputs

    def interrupted_while_writing(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # delivered at once, in this (the main) thread
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "write_outputs", interrupted_while_writing)
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat with the hat " * 50, "utf-8")
    code, out, err = run(capsys, "train", corpus, "--vocab-size", 270, "-o", tmp_path / "m", "--tiktoken")
    assert code == 130 and "interrupted after training had finished: the model was saved whole" in err
    learned = load_tokenizer(tmp_path / "m.model")
    assert len(learned.merges) == 14 and load_tokenizer(tmp_path / "m.tiktoken").n_vocab == learned.n_vocab == 270
