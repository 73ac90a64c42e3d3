"""The unsaved text survives a real crash: a `python -m tokexplorer` process (offscreen) opens a
CRLF file, gets text typed, autosaves, and is killed with SIGKILL; a second start offers the text
back and restores exactly that text, tokenized as the core tokenizes it. An instance started while
the first still runs does not take its text, and a clean close leaves no recovery file.

The processes run tests/gui/crash_child.py (the real command line with a hook that types and
reports); TOKEXPLORER_AUTOSAVE_MS shortens the debounce so the test takes seconds.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tokexplorer.core.files import recovery
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.tokenizer import TokexplorerError

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")

CHILD = Path(__file__).with_name("crash_child.py")
ROOT = Path(__file__).resolve().parents[2]
ORIGINAL = "opened: naïve 👋🏽 𝕏 𠀀\r\nsecond line\r\n"
TYPED = "typed: é 🇺🇳 𝄞\nlast line"
EXPECTED = ORIGINAL + TYPED.replace("\n", "\r\n")  # Enter in a CRLF file writes CRLF
TIMEOUT_S = 60


class Child:
    """One tokexplorer process and the JSON lines it prints."""

    def __init__(self, *args: str, settings: Path):
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", TOKEXPLORER_AUTOSAVE_MS="50",
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        self.proc = subprocess.Popen([sys.executable, str(CHILD), *args, "--settings-dir", str(settings)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(line) for line in self.proc.stdout], daemon=True).start()

    def event(self) -> dict:
        try:
            return json.loads(self.lines.get(timeout=TIMEOUT_S))
        except queue.Empty:
            self.proc.kill()
            pytest.fail(f"no answer from tokexplorer: {self.proc.stderr.read().decode(errors='replace')}")

    def wait(self) -> int:
        return self.proc.wait(TIMEOUT_S)


def recovered_texts(settings: Path) -> list[str]:
    found = []
    for p in sorted((settings / "recovery").glob("*.recovery")):
        try:
            found.append(recovery.load(p.read_bytes()).text)
        except (OSError, TokexplorerError):
            pass  # not there yet
    return found


@pytest.mark.slow
def test_text_typed_before_a_kill_is_offered_back_exactly(tmp_path):
    settings = tmp_path / "settings"
    opened = tmp_path / "notes.txt"
    opened.write_bytes(ORIGINAL.encode("utf-8"))
    typed = tmp_path / "typed.txt"
    typed.write_text(TYPED, encoding="utf-8")
    first = Child("type", str(typed), "--open", str(opened), "-t", "gpt2", settings=settings)
    try:
        assert first.event() == {"typed": EXPECTED}
        deadline = time.monotonic() + TIMEOUT_S
        while recovered_texts(settings) != [EXPECTED]:
            assert time.monotonic() < deadline, "the typed text was never autosaved"
            time.sleep(0.05)

        # Another instance while the first runs: it is not asked, and leaves the file alone.
        second = Child("answer", settings=settings)
        seen = second.event()
        assert seen["asked"] == [] and seen["modified"] is False
        assert second.wait() == 0
        assert recovered_texts(settings) == [EXPECTED]
    finally:
        first.proc.send_signal(signal.SIGKILL)
        first.wait()

    third = Child("answer", settings=settings)
    seen = third.event()
    ((name, when, chars),) = seen["asked"]
    assert (name, chars) == (str(opened), len(EXPECTED)) and when.endswith("seconds ago")  # the path in full
    assert seen["text"] == EXPECTED
    assert (seen["path"], seen["newline"], seen["modified"], seen["tokenizer"]) == (
        str(opened), "\r\n", True, "gpt2")
    assert seen["ids"] == get_builtin("gpt2").encode(EXPECTED).ids
    assert third.wait() == 0
    assert opened.read_bytes() == ORIGINAL.encode("utf-8")  # nothing was saved behind the user's back
    assert list((settings / "recovery").iterdir()) == []  # the clean close removed it
