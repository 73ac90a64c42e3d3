"""The chunk view explains the regex: which alternative of the split pattern made each chunk, and
where another pattern (GPT-2 as released in encoder.py, cl100k, ...) splits the same text otherwise."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor

from tokexplorer.core.analysis.pattern_parts import COMPARABLE, compare_splits, explain_chunks
from tokexplorer.gui.panels import chunks as chunk_panel
from tokexplorer.gui.widgets.table_model import BACKGROUND, TOOLTIP

from .helpers import tokenizer_for, wait_settled

TEXT = "HE'S got 12345 of them; we'll see    you!!!\n    if x:\n안녕하세요 नमस्ते 👋🏽 你好  "


def shown(window, qtbot, name: str, compare: str | None = None):
    window.state.set_tokenizer(name)
    window.documents.set_text(TEXT)
    wait_settled(qtbot, window)
    view = window.chunk_view
    window.show_view("chunks")
    view.set_compare(compare)
    qtbot.waitUntil(lambda: view.up_to_date and view.model.rowCount() > 0
                    and (view.model.differs is not None) == (compare is not None), timeout=20_000)
    return view


def rows(view) -> list[tuple[str, str]]:
    model = view.model
    return [(model.text[a:b], model.matched_by(r)) for r, (a, b) in
            enumerate(zip(model.starts.tolist(), model.ends.tolist()))]


def test_each_chunk_names_the_alternative_that_matched(qtbot, window):
    view = shown(window, qtbot, "gpt2")
    tok = tokenizer_for(window, "gpt2")
    enc = tok.encode(TEXT)
    expected = explain_chunks(TEXT, tok.split_pattern)
    assert [view.model.span(r) for r in range(view.model.rowCount())] == enc.chunks
    assert rows(view) == [(TEXT[a:b], expected.names[k]) for a, b, k in
                          zip(expected.starts.tolist(), expected.ends.tolist(), expected.alternatives.tolist())]
    got = dict(rows(view))
    assert got["'ll"] == "contraction" and got[" 12345"] == "numbers (a space before)"
    assert got["!!!"] == "punctuation (a space before)" and got["  "] == "whitespace at the end of the text"
    model = view.model
    row = [t for t, _ in rows(view)].index("'ll")
    assert model.data(model.index(row, 3)) == "contraction"
    assert "'(?:[sdmt]|ll|ve|re)" in model.data(model.index(row, 3), TOOLTIP)
    assert isinstance(model.data(model.index(row, 3), BACKGROUND), QColor)
    assert "matched by: letters (a space before)" in view.summary.text()


def test_compared_with_gpt4_the_chunks_that_differ_are_highlighted(qtbot, window):
    view = shown(window, qtbot, "gpt2", "cl100k")
    model = view.model
    differs = compare_splits(TEXT, model.starts, model.ends, COMPARABLE["cl100k"][0])
    marked = [t for (t, _), d in zip(rows(view), differs.tolist()) if d]
    assert marked[:3] == ["'", "S", " 12345"]  # GPT-4 takes 'S as a contraction, digits by three
    assert model.differs.tolist() == differs.tolist()
    row = [t for t, _ in rows(view)].index("'")
    assert model.data(model.index(row, 2), BACKGROUND) == QColor(chunk_panel.DIFFERS)
    assert f"{len(marked)} of these chunks are not chunks of GPT-4 (cl100k_base)" in view.summary.text()


def test_encoder_py_splits_the_text_as_tiktoken_gpt2_does(qtbot, window):
    view = shown(window, qtbot, "gpt2", "encoder.py")
    assert not view.model.differs.any()
    assert "GPT-2 as released (OpenAI's encoder.py) splits this text into the same chunks" in view.summary.text()
    view.set_compare(None)
    qtbot.waitUntil(lambda: view.up_to_date and view.model.differs is None, timeout=10_000)


def test_sentencepiece_has_no_pattern_to_explain(qtbot, window):
    window.state.set_tokenizer("llama-sp")
    window.documents.set_text(TEXT)
    wait_settled(qtbot, window)
    window.show_view("chunks")
    qtbot.waitUntil(lambda: window.chunk_view.up_to_date and "no regex pre-split" in window.chunk_view.summary.text(),
                    timeout=10_000)
    assert window.chunk_view.model.rowCount() == 0


@pytest.mark.parametrize("width, scale", [(250, 1.0), (350, 1.5), (700, 1.0)])  # 250: 1366 px at 200 %
def test_the_matched_by_column_shows_its_name_or_has_it_as_its_tooltip(qtbot, window, width, scale):
    """In a narrow dock with a large font the list fits (no sideways scroll bar) and each
    "matched by" cell's tooltip starts with its name; in a 700 px dock every name shows whole."""
    from .narrow import narrow_dock

    view = shown(window, qtbot, "cl100k_base")
    narrow_dock(qtbot, window, "chunks", width=width, scale=scale)
    assert not view.list.horizontalScrollBar().isVisible()
    model, metrics = view.model, view.list.fontMetrics()
    names = {model.matched_by(r) for r in range(model.rowCount())}
    assert "letters (one non-letter before)" in names
    for row in range(model.rowCount()):
        name = model.matched_by(row)
        assert model.data(model.index(row, 3), TOOLTIP).startswith(name + ": alternative ")
        assert model.data(model.index(row, 2), TOOLTIP) == model.data(model.index(row, 2))  # the chunk
        if width >= 700:
            assert metrics.horizontalAdvance(name) <= view.list.columnWidth(3) - 8, name
