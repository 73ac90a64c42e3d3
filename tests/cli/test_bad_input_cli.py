"""The command line under hostile input: each case one line on stderr, exit 1 (130 for Ctrl-C),
and outputs that are a complete set or nothing."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tokexplorer.cli.main import main
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.files import textfile
from tokexplorer.core.registry import load_tokenizer

ROOT = Path(__file__).resolve().parents[2]


def as_from_a_terminal() -> None:
    """The child's Ctrl-C as a shell starts it: delivered (unblocked) and not ignored, whatever
    signal state this test process carries by now (in the whole suite one worker's children once
    came ignoring or blocking it: the cause was not found)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(capsys, *argv) -> str:
    code, _, err = run(capsys, *argv)
    assert code == 1, err
    progress = ("merges: ", "sentences: ", "sentencepiece: reading")
    lines = [line for line in err.strip().splitlines() if not line.startswith(progress)]
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
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=as_from_a_terminal)
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


def test_ctrl_c_while_sentencepiece_trains_stops_at_once(tmp_path):
    """SentencePiece trains in one library call: Ctrl-C once the sentences are read ends the command
    within seconds, though the training left would take longer, and writes nothing."""
    corpus = tmp_path / "big.txt"
    rng = random.Random(7)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyzéñ") for _ in range(rng.randint(2, 9))) for _ in range(40_000)]
    corpus.write_text("\n".join(" ".join(rng.choices(words, k=12)) for _ in range(300_000)), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tokexplorer", "train", str(corpus), "--algorithm", "sentencepiece",
         "--model-type", "unigram", "--vocab-size", "32000", "-o", str(tmp_path / "m")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=as_from_a_terminal)
    for line in proc.stderr:  # "sentences: 300000/300000": every sentence is read, training has begun
        done, _, total = line.rpartition(" ")[2].strip().partition("/")
        if line.startswith("sentences: ") and done == total:
            break
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted while SentencePiece trained: nothing was written" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]


# --- the traceback list: each case one line, exit 1 -------------------------------------------

@pytest.fixture(scope="module")
def bad_files(tmp_path_factory) -> dict[str, Path]:
    """Tokenizer files that made tiktoken's Rust core panic, or Python raise something raw."""
    d = tmp_path_factory.mktemp("bad")
    from tokexplorer.core.backends.trained_bpe import BPETokenizer
    from tokexplorer.core.files.minbpe import save_tiktoken

    save_tiktoken(BPETokenizer({(104, 105): 256, (256, 33): 257}, None), d / "ok.tiktoken")
    lines = (d / "ok.tiktoken").read_bytes().splitlines(keepends=True)
    files = {
        "one_line": b"YQ== 0\n",
        "cut_mid_file": b"".join(lines[:200]) + lines[200][:6],  # "yA== 2" of "yA== 200"
        "duplicate_rank": b"".join(lines) + b"YWJj 5\n",
        "minbpe_cut_mid_line": b"minbpe v1\n\n0\n104 105\n256 3",
        "minbpe_huge_special": b"minbpe v1\n\n1\n<x> 100000000000000000000000\n104 105\n",
    }
    paths = {}
    for name, data in files.items():
        suffix = ".model" if name.startswith("minbpe") else ".tiktoken"
        paths[name] = d / f"{name}{suffix}"
        paths[name].write_bytes(data)
    gpt2 = d / "gpt2"
    gpt2.mkdir()
    (gpt2 / "encoder.json").write_text('{"a": "1", "b": 2}', "utf-8")
    (gpt2 / "vocab.bpe").write_text("#version: 0.2\n", "utf-8")
    paths["json_not_ints"] = gpt2 / "encoder.json"
    return paths


@pytest.mark.parametrize("name, message", [
    ("one_line", r"byte 0x00 is not a token"),
    ("cut_mid_file", r"line 201: rank 2 is on line 3 too; the \.tiktoken file is truncated"),
    ("duplicate_rank", r"rank 5 is on line 6 too"),
    ("minbpe_cut_mid_line", r"line 5 \('256 3'\) has no line end: the file was cut mid-line"),
    ("minbpe_huge_special", r"special token '<x>' has id 100,000,000,000,000,000,000,000"),
    ("json_not_ints", r"the id of 'a' is \"1\", not a whole number"),
])
@pytest.mark.parametrize("command", ["encode", "decode"])
def test_inconsistent_tokenizer_files_are_one_line(capsys, bad_files, name, message, command):
    err = one_line_error(capsys, command, "-t", bad_files[name], "hello" if command == "encode" else "104")
    assert re.search(message, err), err


@pytest.mark.parametrize("argv, message", [
    (["encode", "--file", "{corpus}", "--encoding", "rot13"], "'rot13' is not a text encoding"),
    (["encode", "--add-special", "<x>=1099511627776", "hi"], "far beyond the vocabulary"),
    (["encode", "--add-special", "<x>=-5", "hi"], "the id must be a whole number from 0"),
    (["train", "{corpus}", "--vocab-size", "4611686018427387904", "-o", "{out}"], "from 1 to 2,147,483,647"),
    (["train", "{corpus}", "--algorithm", "sentencepiece", "--vocab-size", "4611686018427387904", "-o", "{out}"],
     "from 1 to 2,147,483,647"),
    (["sweep", "{corpus}", "--vocab-sizes", "256,4611686018427387904"], "is too large: the most is 2,147,483,647"),
    (["train", "{corpus}", "--special", "<x>=100000000000000000000000", "--vocab-size", "300", "-o", "{out}"],
     "has id 100,000,000,000,000,000,000,000; special ids run from"),
    (["train", "{corpus}", "--algorithm", "sentencepiece", "--vocab-size", "300", "--option", "model_type=word",
      "-o", "{out}"], "set it with --model-type"),
    (["train", "{corpus}", "--algorithm", "sentencepiece", "--vocab-size", "300", "--option", "vocab_size=300",
      "-o", "{out}"], "set it with --vocab-size"),
    (["train", "{corpus}", "--algorithm", "sentencepiece", "--vocab-size", "300", "--option",
      "character_coverage=2", "-o", "{out}"], "must satisfy character_coverage >= 0.98"),
    (["train", "{corpus}", "--algorithm", "sentencepiece", "--vocab-size", "300", "--option",
      "byte_fallback=maybe", "-o", "{out}"], 'cannot parse "maybe" as bool'),
    (["bench", "--corpus", "/bin/ls"], "/bin/ls: not UTF-8 text"),
    (["bench", "--corpus", "{out}"], "no such file"),
    (["bench", "--repeat", "0"], "give 1 or more runs"),
    (["bench", "--gui", "--huge-mb", "100"], "the window opens texts of up to 64 MB"),
    (["decode", "-t", "gpt2", "١٢"], "'١٢' is not a token id"),
    (["decode", "-t", "gpt2", "１２"], "'１２' is not a token id"),
    (["decode", "-t", "gpt2", "1_000"], "'1_000' is not a token id"),
    (["decode", "-t", "gpt2", "+5"], "'\\+5' is not a token id"),
])
def test_the_traceback_list_is_one_line_each(tmp_path, capsys, corpus, argv, message):
    argv = [a.format(corpus=corpus, out=tmp_path / "nothing") for a in argv]
    err = one_line_error(capsys, *argv)
    assert re.search(message, err), err
    assert not list(tmp_path.glob("nothing*"))


def test_utf16_without_bom_is_recognised(tmp_path, capsys):
    path = tmp_path / "u.txt"
    path.write_bytes("hello world, héllo".encode("utf-16-le"))
    err = one_line_error(capsys, "encode", "--file", path)
    assert "looks like UTF-16-LE text without a byte-order mark" in err and "--encoding utf-16-le" in err
    code, out, _ = run(capsys, "encode", "--file", path, "--encoding", "utf-16-le", "--ids-only")
    assert code == 0 and out.split() == ["15339", "1917", "11", "305", "19010", "385"]


def test_a_native_panic_that_gets_through_is_still_one_line(capsys, monkeypatch):
    """The last net in main(): a panic the checks did not foresee."""
    import tiktoken

    try:
        tiktoken.Encoding("x", pat_str=r"\S+", mergeable_ranks={b"a": 0}, special_tokens={}).encode("b")
    except BaseException as exc:  # noqa: B036 - a pyo3 PanicException is a BaseException
        panic = exc
    assert not isinstance(panic, Exception)
    monkeypatch.setattr("tokexplorer.cli.main.build_parser", _parser_running(lambda args: (_ for _ in ()).throw(panic)))
    err = one_line_error(capsys, "list")
    assert "failed inside its native core" in err


def _parser_running(handler):
    import argparse

    def build(*_):
        parser = argparse.ArgumentParser()
        parser.add_argument("command")
        parser.set_defaults(handler=handler)
        return parser

    return build


@pytest.mark.parametrize("raised", [KeyboardInterrupt(), ImportError("numpy failed")])
def test_ctrl_c_during_start_up_is_one_line_and_130(capsys, monkeypatch, raised):
    """A Ctrl-C while a sub-command imports its libraries (numpy turns it into an ImportError)."""
    if isinstance(raised, ImportError):
        try:
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt as inner:
                raise raised from inner
        except ImportError as exc:
            raised = exc

    def build(*_):
        raise raised

    monkeypatch.setattr("tokexplorer.cli.main.build_parser", build)
    code, _, err = run(capsys, "list")
    assert code == 130 and err == "tokexplorer: interrupted\n"


def test_inspect_of_a_huge_text_summarises_in_bounded_memory(tmp_path, capsys):
    import json
    import tracemalloc

    from tokexplorer.cli.commands.inspecting import TABLE_BUDGET

    text = ("The quick brown fox 👋🏽 jumps;\u200b naïve 日本語\r\n" * 25_000)  # 1 M code points
    path = tmp_path / "big.txt"
    path.write_bytes(text.encode("utf-8"))
    tracemalloc.start()
    try:
        code, out, _ = run(capsys, "inspect", "--file", path, "--json", "--offset", 20, "--limit", 3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 0
    result = json.loads(out)
    assert result["summary"] and len(text) > TABLE_BUDGET
    assert result["sizes"]["code_points"] == len(text) == sum(result["scripts"].values())
    assert result["sizes"]["utf8"] == len(text.encode("utf-8"))
    assert result["sizes"]["utf16_units"] == len(text.encode("utf-16-le")) // 2
    assert result["scripts"]["Han"] == 3 * 25_000
    assert [u["codepoint"] for u in result["unusual"]] == ["U+000A", "U+000D", "U+200B"]
    assert [c["char"] for c in result["code_points"]] == list(text[20:23]) and result["code_points"][0]["index"] == 20
    # the whole table would take about 2 GB; the summary, a few times the text (4 MB as UCS-4)
    assert peak < 40_000_000, peak


def test_inspect_with_a_tokenizer_lists_a_page_of_a_huge_text_in_bounded_memory(tmp_path, capsys):
    """With -t, a range over TABLE_BUDGET code points lists its first --limit rows; the counts
    cover all of it (every byte's row took 1.8 GB for 1 MB)."""
    import json
    import tracemalloc

    text = "The quick brown fox 👋🏽 jumps;\u200b naïve 日本語\n" * 5_000  # 200,000 code points
    path = tmp_path / "big.txt"
    path.write_bytes(text.encode("utf-8"))
    tracemalloc.start()
    try:
        code, out, _ = run(capsys, "inspect", "-t", "cl100k_base", "--file", path, "--json", "--limit", 7)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    result = json.loads(out)
    assert code == 0 and result["counts"]["chars"] == len(text) and result["shown_code_points"] == 7
    assert [c["char"] for c in result["code_points"]] == list(text[:7])
    assert result["counts"]["tokens"] == len(get_builtin("cl100k_base").encode_ids(text))
    assert peak < 150_000_000, peak


def test_inspect_page_arguments_are_checked(capsys):
    assert "--limit from 0 to 10,000" in one_line_error(capsys, "inspect", "--limit", "20000", "x")


@pytest.mark.parametrize("algorithm", ["bpe", "sentencepiece"])
def test_a_corpus_over_the_training_budget_is_refused_before_reading(tmp_path, capsys, corpus, monkeypatch,
                                                                       algorithm):
    from tokexplorer.cli.commands import training
    from tokexplorer.core import budgets

    read = []
    monkeypatch.setattr(training, "_read_corpora", lambda *a: read.append(a) or "")
    out = tmp_path / "m"
    # (BPE with a named pattern streams the corpus, any size: Basic BPE holds it whole)
    basic = ("--pattern", "none") if algorithm == "bpe" else ()
    err = one_line_error(capsys, "train", corpus, "--algorithm", algorithm, "--vocab-size", 300,
                         "--max-mb", 0.005, "-o", out, *basic)
    assert f"over {'BPE' if algorithm == 'bpe' else 'SentencePiece'} training's budget of 0.005 MB" in err
    assert "--max-mb 1 to go on" in err and not read and not list(tmp_path.glob("m*"))
    monkeypatch.setitem(budgets.TRAIN_LIMIT_MB, algorithm, 0.005)  # the default budget
    assert "budget of 0.005 MB" in one_line_error(capsys, "train", corpus, "--algorithm", algorithm,
                                                  "--vocab-size", 300, "-o", out, *basic)


def test_a_larger_budget_trains_the_same_corpus(tmp_path, capsys, corpus):
    code, out, err = run(capsys, "train", corpus, "--vocab-size", 260, "--max-mb", 0.01, "-o", tmp_path / "m")
    assert code == 0 and "learned 4 merges" in out, err


def test_sweep_refuses_before_training_what_it_could_not_count(tmp_path, capsys, corpus):
    # with no pattern the corpus is held whole: refused before it is read
    err = one_line_error(capsys, "sweep", corpus, "--vocab-sizes", "256,260", "-p", "none", "--max-mb", 0.005)
    assert "over BPE training's budget of 0.005 MB" in err
    # a named pattern counts it from the file, but llama-sp counts it whole (the evaluation text)
    code, _, err = run(capsys, "sweep", corpus, "--vocab-sizes", "256,260", "--max-mb", 0.005)
    assert code == 1 and "llama-sp encodes a text whole" in err and "merges:" not in err, err
    # llama-sp counts the evaluation text whole: a text over its budget is refused before any merge
    evaluation = tmp_path / "eval.txt"
    evaluation.write_text("x" * 20_000, "utf-8")
    code, _, err = run(capsys, "sweep", corpus, "--vocab-sizes", "256,260", "--eval", evaluation,
                       "-t", "gpt2", "-t", "llama-sp", "--max-mb", 0.01)
    assert code == 1 and "llama-sp encodes a text whole" in err and "merges:" not in err, err
    code, out, err = run(capsys, "sweep", corpus, "--vocab-sizes", "256,260", "--eval", evaluation,
                         "-t", "gpt2", "--max-mb", 0.01)
    assert code == 0 and "gpt2" in out, err


def test_ctrl_c_while_a_huge_text_is_encoded_is_one_line_and_130(tmp_path, corpora):
    """A real SIGINT once the table has begun: the command stops at once, says so in one line."""
    path = tmp_path / "big.txt"
    path.write_bytes((corpora / "en" / "tinyshakespeare.txt").read_bytes() * 3)  # 3.3 MB, 1M rows
    proc = subprocess.Popen([sys.executable, "-m", "tokexplorer", "encode", "--file", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=as_from_a_terminal)
    try:
        assert proc.stdout.readline().split()[:3] == ["#", "id", "bytes"]  # the table has begun
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 130 and err == "tokexplorer: interrupted\n", err


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="no /proc")
@pytest.mark.parametrize("argv", [["encode", "--file", "{mem}"], ["encode", "-t", "{mem}", "hello"],
                                  ["train", "{mem}", "--vocab-size", "300", "-o", "{tmp}/m"]])
def test_a_file_that_cannot_be_read_is_one_line(capsys, tmp_path, argv):
    """/proc/self/mem: every read of it fails (EIO), even as root, as an unreadable file's would."""
    argv = [a.format(mem="/proc/self/mem", tmp=tmp_path) for a in argv]
    assert "cannot read /proc/self/mem: Input/output error" in one_line_error(capsys, *argv)
