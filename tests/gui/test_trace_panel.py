"""The encode-trace panel: the chunk under the caret, merge by merge, ending in the tokenizer's ids."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QToolButton

from tokexplorer.core.registry import get_builtin

from .helpers import wait_settled

TEXT = "    hello world!!! naïve 👋🏽 안녕하세요 unbelievable"


def traced(window, chunk: bytes) -> bool:
    trace = window.trace.trace
    return trace is not None and trace.chunk == chunk


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base", "llama-sp"])
def test_trace_of_each_chunk_ends_with_the_encoders_ids(qtbot, window, name):
    window.state.set_tokenizer(name)
    window.documents.set_text(TEXT)
    wait_settled(qtbot, window)
    window.show_view("trace")
    tok = get_builtin(name)
    result = window.state.result
    seen = set()
    for index in range(len(result)):
        cursor = window.editor.textCursor()
        cursor.setPosition(int(result.starts16[index]))
        window.editor.setTextCursor(cursor)
        qtbot.waitUntil(lambda: window.trace.trace is not None and window.trace.trace.start
                        <= result.encoding.starts[index] < window.trace.trace.end, timeout=10_000)
        trace = window.trace.trace
        seen.add(trace.chunk)
        assert trace.final == window.trace.expected
        assert window.trace.verdict.text().startswith("✓")
        if name != "llama-sp":  # a regex chunk encodes on its own to the same ids
            assert trace.final == tok.encode_ids(trace.chunk.decode("utf-8", "replace"), allowed_special="none") \
                or b"\xef\xbf\xbd" in trace.chunk
    assert len(seen) >= 5


def test_slider_walks_the_steps(qtbot, window):
    window.state.set_tokenizer("gpt2")
    window.documents.set_text("he said hello")
    wait_settled(qtbot, window)
    window.show_view("trace")
    cursor = window.editor.textCursor()
    cursor.setPosition(10)
    window.editor.setTextCursor(cursor)
    qtbot.waitUntil(lambda: traced(window, b" hello"), timeout=10_000)
    panel = window.trace
    assert panel.slider.maximum() == 5 and panel.steps.model().rowCount() == 5
    panel.slider.setValue(0)
    assert "Before any merge: 6 parts" in panel.step_label.toolTip()
    panel.slider.setValue(2)  # h+e, l+l
    shown = panel.sequence.text()
    plain = re.sub(r"<[^>]+>", "", shown).replace("&nbsp;", " ").replace("&#8203;", "")
    assert plain.split() == ["␣", "he", "ll", "o"]
    assert "font-weight:bold;'>ll</span>" in shown  # the part just made
    assert "Step 2 of 5" in panel.step_label.toolTip() and "id 297" in panel.step_label.toolTip()
    assert panel.steps.currentIndex().row() == 1


def test_a_long_chunk_is_traced_a_page_at_a_time(qtbot, window):
    """A 6,000-letter word is one o200k_base chunk (the old 2 KB limit refused it): traced in a
    worker, its merges listed, its sequence shown a page at a time; one over 64 KB is refused
    with the bound named."""
    from tokexplorer.core.analysis.encode_trace import MAX_TRACE_BYTES
    from tokexplorer.gui.panels.trace import PAGE_PARTS

    window.state.set_tokenizer("o200k_base")
    word = "abcdefghij" * 600
    window.documents.set_text(f"hi {word} there")
    wait_settled(qtbot, window)
    window.show_view("trace")
    cursor = window.editor.textCursor()
    cursor.setPosition(3000)
    window.editor.setTextCursor(cursor)
    qtbot.waitUntil(lambda: traced(window, b" " + word.encode()) and window.trace.up_to_date, timeout=60_000)
    panel = window.trace
    trace = panel.trace
    assert panel.verdict.text().startswith("✓") and trace.final == panel.expected
    assert f"({len(trace.final):,} ids)" in panel.verdict.text() and len(panel.verdict.text()) < 400
    assert panel.steps.model().rowCount() == len(trace.steps) == panel.slider.maximum() > 4_000
    panel.slider.setValue(len(trace.steps) // 2)
    assert f"Step {len(trace.steps) // 2:,} of {len(trace.steps):,}" in panel.step_label.toolTip()
    assert "Showing parts" in panel.step_label.toolTip()
    assert panel.sequence.text().count("background-color") == PAGE_PARTS
    assert "font-weight:bold" in panel.sequence.text()  # the part just made is on the page
    assert panel.steps.currentIndex().row() == len(trace.steps) // 2 - 1
    window.documents.set_text("x" + "a" * (MAX_TRACE_BYTES + 10))
    wait_settled(qtbot, window)
    cursor = window.editor.textCursor()
    cursor.setPosition(100)
    window.editor.setTextCursor(cursor)
    qtbot.waitUntil(lambda: "No trace" in panel.title.text(), timeout=60_000)
    assert f"up to {MAX_TRACE_BYTES:,} bytes" in panel.title.text()


def current_step_shown(panel) -> bool:
    """The list's current row (the slider's step) lies wholly inside the list's viewport."""
    row = panel.steps.currentIndex()
    assert row.isValid() and row.row() == panel.slider.value() - 1
    return panel.steps.viewport().rect().contains(panel.steps.visualRect(row))


def settle_layout() -> None:
    # subtle: a relabelled panel gets its new geometry from posted layout requests, a pass each.
    for _ in range(3):
        QApplication.processEvents()


@pytest.mark.parametrize("dock_height", [None, 180])  # the window's own, and about the smallest
def test_the_current_step_stays_in_view(qtbot, window, dock_height):
    """A long trace's current step is never left below the list's bottom: after opening a trace
    (its title and verdict re-wrap and shrink the list after the step was scrolled to), moving
    the slider, the step buttons, and moving the caret to another chunk."""
    window.resize(1000, 700)
    window.state.set_tokenizer("gpt2")
    digits = "1234567890" * 50  # one gpt2 chunk: 500 parts, 251 merges
    kana = "んど終了を告げんとす依って本会は来る二十五日を期し本区内一千有余の出征将校下士卒"  # one chunk, 54 merges
    window.documents.set_text(f"x {digits}\n{kana}")
    wait_settled(qtbot, window)
    window.show_view("trace")
    if dock_height is not None:
        window.resizeDocks([window.trace_dock], [dock_height], Qt.Orientation.Vertical)
    panel = window.trace
    cursor = window.editor.textCursor()
    cursor.setPosition(100)
    window.editor.setTextCursor(cursor)
    qtbot.waitUntil(lambda: traced(window, b" " + digits.encode()) and panel.up_to_date, timeout=20_000)
    settle_layout()
    assert panel.slider.maximum() > 200
    assert panel.steps.viewport().height() < 40 * panel.steps.sizeHintForRow(0)  # the list scrolls
    assert current_step_shown(panel)
    for k in (120, 1, panel.slider.maximum() // 2, panel.slider.maximum()):
        panel.slider.setValue(k)
        settle_layout()
        assert current_step_shown(panel), k
    first, back, forward, last = panel.findChildren(QToolButton)
    for button in (back, back, first, forward, forward, last):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        settle_layout()
        if panel.slider.value() > 0:
            assert current_step_shown(panel)
    cursor.setPosition(len(f"x {digits}\n") + 10)
    window.editor.setTextCursor(cursor)
    qtbot.waitUntil(lambda: traced(window, kana.encode()) and panel.up_to_date, timeout=20_000)
    settle_layout()
    assert panel.slider.value() == panel.slider.maximum() == len(panel.trace.steps) > 50
    assert current_step_shown(panel)


def test_by_rule_the_lectures_twenty_merges_are_twenty_steps(qtbot, window, corpora):
    """A Basic BPE of 20 merges (minbpe's trainer) on a text, that text in the editor: "by rule"
    steps through the lecture's loop, one line per rule in the order learned, each with its places
    and the length after, ending with the tokenizer's ids; "each merge" has one step per merge done."""
    from tokexplorer.core.training.bpe import train
    from tokexplorer.server.protocol import TrainedBpe

    text = (corpora / "en/taylorswift.txt").read_text("utf-8")[:24_000]
    tok = train(text, 276)
    name = window.state.add_trained("lecture-20", TrainedBpe(dict(tok.merges), None, {}, "20 merges"))
    qtbot.waitUntil(lambda: window.state.catalog.is_loaded(name), timeout=30_000)
    window.state.set_tokenizer(name)
    window.documents.set_text(text)
    wait_settled(qtbot, window)
    window.show_view("trace")
    panel = window.trace
    panel.set_mode("rule")
    cursor = window.editor.textCursor()
    cursor.setPosition(5)
    window.editor.setTextCursor(cursor)
    qtbot.waitUntil(lambda: panel.trace is not None and panel.up_to_date, timeout=60_000)
    enc = tok.encode(text)
    assert panel.mode_box.currentText().startswith("by rule")
    assert panel.steps.model().rowCount() == panel.slider.maximum() == 20
    rows = [panel.steps_model.data(panel.steps_model.index(k)) for k in range(20)]
    assert [int(re.search(r"→ (\d+)  ", row).group(1)) for row in rows] == list(range(256, 276))
    first = panel.rules.rules[0]
    assert rows[0].startswith(f"1. ({first.pair[0]}, {first.pair[1]}) → 256  ")
    assert rows[-1].endswith(f"→ length {len(enc.ids):,}")
    assert panel.rules.final == enc.ids and panel.verdict.text().startswith("✓")
    assert "20 rules applied" in panel.title.text()
    panel.slider.setValue(1)
    assert f"at {len(first.positions):,} places; length {first.length:,}" in panel.step_label.toolTip()
    panel.mode_box.setCurrentIndex(0)  # each merge: thousands of steps, the same final ids
    assert panel.mode == "occurrence"
    assert panel.steps.model().rowCount() == len(panel.trace.steps) == panel.rules.occurrences > 4000
    assert panel.verdict.text().startswith("✓")


def test_by_rule_says_why_not_for_sentencepiece(qtbot, window):
    window.state.set_tokenizer("llama-sp")
    window.documents.set_text("hello world")
    wait_settled(qtbot, window)
    window.show_view("trace")
    panel = window.trace
    cursor = window.editor.textCursor()
    cursor.setPosition(8)
    window.editor.setTextCursor(cursor)
    qtbot.waitUntil(lambda: panel.trace is not None and panel.up_to_date, timeout=10_000)
    panel.set_mode("rule")
    assert "piece score" in panel.title.text() and panel.steps.model().rowCount() == 0
    panel.set_mode("occurrence")
    assert panel.steps.model().rowCount() > 0 and panel.verdict.text().startswith("✓")


def test_the_steps_fit_a_narrow_dock_each_whole_in_its_tooltip(qtbot, window):
    """In a 350 px dock at 1.5 times the font each step's row is as wide as the list (elided, no
    sideways scrolling), its tooltip the step whole."""
    from .narrow import narrow_dock

    window.state.set_tokenizer("gpt2")
    window.documents.set_text("he said hello")
    wait_settled(qtbot, window)
    narrow_dock(qtbot, window, "trace", height=400, scale=1.5)
    cursor = window.editor.textCursor()
    cursor.setPosition(10)
    window.editor.setTextCursor(cursor)
    qtbot.waitUntil(lambda: traced(window, b" hello"), timeout=10_000)
    settle_layout()
    steps = window.trace.steps
    model = steps.model()
    assert model.rowCount() == 5
    # (the list lays its rows out again a moment after a resize)
    qtbot.waitUntil(lambda: all(steps.visualRect(model.index(row, 0)).width() <= steps.viewport().width()
                                for row in range(model.rowCount())), timeout=2_000)
    for row in range(model.rowCount()):
        index = model.index(row, 0)
        assert model.data(index, Qt.ItemDataRole.ToolTipRole) == model.data(index)
    assert model.data(model.index(0, 0)).startswith("1. ")
    label = window.trace.step_label  # one of its forms whole (the step's number at least)
    assert label.text() in label.forms and label.toolTip().startswith(f"Step {model.rowCount()} of 5: ")
