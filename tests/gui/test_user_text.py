"""Everything that reads the window's text reads the user's text, not the editor's display of it: a
line longer than LONG_LINE is shown in pieces (soft breaks), which training on "Current text",
saving, autosave and copying must not see as line breaks (issue 32, item 10: the Unicode article
trained as 24,602 bytes instead of 24,597)."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QTextCursor

from tokexplorer.core.positions import LONG_LINE
from tokexplorer.core.training.bpe import train

from .helpers import type_text, wait_settled

TIMEOUT = 120_000  # ms


def long_line_text(newline: str) -> str:
    """Two short lines around one of about 2.3 pieces' worth (no newline of its own inside)."""
    words = ("unicode", "naïve", "café", "tokens", "👋", "bytes", "the", "a")
    line = " ".join(words[(i * 7) % len(words)] for i in range(LONG_LINE // 3))
    assert len(line) > LONG_LINE and "\n" not in line
    return newline.join(["A title", line, "the end", ""])


def open_file(qtbot, window, tmp_path, text: str):
    path = tmp_path / "article.txt"
    path.write_bytes(text.encode("utf-8"))
    window.documents.open_text(path)
    qtbot.waitUntil(lambda: window.state.path == path, timeout=TIMEOUT)
    wait_settled(qtbot, window, timeout=TIMEOUT)
    return path


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_the_user_text_has_no_soft_breaks_and_the_file_s_own_line_ends(qtbot, window, tmp_path, newline):
    text = long_line_text(newline)
    open_file(qtbot, window, tmp_path, text)
    editor = window.editor
    shown = editor.display_text()
    assert shown.count("\n") > text.count("\n")  # the long line is shown in pieces
    assert editor.user_text() == text == window.state.result.encoding.text
    # after an edit too (then read out of the document, not kept from the load)
    editor.moveCursor(QTextCursor.MoveOperation.End)
    type_text(editor, "x")
    wait_settled(qtbot, window)
    assert editor.text_as_loaded() is None
    assert editor.user_text() == text + "x" == window.state.result.encoding.text


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_saving_writes_the_user_text(qtbot, window, tmp_path, newline):
    text = long_line_text(newline)
    open_file(qtbot, window, tmp_path, text)
    editor = window.editor
    editor.moveCursor(QTextCursor.MoveOperation.End)
    type_text(editor, "Q")  # edited: read out of the document, not kept from the load
    wait_settled(qtbot, window)
    edited = text + "Q"
    assert editor.text_as_loaded() is None and editor.user_text() == edited
    out = tmp_path / "saved.txt"
    window.dialogs.paths["save"] = str(out)
    assert window.documents.save_as()
    assert out.read_bytes() == edited.encode("utf-8")


def test_copying_a_long_line_gives_the_user_text(qtbot, window, tmp_path):
    text = long_line_text("\n")
    open_file(qtbot, window, tmp_path, text)
    editor = window.editor
    editor.selectAll()
    assert editor.createMimeDataFromSelection().text() == text


def test_training_on_the_current_text_trains_on_the_user_text(qtbot, window, tmp_path):
    """Training on "Current text" of a long line: the same bytes and merges as training on the
    text itself (the display's soft breaks are not newlines of the corpus)."""
    text = long_line_text("\n")
    open_file(qtbot, window, tmp_path, text)
    panel = window.training_panel
    panel.text_radio.setChecked(True)
    assert f"{len(text):,} characters" in panel.corpus_label.text()
    assert panel.request().text == text
    panel.algorithm_box.setCurrentIndex(panel.algorithm_box.findData("bpe-basic"))
    panel.vocab_spin.setValue(266)
    started = []
    panel.service.started.connect(lambda total, corpus_bytes: started.append(corpus_bytes))
    panel.train_button.click()
    assert panel.service.running, panel.message.text()
    qtbot.waitUntil(lambda: not panel.service.running, timeout=TIMEOUT)
    assert panel.result is not None, panel.message.text()
    assert started == [len(text.encode("utf-8"))]
    assert [r.pair for r in panel.log_model.records] == list(train(text, 266).merges)
