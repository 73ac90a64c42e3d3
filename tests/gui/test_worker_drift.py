"""The server's copy of the text checked by content, not only by length: a copy that went wrong
and kept its length is found (by the probes each request carries) and sent again whole."""

from __future__ import annotations

from PySide6.QtGui import QTextCursor

from tokexplorer.gui.editor.sync import PROBE_WALK

from .helpers import drift_next_request, type_text, wait_settled


def test_a_same_length_drift_near_the_edit_is_repaired(qtbot, window):
    type_text(window.editor, "abc")
    wait_settled(qtbot, window)
    sent = drift_next_request(window.service, [(2, 1, "x")])  # the server's copy: "abx", then "abxd"
    type_text(window.editor, "d")
    wait_settled(qtbot, window)
    assert window.state.result.encoding.text == "abcd"
    assert sent[0] is False and True in sent[1:]  # found at once, and the whole text sent


def test_a_same_length_drift_far_from_the_edits_is_found_by_the_walking_probe(qtbot, window):
    text = "word " * (PROBE_WALK // 2)  # 2.5 walking steps long
    window.documents.set_text(text)
    wait_settled(qtbot, window)
    far = 2 * PROBE_WALK + 100
    cursor = QTextCursor(window.editor.document())
    sent = None
    for step in range(4):  # each request probes one more window of the text
        cursor.setPosition(0)
        if step == 0:  # the same length, other text, far from the edit (moved on by the "x")
            sent = drift_next_request(window.service, [(far + 1, 1, "W")])
        cursor.insertText("x")
        wait_settled(qtbot, window)
    assert window.state.result.encoding.text == window.editor.user_text() == "xxxx" + text
    assert sent[0] is False and True in sent[1:]
