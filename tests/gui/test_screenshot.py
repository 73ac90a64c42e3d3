"""`tokexplorer --screenshot` run as a user would: a separate process, offscreen Qt."""

from __future__ import annotations

import os
import struct
import subprocess
import sys


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def run(args, tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-m", "tokexplorer", *args, "--settings-dir", str(tmp_path)],
                          env=env, capture_output=True, text=True, timeout=120)


def test_screenshot_of_the_real_window(tmp_path):
    text = tmp_path / "sample.txt"
    text.write_text("Hello 👋 world!\n    indented code()\n<|endoftext|> is refused here\n", encoding="utf-8")
    out = tmp_path / "shot.png"
    proc = run(["--screenshot", str(out), "--open", str(text), "-t", "cl100k_base"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    width, height = png_size(out)
    assert width >= 600 and height >= 400  # the whole main window, not a widget of it


def test_one_screenshot_per_tokenizer(tmp_path):
    out = tmp_path / "shot.png"
    proc = run(["--screenshot", str(out), "-t", "gpt2", "-t", "llama-sp"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name in ("gpt2", "llama-sp"):
        png_size(tmp_path / f"shot-{name}.png")


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
    text = tmp_path / "sample.txt"
    text.write_text("Hello 👋 world!\n", encoding="utf-8")
    out = tmp_path / "shot.png"
    proc = run(["--screenshot", str(out), "--open", str(text), "--view", "chunks", "--select", "6:7"], tmp_path)
    assert proc.returncode == 0, proc.stderr
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
