"""The window and its tokenizing server: a server that dies while the user types is started again,
the window says so, and the text (which lives in the editor) comes back with the same tokens as a
fresh encode; the window's own process loads no tokenizer library."""

from __future__ import annotations

import sys

import pytest

from tokexplorer.gui.services import server_link

from .helpers import tokenizer_for, type_text, wait_settled

LIBRARIES = ("tiktoken", "sentencepiece", "tokenizers", "gguf", "jinja2", "mistral_common")


def test_a_server_killed_mid_typing_is_restarted_and_the_tokens_come_back(qtbot, window, monkeypatch):
    monkeypatch.setattr(server_link, "RESTART_WINDOW_S", 0.0)  # (other tests may have killed one)
    messages = []
    window.state.server.status.connect(messages.append)
    type_text(window.editor, "hello wor")
    old_pid = window.state.server.pid
    window.state.server.kill()
    type_text(window.editor, "ld, naïve 👋 again")
    qtbot.waitUntil(lambda: window.state.server.pid != old_pid, timeout=30_000)
    wait_settled(qtbot, window)
    text = window.editor.user_text()
    assert text == "hello world, naïve 👋 again"
    result = window.state.result
    assert result.encoding.text == text
    assert list(result.encoding.ids) == tokenizer_for(window, result.tokenizer).encode(text).ids
    assert any("restarted" in m for m in messages)
    assert "restarted" in window.statusBar().currentMessage()
    type_text(window.editor, "!")  # and edits go on as deltas to the new server
    wait_settled(qtbot, window)
    assert window.state.result.encoding.text == text + "!"


# Run in a fresh interpreter: the test's own process loads tokenizers for expected values.
WINDOW_SESSION = """
import sys, time
from pathlib import Path

def main():
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from tokexplorer.gui.main_window import MainWindow
    from tokexplorer.gui.app import settled

    folder = Path(sys.argv[2])
    window = MainWindow(settings=QSettings(str(folder / "t.ini"), QSettings.Format.IniFormat))
    window.show()

    def wait(timeout=120):
        end = time.monotonic() + timeout
        while not settled(window):
            if time.monotonic() > end:
                raise SystemExit("not settled: " + repr(window.state.busy))
            app.processEvents()
            time.sleep(0.002)

    window.documents.set_text(Path(sys.argv[1]).read_text("utf-8"))
    wait()
    for name in window.state.catalog.names():
        window.state.set_tokenizer(name)
        wait()
    cursor = window.editor.textCursor()
    for ch in "naive <|endoftext|> 👋":
        cursor.insertText(ch)
        app.processEvents()
    wait()
    for view in window.views:
        window.show_view(view)
        wait()
    window.compare.set_tokenizers(["o200k_base", "gpt2", "llama-sp", "deepseek-v4"])
    window.compare.set_active(True)
    wait()
    print("LOADED", [m for m in sys.argv[3].split(",") if m in sys.modules], flush=True)
    window.state.set_modified(False)  # (closing would ask about the typed text)
    window.close()

if __name__ == "__main__":
    main()
"""


@pytest.mark.slow
def test_the_window_process_runs_no_tokenizer_library(corpora, tmp_path):
    """After the 1 MB book, a switch through every built-in, typing, every view opened and four
    tokenizers compared, none of the tokenizer libraries is loaded in the window's process."""
    import os
    import subprocess

    script = tmp_path / "session.py"
    script.write_text(WINDOW_SESSION)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, str(script), str(corpora / "en/tinyshakespeare.txt"), str(tmp_path),
                          ",".join(LIBRARIES)], capture_output=True, text=True, timeout=600, env=env)
    assert "LOADED []" in out.stdout, out.stdout + out.stderr[-3000:]
