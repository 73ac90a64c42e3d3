"""`tokexplorer report languages` and the `--plot` of `report languages` and `sweep`: the numbers are
the core's, and the plots are PNGs of a sane size, drawn without a window."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tokexplorer.cli.main import main
from tokexplorer.core.analysis.languages import read_parallel_texts, tokens_per_language
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.analysis.sweep import split_held_out, sweep

ROOT = Path(__file__).resolve().parents[2]


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from the PNG header (the IHDR chunk comes first)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_report_languages_json_is_the_cores_numbers(capsys):
    code, out, _ = run(capsys, "report", "languages", "-t", "gpt2", "-t", "o200k_base", "--json")
    assert code == 0
    report = json.loads(out)
    core = tokens_per_language(read_parallel_texts(), [get_builtin("gpt2"), get_builtin("o200k_base")])
    assert report["tokenizers"] == ["gpt2", "o200k_base"] and report["reference"] == "eng"
    assert len(report["languages"]) == 56
    for row in report["languages"]:
        expected = core.row(row["key"])
        assert (row["language"], row["script"], row["characters"], row["bytes"]) == (
            expected.language, expected.script, expected.chars, expected.bytes)
        assert row["tokens"] == {"gpt2": expected.tokens[0], "o200k_base": expected.tokens[1]}
        assert row["ratio"] == {"gpt2": round(expected.ratios[0], 4), "o200k_base": round(expected.ratios[1], 4)}
    ratios = [row["ratio"]["gpt2"] for row in report["languages"]]
    assert ratios == sorted(ratios, reverse=True)  # --sort ratio, the default


def test_report_languages_table_sorted_by_language(capsys):
    code, out, _ = run(capsys, "report", "languages", "-t", "cl100k_base", "--sort", "language")
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["language", "script", "chars", "bytes", "cl100k_base", "×eng"]
    assert lines[2].startswith("Amharic") and lines[-1].startswith("Zulu") and len(lines) == 2 + 56
    english = next(line for line in lines if line.startswith("English "))
    assert english.split()[-1] == "1.00"


def test_report_languages_on_your_own_parallel_texts(tmp_path, capsys):
    (tmp_path / "eng.txt").write_text("hello world", "utf-8")
    (tmp_path / "rus.txt").write_text("привет мир", "utf-8")
    code, out, _ = run(capsys, "report", "languages", "--texts", tmp_path, "-t", "gpt2", "--json")
    rows = {r["key"]: r for r in json.loads(out)["languages"]}
    assert code == 0 and rows["rus"]["tokens"]["gpt2"] == len(get_builtin("gpt2").encode("привет мир").ids)


@pytest.mark.parametrize("argv, message", [
    (["--plot", "/no/such/folder/x.png"], "does not exist"),
    (["--plot", "x.svg"], "ending in .png"),
    (["--reference", "klingon"], "reference language 'klingon'"),
    (["-t", "no-such-tokenizer"], "unknown tokenizer"),
])
def test_report_languages_bad_input_is_one_line(capsys, argv, message):
    code, out, err = run(capsys, "report", "languages", *argv)
    assert code == 1 and message in err and err.count("\n") == 1 and "Traceback" not in err


def test_report_languages_plot_writes_a_png_without_a_display(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["PYTHONPATH"] = str(ROOT)
    target = tmp_path / "languages.png"
    proc = subprocess.run([sys.executable, "-m", "tokexplorer", "report", "languages", "-t", "gpt2",
                           "-t", "cl100k_base", "--plot", str(target)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    width, height = png_size(target)
    assert width == 1600 and height == 2 * (140 + 24 * 56)  # a bar pair per language, 56 languages, drawn twice over
    assert target.stat().st_size > 20_000  # drawn, not blank
    assert f"wrote {target}" in proc.stderr


def test_sweep_plot_writes_a_png_and_json_has_the_reference_points(tmp_path, capsys, corpora):
    corpus = tmp_path / "c.txt"
    text = (corpora / "en/taylorswift.txt").read_text("utf-8")[:30_000]
    corpus.write_text(text, "utf-8")
    target, merges = tmp_path / "sweep.png", tmp_path / "merges.png"
    code, out, err = run(capsys, "sweep", corpus, "--vocab-sizes", "256,300,400", "--held-out", "0.2",
                         "-t", "gpt2", "-t", "llama-sp", "--plot", target, "--plot-merges", merges,
                         "--dark", "--json")
    assert code == 0, err
    result = json.loads(out)
    train_text, held = split_held_out(text, 0.2)
    core = sweep(train_text, [256, 300, 400], eval_text=held, references=[get_builtin("gpt2"), get_builtin("llama-sp")])
    assert [r["tokens"] for r in result["results"]] == [p.tokens for p in core.points]
    assert [(r["tokenizer"], r["tokens"]) for r in result["references"]] == [
        (r.name, r.tokens) for r in core.references]
    assert result["eval"] == "held-out 20%" and result["eval_bytes"] == len(held.encode("utf-8"))
    assert png_size(target) == (1600, 1000) and target.stat().st_size > 10_000
    assert png_size(merges) == (1600, 1000) and merges.stat().st_size > 10_000


def test_sweep_refuses_eval_and_held_out_together(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("some text\n" * 50, "utf-8")
    code, _, err = run(capsys, "sweep", corpus, "--vocab-sizes", "256", "--eval", corpus, "--held-out", "0.1")
    assert code == 1 and "not both" in err


def test_report_lengths_counts_each_tokenizers_token_lengths(tmp_path, capsys):
    text = "The quick brown fox 🦊 jumps over the lazy dog. मानव अधिकार"
    target = tmp_path / "lengths.png"
    code, out, err = run(capsys, "report", "lengths", "-t", "gpt2", "-t", "llama-sp", text, "--json",
                         "--plot", target)
    assert code == 0, err
    result = json.loads(out)
    assert result["bytes"] == len(text.encode("utf-8"))
    for entry in result["tokenizers"]:
        enc = get_builtin(entry["tokenizer"]).encode(text, allowed_special="none")
        lengths = (enc.byte_ends - enc.byte_starts).tolist()
        assert entry["counts"] == [lengths.count(k) for k in range(max(lengths) + 1)]
        assert entry["tokens"] == len(enc.ids)
    assert png_size(target) == (1600, 1000)
    code, out, _ = run(capsys, "report", "lengths", "-t", "gpt2", "hello world")
    assert code == 0 and out.splitlines()[0].split() == ["bytes", "gpt2"]
    assert out.splitlines()[-2].split() == ["tokens", "2"]
