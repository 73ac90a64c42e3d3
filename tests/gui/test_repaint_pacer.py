"""The repaint pacer: a keystroke's repaint waits for its tokens (one paint, not the new text in the
old colours first), and never longer than the pacer's `hold_s`. The server's answers are held at a
gate so the order of events does not depend on the machine's speed."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QEvent, QObject, Qt, QThreadPool
from PySide6.QtTest import QTest

from .helpers import settled

TEXT = "The quick brown fox jumps over the lazy dog.\n" * 40


@pytest.fixture(autouse=True)
def no_job_left_running(qtbot):
    yield
    QThreadPool.globalInstance().waitForDone(30_000)
    qtbot.wait(50)


class PaintLog(QObject):
    """The editor's `painted_mark` as each paint of its viewport begins: the mark of the paint
    before it."""

    def __init__(self, editor):
        super().__init__(editor)
        self.editor, self.marks_before = editor, []
        editor.viewport().installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.marks_before.append(self.editor.painted_mark)
        return False


def gate(monkeypatch, *services) -> threading.Event:
    """Hold each service's answers from the server (in the thread that reads them) until the
    returned event is set."""
    opened = threading.Event()
    for service in services:
        apply = service._tokens.apply

        def gated(*args, _apply=apply, **kwargs):
            opened.wait(30)
            return _apply(*args, **kwargs)

        monkeypatch.setattr(service._tokens, "apply", gated)
    return opened


def place_caret(qtbot, editor) -> None:
    """Focus `editor` with the caret after "The quick", and let the window repaint that."""
    editor.setFocus()
    cursor = editor.textCursor()
    cursor.setPosition(9)
    editor.setTextCursor(cursor)
    qtbot.wait(100)


def press_key(editor) -> int:
    """Type one letter into `editor`; the mark its result will carry."""
    mark = editor.edit_count + 1
    QTest.keyClick(editor, Qt.Key.Key_X)
    return mark


def test_a_keystroke_is_painted_once_with_its_tokens(window, qtbot, monkeypatch):
    window.documents.set_text(TEXT)
    qtbot.waitUntil(lambda: settled(window), timeout=30_000)
    window.repaint_pacer.hold_s = 30.0  # so only the answer lets the repaint go
    editor = window.editor
    opened = gate(monkeypatch, window.service)
    place_caret(qtbot, editor)
    log = PaintLog(editor)
    mark = press_key(editor)
    qtbot.wait(300)
    assert log.marks_before == [], "the window repainted before the keystroke's tokens came"
    assert window.repaint_pacer.held >= 1
    opened.set()
    qtbot.waitUntil(lambda: editor.painted_mark >= mark, timeout=10_000)
    qtbot.waitUntil(lambda: settled(window), timeout=10_000)
    # The first paint after the key showed its tokens: every later one starts from them.
    assert log.marks_before and all(m >= mark for m in log.marks_before[1:])
    assert editor.toPlainText().startswith("The quickx")


def test_a_held_repaint_goes_through_in_time_without_an_answer(window, qtbot, monkeypatch):
    window.documents.set_text(TEXT)
    qtbot.waitUntil(lambda: settled(window), timeout=30_000)
    window.repaint_pacer.hold_s = 0.05
    editor = window.editor
    opened = gate(monkeypatch, window.service)
    place_caret(qtbot, editor)
    log = PaintLog(editor)
    mark = press_key(editor)
    try:
        # The answer is still held: the typed letter shows, in the previous colours.
        qtbot.waitUntil(lambda: bool(log.marks_before), timeout=5_000)
        assert editor.painted_mark < mark
    finally:
        opened.set()
    qtbot.waitUntil(lambda: editor.painted_mark >= mark, timeout=10_000)


def test_compare_panes_paint_a_keystroke_once_each(window, qtbot, monkeypatch):
    window.documents.set_text(TEXT)
    view = window.compare
    view.set_tokenizers(["gpt2", "cl100k_base"])
    view.set_active(True)
    qtbot.waitUntil(lambda: settled(window) and view.up_to_date, timeout=60_000)
    window.repaint_pacer.hold_s = 30.0
    pane = view.panes[1]
    opened = gate(monkeypatch, window.service, view.columns[1].service)
    place_caret(qtbot, pane)
    logs = [PaintLog(p) for p in view.panes]
    mark = press_key(pane)
    qtbot.wait(300)
    assert [log.marks_before for log in logs] == [[], []]
    opened.set()
    qtbot.waitUntil(lambda: settled(window) and view.up_to_date, timeout=10_000)
    for p, log in zip(view.panes, logs):
        want = p.edit_count  # this pane's mark of the same keystroke
        assert p.painted_mark >= want
        assert log.marks_before and all(m >= want for m in log.marks_before[1:])
    assert mark == view.panes[1].edit_count
