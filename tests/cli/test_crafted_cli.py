"""The command line given crafted files and arguments: one line on stderr, the right exit code,
no traceback, in bounded time and memory (the commands run in a child process whose address space
is limited, so a command that believed a file would fail there, not exhaust the machine)."""

from __future__ import annotations

import json
import os
import resource
import struct
import subprocess
import sys
import types
from pathlib import Path

import pytest

from tokexplorer.cli.main import main

ADDRESS_SPACE = 1 << 30


def tokexplorer(*argv, timeout: float = 60, module: str = "tokexplorer") -> subprocess.CompletedProcess:
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    return subprocess.run([sys.executable, "-m", module, *map(str, argv)], capture_output=True,
                          text=True, timeout=timeout, preexec_fn=limit, stdin=subprocess.DEVNULL)


def one_line(proc: subprocess.CompletedProcess, code: int = 1) -> str:
    """The only line on stderr (usage errors: the last, after argparse's usage lines)."""
    assert proc.returncode == code, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr, proc.stderr[-3000:]
    lines = proc.stderr.strip().splitlines()
    if code == 1:
        assert len(lines) == 1, proc.stderr
    return lines[-1]


def test_a_tiny_tiktoken_file_with_a_huge_rank_is_one_line(tmp_path):
    import base64

    lines = [base64.b64encode(bytes([i])) + b" %d" % i for i in range(256)]
    path = tmp_path / "big.tiktoken"
    path.write_bytes(b"\n".join(lines + [base64.b64encode(b"ab") + b" %d" % (1 << 30)]) + b"\n")
    err = one_line(tokexplorer("encode", "-t", path, "hi"))
    assert err.startswith("tokexplorer: error: ") and "has id 1,073,741,824" in err


def test_a_gguf_claiming_two_to_the_sixty_tokens_is_one_line(tmp_path):
    def string(s: str) -> bytes:
        return struct.pack("<Q", len(s)) + s.encode()

    data = (b"GGUF" + struct.pack("<IQQ", 3, 0, 2) + string("tokenizer.ggml.model") + struct.pack("<I", 8)
            + string("gpt2") + string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 1 << 60))
    path = tmp_path / "tiny.gguf"
    path.write_bytes(data)
    assert len(data) < 120
    assert "claims 1,152,921,504,606,846,976 entries" in one_line(tokexplorer("encode", "-t", path, "hi"))


@pytest.mark.parametrize("argv", [
    ["encode", "-t", "/dev/zero", "hi"],
    ["encode", "--file", "/dev/urandom"],
    ["train", "/dev/zero", "--vocab-size", "300", "-o", "{tmp}/m"],
    ["encode", "-t", "{fifo}", "hi"],
    ["encode", "--file", "{fifo}"],
    ["train", "{fifo}", "--vocab-size", "300", "-o", "{tmp}/m"],
])
def test_devices_and_fifos_are_refused_before_reading(tmp_path, argv):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    proc = tokexplorer(*[a.format(tmp=tmp_path, fifo=fifo) for a in argv], timeout=30)
    assert "not a regular file" in one_line(proc)
    assert not list(tmp_path.glob("m*"))


@pytest.mark.parametrize("argv", [
    ["encode", "--max-mb", "nan", "hi"],
    ["encode", "--max-mb", "-3", "hi"],
    ["compare", "--max-mb", "inf", "hi"],
    ["train", "{corpus}", "--vocab-size", "300", "-o", "{tmp}/m", "--max-mb", "nan"],
    ["train", "{corpus}", "--vocab-size", "300", "-o", "{tmp}/m", "--max-mb", "-3"],
    ["sweep", "{corpus}", "--vocab-sizes", "260", "--max-mb", "0"],
])
def test_a_budget_that_is_not_a_positive_number_is_a_usage_error(tmp_path, capsys, argv):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat\n", "utf-8")
    with pytest.raises(SystemExit) as exit:
        main([a.format(corpus=corpus, tmp=tmp_path) for a in argv])
    err = capsys.readouterr().err
    assert exit.value.code == 2 and "is not a number of MB above 0" in err and "Traceback" not in err
    assert "head -c -" not in err and not list(tmp_path.glob("m*"))


def test_the_training_refusal_suggests_a_part_within_the_budget(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat\n" * 100_000, "utf-8")  # 2.3 MB
    assert main(["train", str(corpus), "--vocab-size", "300", "-o", str(tmp_path / "m"), "--max-mb", "1", "--pattern", "none"]) == 1
    err = capsys.readouterr().err
    assert "head -c 1MB CORPUS" in err  # head's "1M" would be 1,048,576 bytes: over the budget
    assert main(["train", str(corpus), "--vocab-size", "300", "-o", str(tmp_path / "m"), "--max-mb", "0.5", "--pattern", "none"]) == 1
    assert "head -c 500000 CORPUS" in capsys.readouterr().err


def test_a_corpus_read_whole_for_its_nul_bytes_takes_the_training_budget(tmp_path):
    """A named pattern streams UTF-8, but a file with NUL bytes near its start (UTF-16, or what may
    be) is read whole: a 10 GB sparse file of NULs is refused by its size before a byte is read."""
    corpus = tmp_path / "sparse.txt"
    with open(corpus, "wb") as f:
        f.truncate(10 << 30)  # no blocks on disk
    proc = tokexplorer("train", corpus, "--vocab-size", "300", "-o", tmp_path / "m", timeout=30)
    line = one_line(proc)
    assert "--max-mb" in line and "head -c" in line, line
    assert not list(tmp_path.glob("m*"))


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="no procfs")
def test_a_corpus_file_that_tells_no_size_is_read_whole(tmp_path):
    """A /proc file says it has 0 bytes and has some: training read it as "the corpus is empty"."""
    proc = tokexplorer("train", "/proc/self/status", "--vocab-size", "260", "-o", tmp_path / "m", timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert "corpus: 0 bytes" not in proc.stdout and (tmp_path / "m.model").stat().st_size > 0


@pytest.mark.parametrize("argv", [["encode", "--file"], ["inspect", "--file"], ["compare", "--file"],
                                  ["encode", "--encoding", "latin-1", "--file"]])
def test_a_text_file_read_whole_is_refused_by_its_size_before_reading(tmp_path, argv):
    """A file with NUL bytes (or UTF-16, or any file with --encoding) is read whole, not in blocks:
    a 10 GB sparse file of NULs took the machine's memory; now one line, nothing read."""
    path = tmp_path / "sparse.txt"
    with open(path, "wb") as f:
        f.truncate(10 << 30)  # no blocks on disk
    line = one_line(tokexplorer(*argv, path, timeout=30))
    assert "10,737 MB, over the 256 MB a text read whole may take" in line, line


@pytest.mark.parametrize("how", ["argument", "file"])
def test_a_deeply_nested_conversation_is_one_line(tmp_path, how):
    deep = "[" * 20_000 + "]" * 20_000  # an argument may have 128 KB
    if how == "file":
        (tmp_path / "chat.json").write_text(deep, "utf-8")
        proc = tokexplorer("chat", "--file", tmp_path / "chat.json")
    else:
        proc = tokexplorer("chat", deep)
    assert "nested too deeply" in one_line(proc)


def test_a_deeply_nested_tokenizer_config_is_one_line(tmp_path):
    (tmp_path / "tokenizer.json").write_text('{"normalizer": null, "model": ' + "[" * 50_000 + "]" * 50_000 + "}")
    assert "nested too deeply" in one_line(tokexplorer("encode", "-t", tmp_path / "tokenizer.json", "hi"))


def test_chat_json_with_an_array_of_ids_is_json(capsys):
    code = main(["chat", "-t", "deepseek-v4", "--json", '[{"role": "user", "content": "hello"}]'])
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(out)
    assert result["ids"] and all(isinstance(i, int) for i in result["ids"]) and result["total"] == len(result["ids"])


def test_the_chat_summary_never_counts_a_negative_share(capsys, monkeypatch):
    from tokexplorer.cli.commands import chatting

    part = types.SimpleNamespace(index=0, role="user", start=0, end=2, tokens=3, content_tokens=5)
    count = types.SimpleNamespace(format="chatml", text="hi", total=8, overhead=-2, parts=[part],
                                  encoding=types.SimpleNamespace(ids=[1] * 8))
    monkeypatch.setattr(chatting, "count_chat", lambda *a, **k: count)
    assert main(["chat", "-t", "cl100k_base", '[{"role": "user", "content": "hi"}]']) == 0
    err = capsys.readouterr().err
    assert "-2 of them" not in err and "take 2 more than that" in err


def test_an_unknown_allowed_special_names_a_few_known_ones(capsys):
    assert main(["encode", "-t", "deepseek-v4", "--allowed-special", "<|bogus|>", "hi"]) == 1
    err = capsys.readouterr().err
    assert len(err) < 1000 and err.count("\n") == 1, len(err)
    assert "<|bogus|>" in err and "<｜begin▁of▁sentence｜>" in err and "more (tokexplorer vocab" in err


def test_the_soak_has_a_help_and_usage_errors():
    proc = tokexplorer("--help", module="tokexplorer.gui.bench.soak")
    assert proc.returncode == 0 and "EDITS" in proc.stdout and "CORPUS" in proc.stdout
    proc = tokexplorer("many", "corpus.txt", module="tokexplorer.gui.bench.soak")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "invalid int value" in proc.stderr
    proc = tokexplorer("3", Path("/nonexistent/corpus.txt"), module="tokexplorer.gui.bench.soak")
    assert proc.returncode == 2 and "no such text file" in proc.stderr


def test_a_model_without_its_unknown_token_is_one_line(tmp_path):
    spec = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None,
            "model": {"type": "WordLevel", "unk_token": "[UNK]", "vocab": {"a": 0}}}
    (tmp_path / "tokenizer.json").write_text(json.dumps(spec), "utf-8")
    err = one_line(tokexplorer("encode", "-t", tmp_path / "tokenizer.json", "a b"))
    assert "tokenizers cannot encode this text" in err and "Missing [UNK] token" in err


def test_a_file_the_library_would_panic_on_prints_no_panic_lines(tmp_path):
    vocab = {c: i for i, c in enumerate("abcdefgh ")}
    spec = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
            "normalizer": {"type": "Replace", "pattern": {"String": ""}, "content": "a"},
            "pre_tokenizer": None, "post_processor": None, "decoder": None,
            "model": {"type": "WordLevel", "unk_token": "a", "vocab": vocab}}
    (tmp_path / "tokenizer.json").write_text(json.dumps(spec), "utf-8")
    err = one_line(tokexplorer("encode", "-t", tmp_path / "tokenizer.json", "ab"))
    assert "its normalizer replaces an empty string" in err


def test_a_split_pattern_the_regex_engine_gives_up_on_is_named(tmp_path):
    """A tokenizer.json whose split pattern backtracks without end on the text: `tokenizers`' Onig
    engine panics at its retry limit; our line names the pattern, not an inconsistent vocabulary."""
    spec = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(a|aa)+b"}, "behavior": "Isolated",
                              "invert": False},
            "post_processor": None, "decoder": None,
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                      "vocab": {"a": 0, "b": 1, "c": 2}, "merges": []}}
    (tmp_path / "tokenizer.json").write_text(json.dumps(spec), "utf-8")
    proc = tokexplorer("encode", "-t", tmp_path / "tokenizer.json", "a" * 5000 + "c")
    # (the library's own panic hook has written its lines to stderr before Python hears of it)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert "the split pattern gave up on this text" in last and "inconsistent" not in last, last
