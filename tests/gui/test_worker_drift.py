"""The worker's copy of the text checked by content, not only by length: a copy that went wrong
and kept its length is found (by the probes each request carries) and sent again whole."""

from __future__ import annotations

from PySide6.QtGui import QTextCursor

from tokexplorer.gui.editor import PROBE_WALK

from .helpers import type_text, wait_settled


def test_a_same_length_drift_near_the_edit_is_repaired(qtbot, window, capfd):
    type_text(window.editor, "abc")
    wait_settled(qtbot, window)
    window.service._mirror.reset("abx")  # a deliberate desync: the same length, other text
    type_text(window.editor, "d")
    wait_settled(qtbot, window)
    assert window.state.result.encoding.text == "abcd"
    assert "same length, other text" in capfd.readouterr().err


def test_a_same_length_drift_far_from_the_edits_is_found_by_the_walking_probe(qtbot, window, capfd):
    text = "word " * (PROBE_WALK // 2)  # 2.5 walking steps long
    window.documents.set_text(text)
    wait_settled(qtbot, window)
    far = 2 * PROBE_WALK + 100
    window.service._mirror.reset(text[:far] + "W" + text[far + 1:])  # the same length, other text
    cursor = QTextCursor(window.editor.document())
    for _ in range(4):  # each request probes one more window of the text
        cursor.setPosition(0)
        cursor.insertText("x")
        wait_settled(qtbot, window)
    assert window.state.result.encoding.text == window.editor.source_text() == "xxxx" + text
    assert "same length, other text" in capfd.readouterr().err
