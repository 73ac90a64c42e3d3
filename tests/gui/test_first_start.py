"""A first start: the welcome text teaches the special token without a warning banner, File > New
gives an empty text, the window fits its screen and the tokenizer picker clips no name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from tokexplorer.gui import window_settings

from .helpers import type_text, wait_settled


def test_the_welcome_text_shows_no_warning(window, qtbot):
    window.documents.show_welcome()  # as app.py does on a first start
    wait_settled(qtbot, window)
    assert "<|endoftext|>" in window.editor.display_text()
    assert window.state.refusal is None and window.banner.kind == "note"  # a lesson, not an alarm
    assert "<|endoftext|>" in window.banner.label.text()
    result = window.state.result
    special = [i for i in range(len(result)) if result.encoding.token_bytes[i] == b"<|endoftext|>"]
    assert [result.encoding.ids[i] for i in special] == [100257]  # cl100k_base's <|endoftext|>, one token


def test_the_welcome_note_lets_the_user_try_refusing(window, qtbot):
    from PySide6.QtWidgets import QPushButton

    window.documents.show_welcome()
    wait_settled(qtbot, window)
    refuse = next(b for b in window.banner.findChildren(QPushButton) if b.text() == "Refuse it")
    refuse.click()
    qtbot.waitUntil(lambda: window.state.refusal is not None)
    assert window.state.refusal.token == "<|endoftext|>" and window.banner.kind == "refusal"


def test_file_new_asks_about_unsaved_text_then_empties_the_editor(window, qtbot):
    type_text(window.editor, "some words")
    wait_settled(qtbot, window)
    assert window.state.modified
    window.dialogs.unsaved_answer = "cancel"
    window.new_action.trigger()
    assert window.dialogs.asked[-1][0] == "ask_unsaved" and window.editor.toPlainText() == "some words"
    window.dialogs.unsaved_answer = "discard"
    window.new_action.trigger()
    wait_settled(qtbot, window)
    assert window.editor.toPlainText() == "" and window.state.path is None and not window.state.modified
    assert window.new_action.shortcut().toString() == "Ctrl+N"


def test_the_first_window_takes_most_of_the_screen(make_window, monkeypatch):
    monkeypatch.setattr(window_settings, "real_screen", lambda: True)
    window = make_window()
    available = window.screen().availableGeometry()  # offscreen: 800×800
    least = window.minimumSizeHint()  # what the docks need comes first
    assert abs(window.width() - max(0.8 * available.width(), least.width())) <= 1
    assert abs(window.height() - max(0.8 * available.height(), least.height())) <= 1
    assert available.contains(window.geometry().center())


def test_a_saved_window_larger_than_the_screen_is_shrunk(make_window, monkeypatch):
    first = make_window()
    first.resize(3000, 2000)
    first.close()
    monkeypatch.setattr(window_settings, "real_screen", lambda: True)
    second = make_window()
    available = second.screen().availableGeometry()
    assert second.width() <= available.width() and second.height() <= available.height()


def test_the_tokenizer_picker_clips_no_name(window):
    box = window.tokenizer_box
    longest = max((box.itemText(i) for i in range(box.count())), key=box.fontMetrics().horizontalAdvance)
    assert box.width() >= box.fontMetrics().horizontalAdvance(longest) + 20  # text and the arrow


def test_a_first_start_greets_with_the_welcome_text_and_nothing_refused(tmp_path):
    """The whole start-up, in its own process with fresh settings: the welcome text is shown,
    encoded with special tokens allowed (a refusal would say policy "refuse" and no tokens)."""
    import json

    from tokexplorer.core.resources import resource_path

    from .test_screenshot import run

    proc = run(["--screenshot", str(tmp_path / "shot.png")], tmp_path)
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    welcome = resource_path("welcome.txt").read_text(encoding="utf-8")
    assert record["characters"] == len(welcome)
    assert record["policy"] == "all" and record["tokens"] > 50


def test_the_start_probe_reports_the_window_then_the_welcome_text_coloured(tmp_path):
    """`tokexplorer --probe-startup` (the bench's window rows): a first start, timed to the first
    paint and to the paint with the welcome text's tokens."""
    t0 = time.time()
    proc = subprocess.run([sys.executable, "-m", "tokexplorer", "--probe-startup", "--settings-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert proc.returncode == 0, proc.stderr
    times = json.loads(proc.stdout.strip().splitlines()[-1])
    assert t0 < times["visible_at"] <= times["coloured_at"] < time.time()
