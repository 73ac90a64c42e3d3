"""Drives the real main window for `tokexplorer bench --long-line N` (tokexplorer/bench/long_line.py
makes the table): opens a text whose one line of N characters has no break point, then types keys
into the middle of it at a human pace. Measures only; it asserts nothing.

Run alone in a fresh process (`python -m tokexplorer.gui.bench.long_line N KEYS KIND`), so that one
run's layout caches and memory do not help or hurt the next.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tokexplorer.gui.bench.typing import open_metered, press, ready_window

TOKENIZER = "cl100k_base"


def long_line(n: int, kind: str) -> str:
    """One line of n characters without a word boundary: "a" repeated, or random lowercase letters
    (minified data, a base-32 blob)."""
    if kind == "a":
        return "a" * n
    rng = random.Random(0)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))


def measure(n: int, keys: int, kind: str) -> dict:
    """Seconds to open the text coloured and the longest stall meanwhile; then per typed key the
    time to its tokens on screen, and the longest stall while typing."""
    app = QApplication.instance() or QApplication(["tokexplorer-bench"])
    app.setStyle("Fusion")
    path = Path(tempfile.mkdtemp(prefix="tokexplorer-long-")) / "long.txt"
    path.write_text(long_line(n, kind) + "\n", encoding="utf-8")
    window, loop = ready_window(TOKENIZER, 30)
    open_s, open_stall = open_metered(window, loop, path, 1200)
    editor = window.editor
    cursor = editor.textCursor()
    cursor.setPosition(n // 2)
    editor.setTextCursor(cursor)
    editor.centerCursor()
    loop.run(0.5)
    rng = random.Random(1)
    latencies = []
    loop.start_meter()
    for _ in range(keys):
        loop.run(rng.uniform(0.03, 0.08))
        mark = editor.edit_count + 1
        t_key = time.perf_counter()
        press(app, editor, Qt.Key.Key_unknown, rng.choice("etaoinshrdlu"))  # no break point typed
        if loop.run(60, lambda: editor.painted_mark >= mark):
            latencies.append(editor.painted_at - t_key)
    loop.run(0.2)
    typing_stall = loop.stop_meter()
    editor.document().setModified(False)
    window.close()
    path.unlink()
    return {"chars": n, "kind": kind, "open_s": open_s, "open_stall_s": open_stall,
            "key_s": latencies, "keys": keys, "typing_stall_s": typing_stall}


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])))
