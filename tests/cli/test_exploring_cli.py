"""`tokexplorer vocab` and `tokexplorer trace`: the vocabulary browser's and the trace's twins."""

from __future__ import annotations

import json

import pytest

from tokexplorer.cli.main import main
from tokexplorer.core.registry import get_builtin


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_vocab_by_text_hex_and_id(capsys):
    code, out, _ = run(capsys, "vocab", "-t", "o200k_base", "--hex", "e2 80 99", "--json", "--limit", "0")
    data = json.loads(out)
    tok = get_builtin("o200k_base")
    assert code == 0 and data["matches"] == len(data["tokens"]) > 100
    assert tok.encode_ids("’")[0] in [t["id"] for t in data["tokens"]]
    assert all("e28099" in t["bytes"] for t in data["tokens"])
    code, out, _ = run(capsys, "vocab", "-t", "gpt2", "--search", "␣hello", "--match-case")
    assert code == 0 and "23748" in out and "15496" not in out and "1 matching tokens" in out
    code, out, _ = run(capsys, "vocab", "-t", "gpt2", "--id", "23748", "--json")
    assert json.loads(out)["tokens"] == [{"id": 23748, "bytes": " hello".encode().hex(), "text": " hello",
                                          "length": 6, "kinds": []}]


def test_vocab_sorted_by_count(capsys, tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("the cat, the dog and the bird, the fish", encoding="utf-8")  # " the" 3, "," 2
    code, out, _ = run(capsys, "vocab", "-t", "cl100k_base", "--count-in", str(path), "--sort", "count",
                       "--reverse", "--limit", "2", "--json")
    tok = get_builtin("cl100k_base")
    rows = json.loads(out)["tokens"]
    assert code == 0 and [r["count"] for r in rows] == [3, 2] and rows[0]["id"] == tok.encode_ids(" the")[0]


@pytest.mark.parametrize("argv, message", [
    (["--id", "50257"], "not in the vocabulary"),
    (["--hex", "xyz"], "not hex"),
    (["--sort", "count"], "--count-in"),
])
def test_vocab_errors(capsys, argv, message):
    code, out, err = run(capsys, "vocab", "-t", "gpt2", *argv)
    assert code == 1 and out == "" and message in err and err.startswith("tokexplorer: error:")


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base", "llama-sp"])
def test_trace_agrees_with_the_encoder(capsys, name):
    text = "    hello world!!! naïve 👋🏽 안녕하세요 <|endoftext|>"
    code, out, _ = run(capsys, "trace", "-t", name, "--json", text)
    data = json.loads(out)
    assert code == 0
    ids = [i for c in data["chunks"] for i in (c["final"] if "final" in c else c["ids"])]
    assert ids == get_builtin(name).encode_ids(text, allowed_special="none")
    assert all(c.get("agrees", True) for c in data["chunks"])


def test_trace_text(capsys):
    code, out, _ = run(capsys, "trace", "-t", "gpt2", " hello")
    assert code == 0
    assert out.splitlines()[0] == "chunk ␣hello (6 bytes): 5 merges"
    assert "5. ␣hell + o -> 23748 (rank 23748): [23748]" in out


def test_trace_of_a_long_run_of_one_letter_prints_a_line_per_merge_of_bounded_width(capsys):
    code, out, _ = run(capsys, "trace", "-t", "gpt2", "a" * 6000)
    merges = [line for line in out.splitlines() if ". a" in line]
    assert code == 0 and len(merges) == 4500
    assert max(map(len, merges)) < 200 and merges[100].rstrip().endswith(", ...]")
