"""The window's start, as whole processes: from launching `tokexplorer` to a visible window, and
to the welcome text coloured (a first start, each run with fresh settings), beside the floor a
minimal application doing the same would stand on: a bare PySide6 window with a text box showing
the same text (visible), which then loads cl100k_base with tiktoken from the same local file and
encodes the text (coloured: no colours are painted, so the peer is the cheaper of the two).

Both use the screen if there is one, else Qt's offscreen platform. Each process prints wall-clock times (`time.time()`), compared with the launch's; the runs are
interleaved, so load from elsewhere hits both alike. Used by `tokexplorer bench --startup`; the
window's process reports through `tokexplorer --probe-startup` (gui/app.py).
"""

from __future__ import annotations

import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tokexplorer.core import registry
from tokexplorer.core.headless import use_offscreen
from tokexplorer.core.resources import resource_path

_PEER = """
import json, os, sys, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMainWindow, QPlainTextEdit

class Editor(QPlainTextEdit):
    painted_at = 0.0
    def paintEvent(self, event):
        super().paintEvent(event)
        Editor.painted_at = Editor.painted_at or time.time()

app = QApplication([])
window = QMainWindow()
editor = Editor()
text = open({welcome!r}, encoding="utf-8").read()
editor.setPlainText(text)
window.setCentralWidget(editor)
window.resize(1100, 720)
window.show()

def coloured():
    if not Editor.painted_at:
        QTimer.singleShot(2, coloured)
        return
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    os.environ["TIKTOKEN_CACHE_DIR"] = ""
    ranks = load_tiktoken_bpe({vocab!r})
    enc = tiktoken.Encoding("cl100k_base", pat_str={pattern!r}, mergeable_ranks=ranks,
                            special_tokens={{"<|endoftext|>": 100257}})
    enc.encode(text, allowed_special="all")
    print(json.dumps({{"visible_at": Editor.painted_at, "coloured_at": time.time()}}), flush=True)
    app.quit()

QTimer.singleShot(0, coloured)
app.exec()
"""


def _times(command: list[str]) -> tuple[float, float]:
    """(seconds to visible, seconds to coloured) of one process printing both as its last line."""
    t0 = time.time()
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"{command[2]}: {proc.stderr.strip()[-300:]}")
    times = json.loads(proc.stdout.strip().splitlines()[-1])
    return times["visible_at"] - t0, times["coloured_at"] - t0


def _spread(times: list[float]) -> str:
    return f"{statistics.median(times):.2f} ({min(times):.2f}-{max(times):.2f})"


def rows(rounds: int) -> list[list[str]]:
    """Two rows (visible, coloured): what, ours, the peer's, the ratio, the target."""
    use_offscreen()  # both on the same platform: a screen's if there is one, else offscreen
    with tempfile.TemporaryDirectory() as folder:
        vocab = Path(folder) / "cl100k_base.tiktoken"
        vocab.write_bytes(gzip.decompress(registry.CL100K.location().read_bytes()))
        peer = [sys.executable, "-c", _PEER.format(welcome=str(resource_path("welcome.txt")), vocab=str(vocab),
                                                   pattern=registry.get_builtin("cl100k_base").split_pattern)]

        def ours() -> list[str]:  # fresh settings each time: a first start, with the welcome text
            return [sys.executable, "-m", "tokexplorer", "--probe-startup", "--settings-dir",
                    tempfile.mkdtemp(dir=folder)]

        _times(ours()), _times(peer)  # untimed: the files in the OS's cache, the vocabularies' copies made
        mine, theirs = [], []
        for _ in range(rounds):
            mine.append(_times(ours()))
            theirs.append(_times(peer))
    out = []
    for i, (what, target) in enumerate((("window: launch → visible", "≤ 1.0 s"),
                                        ("window: launch → welcome text coloured", "≤ 1.5 s"))):
        a, b = [t[i] for t in mine], [t[i] for t in theirs]
        out.append([what, _spread(a), _spread(b), f"{statistics.median(a) / statistics.median(b):.2f}", target])
    return out


PEER_NOTE = ("window peer: a bare PySide6 QMainWindow with a QPlainTextEdit showing the welcome text "
             "(visible), then tiktoken loading cl100k_base from the same local file and encoding it (coloured)")
