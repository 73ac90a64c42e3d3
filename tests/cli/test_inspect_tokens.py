"""`tokexplorer inspect -t NAME`: the inspector panel's view on the command line."""

from __future__ import annotations

import json

from tokexplorer.cli.main import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_bytes_with_their_tokens(capsys):
    code, out, _ = run(capsys, "inspect", "-t", "gpt2", "hi 👋")
    assert code == 0
    assert "token #1 id 50169: ' \\xf0\\x9f\\x91' bytes 20 F0 9F 91 (partial)" in out
    assert "bytes: 68 69 20 F0 9F 91 8B\ntoken:  0  0  1  1  1  1  2" in out
    assert "U+1F44B\tWAVING HAND SIGN" in out and "tokens #1 #2" in out


def test_a_selection_as_json(capsys):
    code, out, _ = run(capsys, "inspect", "-t", "llama-sp", "--select", "2:3", "--json", "x 똠")
    data = json.loads(out)
    assert [t["label"] for t in data["tokens"]] == ["<0xEB>", "<0x98>", "<0xA0>"]
    assert data["code_points"][0]["name"] == "HANGUL SYLLABLE DDOM"


def test_bad_selections(capsys):
    code, _, err = run(capsys, "inspect", "-t", "gpt2", "--select", "2:9", "x")
    assert code == 1 and "past the end of the text" in err and "Traceback" not in err
    code, _, err = run(capsys, "inspect", "--select", "0:1", "x")
    assert code == 1 and "needs a tokenizer" in err


def test_a_text_over_the_budget_is_refused_before_it_is_tokenized(capsys, tmp_path, monkeypatch):
    """inspect -t keeps every token of the text (about 90 bytes a character for emoji in
    cl100k_base): past the whole-text budget it stops with one line, and --max-mb goes on."""
    from tokexplorer.core import budgets

    path = tmp_path / "big.txt"
    path.write_text("héllo wörld " * 200_000, encoding="utf-8")  # 2.4 million characters
    monkeypatch.setattr(budgets, "WHOLE_TEXT_PEAK_MB", 90)  # a budget of one million characters
    code, out, err = run(capsys, "inspect", "-t", "cl100k_base", "--file", str(path))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "2 million characters, over the 1 million" in err
    assert "--max-mb 3 to go on" in err
    monkeypatch.undo()
    code, out, _ = run(capsys, "inspect", "-t", "cl100k_base", "--file", str(path), "--max-mb", "3",
                       "--select", "0:5")
    assert code == 0 and "characters 0–5" in out
