"""The vocabulary browser with o200k_base's 200,000 tokens: search by text, hex and id, sort by
count, and selecting a token finds it in the text and shows its merge tree."""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt

from tokexplorer.core.registry import get_builtin

from .helpers import wait_settled

TEXT = "he said hello and hello, then ’hello’ again: hello"


def ready(qtbot, window, tokenizer="o200k_base"):
    window.state.set_tokenizer(tokenizer)
    window.documents.set_text(TEXT)
    wait_settled(qtbot, window)
    window.show_view("vocab")
    window.show_view("merges")
    panel = window.vocab
    qtbot.waitUntil(lambda: panel.vocab is not None and panel.vocab_name == tokenizer, timeout=20_000)
    qtbot.waitUntil(lambda: panel.counts is not None, timeout=5_000)
    return panel


def search(qtbot, panel, by: str, query: str) -> list[int]:
    panel.search_by.setCurrentIndex(panel.search_by.findData(by))
    panel.search_box.setText(query)
    qtbot.waitUntil(lambda: panel.up_to_date, timeout=5_000)  # the search has run
    return [panel.model.token_id(r) for r in range(panel.model.rowCount())]


def test_finds_tokens_by_text_hex_and_id(qtbot, window):
    panel = ready(qtbot, window)
    tok = get_builtin("o200k_base")
    assert panel.model.rowCount() == 200_000 and "200,000 of 200,000" in panel.info.text()
    hello = tok.encode_ids(" hello")[0]
    rows = search(qtbot, panel, "text", "␣hello")
    assert hello in rows and all(b" hello" in tok.token_bytes(i).lower() for i in rows)
    quote = tok.encode_ids("’")[0]
    rows = search(qtbot, panel, "hex", "e2 80 99")
    assert quote in rows and all(b"\xe2\x80\x99" in tok.token_bytes(i) for i in rows)
    assert search(qtbot, panel, "id", str(hello)) == [hello]
    assert panel.model.data(panel.model.index(0, 1)) == "␣hello"
    assert panel.model.data(panel.model.index(0, 2)) == "20 68 65 6c 6c 6f"
    assert search(qtbot, panel, "hex", "zz") == [] and "not hex" in panel.info.text()


def test_sort_by_count_and_filters(qtbot, window):
    panel = ready(qtbot, window)
    tok = get_builtin("o200k_base")
    panel.table.sortByColumn(4, Qt.SortOrder.DescendingOrder)
    assert panel.model.token_id(0) == tok.encode_ids(" hello")[0]  # the text's one token seen 3 times
    counts = [panel.model.data(panel.model.index(r, 4)) for r in range(20)]
    assert counts[0] == 3 and counts == sorted(counts, reverse=True) and counts[1] < 3
    panel.filter.setCurrentIndex(panel.filter.findData("in-text"))
    assert panel.model.rowCount() == len(set(tok.encode_ids(TEXT)))
    panel.filter.setCurrentIndex(panel.filter.findData("special"))
    assert [panel.model.token_id(r) for r in range(panel.model.rowCount())] == [199999, 200018]
    panel.filter.setCurrentIndex(panel.filter.findData("not-utf8"))
    assert panel.model.rowCount() > 1000 and panel.model.data(panel.model.index(0, 5)) == "partial UTF-8"


def test_selecting_a_token_finds_it_and_shows_its_tree(qtbot, window):
    panel = ready(qtbot, window)
    tok = get_builtin("o200k_base")
    hello = tok.encode_ids(" hello")[0]
    search(qtbot, panel, "id", str(hello))
    panel.table.selectRow(0)
    ids = window.state.result.encoding.ids
    first = ids.index(hello)
    qtbot.waitUntil(lambda: window.state.caret == first, timeout=5_000)
    qtbot.waitUntil(lambda: window.merge_tree.tree is not None and window.merge_tree.tree.id == hello, timeout=5_000)
    panel.find_next()
    qtbot.waitUntil(lambda: window.state.caret == ids.index(hello, first + 1), timeout=5_000)
    assert panel.info.text().startswith(f"token {hello}: occurrence at token ")
    # The whole message shows in a narrow dock: on a row of its own, as wide as the table, and
    # wrapped, never cut off.
    info = panel.info

    def needed() -> int:
        return info.fontMetrics().boundingRect(QRect(0, 0, info.width(), 10_000), Qt.TextFlag.TextWordWrap,
                                               info.text()).height()

    qtbot.waitUntil(lambda: info.width() >= panel.table.width() - 2 and needed() <= info.height(), timeout=5_000)


def test_sentencepiece_byte_pieces(qtbot, window):
    panel = ready(qtbot, window, "llama-sp")
    panel.filter.setCurrentIndex(panel.filter.findData("byte-fallback"))
    assert panel.model.rowCount() == 256
    assert panel.model.data(panel.model.index(0, 5)).startswith("byte fallback")


def test_a_new_vocabulary_is_read_once_the_text_is_tokenized(qtbot, window, monkeypatch):
    """The server's threads share one interpreter lock: the vocabulary is asked for once the window
    has the new tokenizer's tokens, so reading it does not delay them."""
    from tokexplorer.server.protocol import VocabularyOf

    panel = ready(qtbot, window, "gpt2")
    asked = []
    server = window.state.server
    real = server.ask

    def spy(request, *args, **kwargs):
        if isinstance(request, VocabularyOf):
            result = window.state.result
            asked.append((request.tokenizer, window.state.busy, result.tokenizer if result is not None else None))
        return real(request, *args, **kwargs)

    monkeypatch.setattr(server, "ask", spy)
    window.state.set_tokenizer("o200k_base")
    assert panel.model.rowCount() == 0 and "reading o200k_base's vocabulary" in panel.info.text()
    qtbot.waitUntil(lambda: panel.vocab_name == "o200k_base", timeout=20_000)
    assert asked == [("o200k_base", "", "o200k_base")]
    qtbot.waitUntil(lambda: panel.up_to_date, timeout=20_000)
    assert panel.model.rowCount() == 200_000
