"""The command line under hostile input: each case one line on stderr, exit 1 (130 for Ctrl-C),
and outputs that are a complete set or nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tokexplorer.cli import main
from tokexplorer.core import textfile
from tokexplorer.core.registry import load_tokenizer

ROOT = Path(__file__).resolve().parents[2]


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(capsys, *argv) -> str:
    code, _, err = run(capsys, *argv)
    assert code == 1, err
    lines = [line for line in err.strip().splitlines() if not line.startswith("merges: ")]  # progress
    assert "Traceback" not in err and len(lines) == 1, err
    assert lines[0].startswith("tokexplorer: error: ")
    return lines[0]


@pytest.fixture
def corpus(tmp_path) -> Path:
    path = tmp_path / "c.txt"
    path.write_text("the cat sat on the mat with the hat; " * 200, "utf-8")
    return path


def test_output_folder_is_refused_not_written_as_a_hidden_file(tmp_path, capsys, corpus):
    (tmp_path / "out").mkdir()
    for output in [f"{tmp_path / 'out'}/", tmp_path / "out"]:
        err = one_line_error(capsys, "train", corpus, "--vocab-size", 300, "-o", output)
        assert "is a folder" in err and "mymodel" in err
    assert list((tmp_path / "out").iterdir()) == []


@pytest.mark.parametrize("algorithm", ["bpe", "sentencepiece"])
def test_unwritable_output_is_refused_before_training(capsys, corpus, algorithm):
    err = one_line_error(capsys, "train", corpus, "--algorithm", algorithm, "--vocab-size", 300, "-o", "/sys/zz")
    assert "cannot write into /sys" in err


def test_outputs_get_the_umasks_mode(tmp_path, capsys, corpus):
    old = os.umask(0o022)
    try:
        code, _, _ = run(capsys, "train", corpus, "--vocab-size", 300, "-o", tmp_path / "m", "--tiktoken", "--gpt2")
    finally:
        os.umask(old)
    assert code == 0
    written = [tmp_path / "m.model", tmp_path / "m.vocab", tmp_path / "m.tiktoken",
               tmp_path / "m-gpt2" / "encoder.json", tmp_path / "m-gpt2" / "vocab.bpe"]
    assert [oct(p.stat().st_mode & 0o777) for p in written] == ["0o644"] * 5


@pytest.mark.parametrize("fits", [0, 1, 2, 4])
def test_a_full_disk_leaves_the_old_set_whole(tmp_path, capsys, corpus, monkeypatch, fits):
    """Whichever file of the set the disk fills on, every old file stays and no new one appears."""
    prefix = tmp_path / "m"
    assert run(capsys, "train", corpus, "--vocab-size", 260, "-o", prefix, "--tiktoken", "--gpt2")[0] == 0
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    calls, real = [0], os.fsync

    def fsync(fd):
        calls[0] += 1
        if calls[0] > fits:
            raise OSError(28, "No space left on device")
        real(fd)

    monkeypatch.setattr(textfile.os, "fsync", fsync)
    err = one_line_error(capsys, "train", corpus, "--vocab-size", 300, "-o", prefix, "--tiktoken", "--gpt2")
    assert "No space left on device (the old files are kept)" in err
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_a_full_disk_on_a_first_training_writes_nothing(tmp_path, capsys, corpus, monkeypatch):
    monkeypatch.setattr(textfile.os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    one_line_error(capsys, "train", corpus, "--vocab-size", 300, "-o", tmp_path / "m", "--gpt2")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt"]


def test_ctrl_c_during_a_retrain_keeps_the_complete_model(tmp_path, capsys):
    """A real SIGINT to a real process: the complete model stays, the partial one goes beside it."""
    corpus = Path(os.environ.get("TOKEXPLORER_CORPORA", ROOT.parent / "shared" / "corpora")) / "en" / "tinyshakespeare.txt"
    if not corpus.is_file():
        pytest.skip("the corpora are missing")
    prefix = tmp_path / "m"
    assert run(capsys, "train", corpus, "--vocab-size", 300, "-o", prefix, "--tiktoken")[0] == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tokexplorer", "train", str(corpus), "--pattern", "none", "--vocab-size", "60000",
         "-o", str(prefix), "--tiktoken"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stderr.readline().startswith("merges: ")  # training has started
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if not p.name.startswith("m-partial")} == before
    assert "the complete model at" in out and "unchanged" in out
    partial = load_tokenizer(tmp_path / "m-partial.model")
    assert 0 < len(partial.merges) < 60000 - 256
    assert (tmp_path / "m-partial.vocab").is_file() and (tmp_path / "m-partial.tiktoken").is_file()
