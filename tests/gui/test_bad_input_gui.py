"""The window under hostile input: inconsistent tokenizer files (which made tiktoken's Rust core
panic), a panic that still gets through, and `--screenshot` failing fast instead of saving a PNG."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from .helpers import type_text, wait_settled


def native_panic() -> BaseException:
    """A real pyo3 PanicException from tiktoken's core (a BaseException, not an Exception)."""
    import tiktoken

    try:
        tiktoken.Encoding("x", pat_str=r"\S+", mergeable_ranks={b"a": 0}, special_tokens={}).encode("b")
    except BaseException as exc:  # noqa: B036
        return exc
    raise AssertionError("tiktoken did not panic")


@pytest.fixture
def bad_tiktoken(tmp_path):
    path = tmp_path / "one-line.tiktoken"
    path.write_bytes(b"YQ== 0\n")
    return path


def test_a_bad_file_opened_is_refused_and_the_picker_stays(qtbot, window, bad_tiktoken):
    before = window.state.tokenizer
    window.open_tokenizer(bad_tiktoken)
    qtbot.waitUntil(lambda: window.banner.kind == "error", timeout=10_000)
    assert "byte 0x00 is not a token" in window.banner.label.text()
    assert "one-line.tiktoken" not in window.state.catalog.names()
    assert window.tokenizer_box.findText("one-line.tiktoken") < 0 and window.state.tokenizer == before
    assert not window.state.busy


def test_a_bad_file_picked_falls_back_to_the_last_good_tokenizer(qtbot, window, bad_tiktoken):
    """As with -t bad.tiktoken: the file joins the picker unread; tokenizing with it fails."""
    type_text(window.editor, "hello")
    wait_settled(qtbot, window)
    good = window.state.tokenizer
    name = window.state.add_tokenizer_file(bad_tiktoken)
    window.state.set_tokenizer(name)
    qtbot.waitUntil(lambda: window.banner.kind == "note" and window.state.tokenizer == good, timeout=10_000)
    wait_settled(qtbot, window)
    assert "taken out of the picker" in window.banner.label.text()
    assert name not in window.state.catalog.names() and window.tokenizer_box.findText(name) < 0
    assert window.state.result.tokenizer == good and window.state.result.encoding.text == "hello"


def test_a_panic_in_the_worker_is_an_error_and_the_worker_lives_on(qtbot, window, monkeypatch):
    panic = native_panic()
    catalog = window.state.catalog
    real_get = catalog.get
    monkeypatch.setattr(catalog, "get", lambda name: (_ for _ in ()).throw(panic))
    type_text(window.editor, "x")
    qtbot.waitUntil(lambda: window.banner.kind == "error", timeout=10_000)
    assert "failed inside its native core" in window.banner.label.text()
    monkeypatch.setattr(catalog, "get", real_get)
    type_text(window.editor, "y")
    wait_settled(qtbot, window)
    assert window.state.result.encoding.text == "xy"


def test_a_panic_in_a_job_reaches_its_error_handler(qtbot):
    from tokexplorer.gui.worker import run_job

    panic, errors = native_panic(), []
    run_job(lambda progress: (_ for _ in ()).throw(panic), on_result=lambda v: None, on_error=errors.append)
    qtbot.waitUntil(lambda: bool(errors), timeout=5_000)
    assert "failed inside its native core" in str(errors[0])


def screenshot(tmp_path, *args) -> tuple[subprocess.CompletedProcess, float]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "tokexplorer", "--screenshot", str(tmp_path / "s.png"),
                           "--settings-dir", str(tmp_path), *args], env=env, capture_output=True, text=True,
                          timeout=120)
    return proc, time.monotonic() - t0


@pytest.mark.parametrize("case, message", [
    ("tokenizer", "byte 0x00 is not a token"),
    ("encoding", "'rot13' is not a text encoding"),
    ("utf16", "looks like UTF-16-LE text without a byte-order mark"),
])
def test_screenshot_fails_with_the_reason_instead_of_saving(tmp_path, bad_tiktoken, case, message):
    text = tmp_path / "t.txt"
    text.write_bytes("hello".encode("utf-16-le" if case == "utf16" else "utf-8"))
    args = {"tokenizer": ["-t", str(bad_tiktoken)], "encoding": ["--open", str(text), "--encoding", "rot13"],
            "utf16": ["--open", str(text)]}[case]
    proc, _ = screenshot(tmp_path, *args)
    assert proc.returncode == 1, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "s.png").exists()
