"""The command line with the new families: tokenizer.json and .gguf files given with -t, and every
bad input of theirs as one line on stderr."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from gguf import GGUFWriter

from tokexplorer.core import registry

from ..core.family_peers import NEW_BUILTINS, gguf_from_tokenizer_json, train_byte_level_bpe, train_unigram
from .test_cli import one_line_error, run


@pytest.fixture(scope="module")
def trained(corpora, tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli-families")
    bpe = train_byte_level_bpe(corpora, folder / "tokenizer.json")
    return {"bpe": bpe, "unigram": train_unigram(corpora, folder / "unigram.json"),
            "gguf": gguf_from_tokenizer_json(bpe, folder / "model.gguf")}


@pytest.mark.parametrize("kind", ["bpe", "unigram", "gguf"])
def test_encode_json_in_a_real_process(trained, kind):
    from tokenizers import Tokenizer

    text = "Hello  wörld 👋 — ｆｕｌｌ width, 123456!\n"
    proc = subprocess.run([sys.executable, "-m", "tokexplorer", "encode", "-t", str(trained[kind]),
                           "--json", text], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    theirs = Tokenizer.from_file(str(trained["bpe" if kind == "gguf" else kind]))
    expected = theirs.encode(text, add_special_tokens=False)
    assert out["ids"] == expected.ids
    tokens = out["tokens"]
    if kind != "unigram":  # byte-level: the bytes are the text, spans tile it
        assert b"".join(bytes.fromhex(t["bytes"]) for t in tokens) == text.encode("utf-8")
        assert tokens[-1]["end"] == len(text)
        assert any("partial" in t["flags"] for t in tokens)  # the pieces of 👋 or ö
    else:
        assert any("normalized" in t["flags"] for t in tokens)  # ｆｕｌｌ is NFKC's "full"
        for t, (a, b) in zip(tokens, expected.offsets):
            if t["end"] > t["start"]:
                assert (t["start"], t["end"]) == (a, b)


def test_merges_and_compare_take_the_new_families(capsys, trained):
    code, out, _ = run(capsys, "merges", "-t", str(trained["bpe"]), "--token", " the", "--json")
    assert code == 0 and json.loads(out)["trees"][0]["children"]
    err = one_line_error(capsys, "merges", "-t", str(trained["unigram"]), "--token", "the")
    assert "Unigram" in err and "no merge trees" in err
    code, out, _ = run(capsys, "compare", *sum((["-t", n] for n in NEW_BUILTINS), []), "--json",
                       "Hello world")
    assert code == 0 and [r["tokenizer"] for r in json.loads(out)["results"]] == NEW_BUILTINS
    code, out, _ = run(capsys, "decode", "-t", "tekken", "29706", "4304")
    assert out == "hello world\n"


def test_bad_tokenizer_json(capsys, tmp_path, trained):
    path = tmp_path / "tokenizer.json"
    path.write_text("{ this is not json")
    assert "not a valid" in one_line_error(capsys, "encode", "-t", str(path), "x")
    path.write_text(json.dumps({"version": "1.0", "normalizer": None, "model": {"type": "Magic"}}))
    err = one_line_error(capsys, "encode", "-t", str(path), "x")
    assert "unknown model type 'Magic'" in err and "WordPiece" in err
    data = trained["bpe"].read_bytes()
    path.write_bytes(data[: len(data) // 2])
    err = one_line_error(capsys, "encode", "-t", str(path), "x")
    assert "not a valid tokenizer.json" in err and "truncated" in err
    path.write_text(json.dumps({"version": "1.0", "normalizer": None,
                                "model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}}))
    assert "tokenizers cannot load it" in one_line_error(capsys, "encode", "-t", str(path), "x")


def test_bad_gguf(capsys, tmp_path, trained):
    data = trained["gguf"].read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[:200])
    err = one_line_error(capsys, "encode", "-t", str(cut), "x")
    assert "not a readable GGUF file" in err
    bare = tmp_path / "bare.gguf"
    w = GGUFWriter(str(bare), "llama")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    assert "no tokenizer in its metadata" in one_line_error(capsys, "encode", "-t", str(bare), "x")
    other = tmp_path / "notes.gguf"
    other.write_text("just some text, not a model\n")
    assert "GGUF magic" in one_line_error(capsys, "encode", "-t", str(other), "x")


@pytest.mark.parametrize("name, attr", [("deepseek-v4", "DEEPSEEK_V4"), ("qwen3.6", "QWEN3_6"),
                                        ("tekken", "TEKKEN")])
def test_builtin_file_missing_or_changed(capsys, monkeypatch, name, attr):
    original = getattr(registry, attr)
    monkeypatch.setattr(registry, "_cache", {})
    monkeypatch.setattr(registry, attr, registry.DataFile(original.package, original.path, "0" * 64,
                                                          original.licence))
    err = one_line_error(capsys, "encode", "-t", name, "x")
    assert "sha256" in err and "reinstall" in err
    monkeypatch.setattr(registry, attr, registry.DataFile(original.package, "gone/" + original.path,
                                                          original.sha256, original.licence))
    err = one_line_error(capsys, "encode", "-t", name, "x")
    assert "missing" in err and original.package in err
