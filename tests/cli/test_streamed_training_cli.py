"""`tokexplorer train` with a named pattern streams its corpus files: no corpus-size refusal, the
budget is on the distinct chunks (one line past it), and the model is the whole-text one."""

from __future__ import annotations

import pytest

from tokexplorer.cli.main import main
from tokexplorer.core import budgets
from tokexplorer.core.files.minbpe import minbpe_files
from tokexplorer.core.training import counting
from tokexplorer.core.training.bpe import train


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("pattern", ["gpt4", "gpt2"])
def test_a_corpus_over_the_old_size_budget_trains_in_worker_processes_to_the_whole_text_model(
        tmp_path, capsys, corpora, monkeypatch, pattern):
    """Two files, over a corpus budget of 1,000 bytes, counted by spawned workers in small blocks:
    the files written are those of the core trained on the concatenated text."""
    monkeypatch.setitem(budgets.TRAIN_LIMIT_MB, "bpe", 0.001)
    monkeypatch.setattr(counting, "SPAWN_SECONDS", -1.0)
    monkeypatch.setattr(counting, "BLOCK_MIN", 20_000)
    paths = [corpora / "en/taylorswift.txt", corpora / "multilingual/ja_wagahaiwa_nekodearu.txt"]
    code, out, err = run(capsys, "train", *paths, "--vocab-size", 500, "--pattern", pattern, "-o", tmp_path / "m")
    assert code == 0, err
    text = "".join(p.read_bytes().decode("utf-8") for p in paths)  # (CRLF kept, as the reader does)
    want = minbpe_files(train(text, 500, pattern=pattern), tmp_path / "m")
    assert {p: p.read_bytes() for p in want} == want
    assert f"corpus: {len(text.encode('utf-8'))} bytes" in out


def test_past_the_distinct_chunks_budget_training_stops_with_one_line(tmp_path, capsys, corpora):
    code, out, err = run(capsys, "train", corpora / "en/tinyshakespeare.txt", "--vocab-size", 300,
                         "--max-mb", 0.05, "-o", tmp_path / "m")
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("tokexplorer: error: the corpus's distinct chunks passed 0.05 MB after ")
    assert "over BPE training's budget of 0.05 MB of distinct chunks" in lines[0]
    assert "pass a larger --max-mb" in lines[0] and not list(tmp_path.iterdir())


def test_a_custom_pattern_still_holds_the_corpus_and_keeps_its_size_budget(tmp_path, capsys, corpora):
    code, _, err = run(capsys, "train", corpora / "en/tinyshakespeare.txt", "--vocab-size", 300,
                       "--pattern", r"\S+|\s+", "--max-mb", 0.05, "-o", tmp_path / "m")
    assert code == 1 and "the corpus is 1 MB, over BPE training's budget of 0.05 MB" in err, err


def test_the_files_written_without_a_tokenizer_are_the_tokenizers_files(tmp_path, capsys, corpora):
    """`train` writes PREFIX.model and PREFIX.vocab from the merges (files.minbpe.model_parts), special
    tokens included: byte for byte what the tokenizer trained on the same text writes."""
    path = corpora / "unicode/blns.txt"  # control characters, broken UTF-8 tokens: escaped in the .vocab
    code, _, err = run(capsys, "train", path, "--vocab-size", 700, "--special", "<|end|>", "--special", "<|pad|>=800",
                       "-o", tmp_path / "m")
    assert code == 0, err
    tok = train(path.read_bytes().decode("utf-8"), 700, pattern="gpt4", special_tokens={"<|end|>": 698, "<|pad|>": 800})
    want = minbpe_files(tok, tmp_path / "m")
    assert {p: p.read_bytes() for p in want} == want and b"<|pad|> 800" in want[tmp_path / "m.model"]
