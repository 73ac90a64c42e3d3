"""`tokexplorer --screenshot` run as a user would: a separate process, offscreen Qt."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

import pytest


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def run(args, tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-m", "tokexplorer", *args, "--settings-dir", str(tmp_path)],
                          env=env, capture_output=True, text=True, timeout=120)


def shoot(tmp_path, text: str, *args: str):
    """A screenshot (tmp_path/shot.png) of the window opened on `text`; the process and the path."""
    path = tmp_path / "sample.txt"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "shot.png"
    proc = run(["--screenshot", str(out), "--open", str(path), *args], tmp_path)
    assert proc.returncode == 0, proc.stderr
    return proc, out


def test_screenshot_of_the_real_window(tmp_path):
    _, out = shoot(tmp_path, "Hello 👋 world!\n    indented code()\n<|endoftext|> is refused here\n", "-t", "cl100k_base")
    width, height = png_size(out)
    assert width >= 600 and height >= 400  # the whole main window, not a widget of it


@pytest.mark.slow
def test_one_screenshot_per_tokenizer_each_with_its_counts(tmp_path):
    proc, _ = shoot(tmp_path, "Hello 👋 world!\r\nline two\n", "-t", "gpt2", "-t", "llama-sp")
    text = tmp_path / "sample.txt"
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["tokenizer"] for r in records] == ["gpt2", "llama-sp"]
    for r in records:
        png_size(tmp_path / f"shot-{r['tokenizer']}.png")
        assert r["path"] == str(tmp_path / f"shot-{r['tokenizer']}.png") and r["view"] == "editor"
        cli = subprocess.run([sys.executable, "-m", "tokexplorer", "compare", "--json", "-f", str(text),
                              "-t", r["tokenizer"]], capture_output=True, text=True, timeout=120)
        row = json.loads(cli.stdout)["results"][0]
        assert (r["tokens"], r["characters"], r["bytes"]) == (row["tokens"], row["chars"], row["bytes"])


def test_screenshot_never_touches_the_users_settings(tmp_path):
    """Its settings live in a temporary folder, which goes when it ends, whether it saved a
    picture or refused (issue 32: every screenshot left one behind)."""
    home, temp = tmp_path / "home", tmp_path / "temp"
    temp.mkdir()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               TMPDIR=str(temp))
    env.pop("TOKEXPLORER_SETTINGS_DIR", None)
    proc = subprocess.run([sys.executable, "-m", "tokexplorer", "--screenshot", str(tmp_path / "x.png")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "x.png").is_file()
    assert not [p for p in home.rglob("*") if p.is_file()]  # no settings, no recent files written
    refused = subprocess.run([sys.executable, "-m", "tokexplorer", "--screenshot", str(tmp_path / "y.png"),
                              "-t", "nonesuch"], env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1, refused.stderr
    assert not list(temp.glob("tokexplorer-settings-*"))


def test_bad_arguments_exit_with_a_message(tmp_path):
    proc = run(["--screenshot", str(tmp_path / "x.png"), "--open", str(tmp_path / "missing.txt")], tmp_path)
    assert proc.returncode == 1
    assert "no such file" in proc.stderr and "Traceback" not in proc.stderr
    proc = run(["--screenshot", str(tmp_path / "x.png"), "-t", "nonesuch"], tmp_path)
    assert proc.returncode == 1 and "unknown tokenizer" in proc.stderr


def test_screenshot_of_a_file_that_is_not_utf8(tmp_path):
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"caf\xe9\n")
    out = tmp_path / "shot.png"
    proc = run(["--screenshot", str(out), "--open", str(latin)], tmp_path)
    assert proc.returncode == 1 and "byte 0xE9 at offset 3" in proc.stderr  # no dialog to hang on
    proc = run(["--screenshot", str(out), "--open", str(latin), "--encoding", "latin-1"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    png_size(out)


def test_screenshot_of_a_view_with_a_selection(tmp_path):
    _, out = shoot(tmp_path, "Hello 👋 world!\n", "--view", "chunks", "--select", "6:7")
    png_size(out)


def test_an_unknown_view_lists_the_known_ones(tmp_path):
    proc = run(["--screenshot", str(tmp_path / "x.png"), "--view", "nonesuch"], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "unknown view 'nonesuch'" in proc.stderr and "editor, ids, chunks" in proc.stderr
    assert not (tmp_path / "x.png").exists()


def test_a_bad_selection_is_refused(tmp_path):
    proc = run(["--screenshot", str(tmp_path / "x.png"), "--select", "7:3"], tmp_path)
    assert proc.returncode == 2 and "START[:END]" in proc.stderr and "Traceback" not in proc.stderr
    text = tmp_path / "short.txt"
    text.write_text("abc", encoding="utf-8")
    proc = run(["--screenshot", str(tmp_path / "x.png"), "--open", str(text), "--select", "2:9"], tmp_path)
    assert proc.returncode == 1 and "past the end of the text (3 characters)" in proc.stderr


def test_screenshot_of_the_inspector(tmp_path):
    text = tmp_path / "sample.txt"
    text.write_text("x 똠 👨\u200d👩\u200d👧 🇺🇳\n", encoding="utf-8")
    out = tmp_path / "shot.png"
    proc = run(["--screenshot", str(out), "--open", str(text), "-t", "llama-sp", "--view", "inspector",
                "--select", "2"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    width, height = png_size(out)
    assert width >= 600 and height >= 400
