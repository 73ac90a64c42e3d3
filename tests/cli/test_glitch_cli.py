"""`tokexplorer report glitch`: the JSON shape the issue fixes, the table, --corpus and its refusals."""

from __future__ import annotations

import json

from tokexplorer.cli.main import main


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_lists_solidgoldmagikarp_with_its_source(capsys, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello world\n", encoding="utf-8")
    code, out, err = run(capsys, "report", "glitch", "-t", "gpt2", "--corpus", corpus, "--json")
    assert code == 0
    report = json.loads(out)
    assert set(report) == {"tokenizer", "tokens"} and report["tokenizer"] == "gpt2"
    rows = {row["id"]: row for row in report["tokens"]}
    assert set(rows[43453]) == {"id", "text", "reasons"}
    assert rows[43453]["text"] == " SolidGoldMagikarp"
    assert "reported under-trained (Rumbelow & Watkins 2023)" in rows[43453]["reasons"]
    assert rows[50256]["reasons"] == ["unreachable: encodes as [27, 91, 437, 1659, 5239, 91, 29]", "special"]
    assert "reference corpus: " + str(corpus) in err  # the note goes to stderr, out is the JSON alone


def test_table_names_each_token_and_why(capsys, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text(" SolidGoldMagikarp", encoding="utf-8")
    code, out, _ = run(capsys, "report", "glitch", "-t", "gpt2", "--corpus", corpus)
    assert code == 0
    line = next(line for line in out.splitlines() if line.lstrip().startswith("43453 "))
    assert "␣SolidGoldMagikarp" in line and "Rumbelow & Watkins 2023" in line
    assert "never produced" not in line  # the corpus produces it


def test_bad_corpus_paths_get_one_line(capsys, tmp_path):
    for path, message in ((tmp_path / "missing.txt", "no such file"), (tmp_path, "is a folder")):
        code, out, err = run(capsys, "report", "glitch", "-t", "gpt2", "--corpus", path)
        assert code == 1 and out == ""
        assert message in err and len(err.strip().splitlines()) == 1
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"\xff\xfe\x00\xd8" * 10 + b"\xff")
    code, _, err = run(capsys, "report", "glitch", "-t", "gpt2", "--corpus", binary)
    assert code == 1 and len(err.strip().splitlines()) == 1
