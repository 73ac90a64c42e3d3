"""Requests the server leaves unanswered: a document's `Tokenize` superseded by a later one before
the server reached it is never answered, and the window's link forgets it when the later one's
answer comes (else every superseded keystroke's callbacks stayed for the window's lifetime)."""

from __future__ import annotations

from tokexplorer.gui.services import server_link

from .helpers import wait_settled


def test_superseded_requests_are_forgotten_when_a_later_one_is_answered(qtbot, window, corpora, monkeypatch):
    service, link = window.service, window.state.server
    answers = []
    answer = service._on_answer
    monkeypatch.setattr(service, "_on_answer", lambda value: (answers.append(value), answer(value)))
    window.documents.set_text((corpora / "en/tinyshakespeare.txt").read_text("utf-8"))
    for _ in range(10):  # sent while the server encodes the book: they wait for it together
        service.submit()
    wait_settled(qtbot, window)
    assert len(answers) < 11  # some went unanswered: the server answered the latest of a batch
    assert service.completed == service.generation
    assert link._waiting == {}
    assert not [rid for rid, owner in server_link._server.owners.items() if owner is link]
    window.editor.insertPlainText("x")  # and the next keystroke is answered as before
    wait_settled(qtbot, window)
    assert window.state.result.encoding.text.startswith("x")
