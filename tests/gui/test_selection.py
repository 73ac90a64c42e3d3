"""The editor's selection in code points (`SelectionTracker`) and the status bar's selection
counts, with real tokenizers."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from tokexplorer.core.analysis.quirks import quirk
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.analysis.selection import selection_counts
from tokexplorer.gui.app import select_code_points
from tokexplorer.core.positions import utf16_len
from tokexplorer.gui.editor.selection import code_point_at16

from .helpers import wait_settled

TEXT = "a😀b 𝕏𝕏 e\u0301 🇺🇳 한 👨\u200d👩\u200d👧 end"


def test_code_point_at16_matches_decoding_the_prefix(window, qtbot):
    window.documents.set_text(TEXT)
    wait_settled(qtbot, window)
    result = window.state.result
    units = TEXT.encode("utf-16-le")
    for p16 in range(utf16_len(TEXT) + 1):
        if p16 < utf16_len(TEXT) and 0xDC00 <= int.from_bytes(units[2 * p16:2 * p16 + 2], "little") <= 0xDFFF:
            continue  # inside a surrogate pair: Qt never puts the caret there
        assert code_point_at16(result, p16) == len(units[:2 * p16].decode("utf-16-le")), p16


def test_the_state_follows_the_selection_in_code_points(window, qtbot):
    window.documents.set_text(TEXT)
    wait_settled(qtbot, window)
    select_code_points(window, 5, 7)  # 𝕏𝕏, after two astral characters
    assert window.state.selection == (5, 7)
    cursor = window.editor.textCursor()
    cursor.clearSelection()
    window.editor.setTextCursor(cursor)
    assert window.state.selection == (7, 7)


def test_selection_counts_in_the_status_bar(window, qtbot):
    parts = dict(quirk("json-vs-yaml").samples)
    window.state.set_tokenizer("cl100k_base")
    window.documents.set_text(parts["JSON"] + parts["YAML"])
    wait_settled(qtbot, window)
    label = window.selection_counts
    assert label.text() == ""
    tok = get_builtin("cl100k_base")
    for a, b, part in ((0, len(parts["JSON"]), parts["JSON"]),
                       (len(parts["JSON"]), len(parts["JSON"]) + len(parts["YAML"]), parts["YAML"])):
        select_code_points(window, a, b)
        n = len(tok.encode(part))
        qtbot.waitUntil(lambda: label.text() == f"selection: {n} tokens ({n} whole) · {len(part)} chars · "
                                                f"{len(part.encode())} bytes")


def test_selection_counts_follow_the_tokenizer(window, qtbot):
    window.documents.set_text("hi 👋 there")
    wait_settled(qtbot, window)
    select_code_points(window, 3, 4)
    window.state.set_tokenizer("gpt2")
    wait_settled(qtbot, window)
    # GPT-2 cuts the emoji after its third byte: two tokens touch it, one lies inside it.
    qtbot.waitUntil(lambda: window.selection_counts.text() == "selection: 2 tokens (1 whole) · 1 char · 4 bytes")
    window.state.set_tokenizer("llama-sp")
    wait_settled(qtbot, window)
    qtbot.waitUntil(lambda: window.selection_counts.text() == "selection: 4 tokens (4 whole) · 1 char · 4 bytes")


def test_status_bar_counts_keep_their_tokens_in_a_narrow_window(window, qtbot):
    """Long counts in a window as narrow as it goes: the status bar's selection counts and text
    counts each show a line that fits, with the tokens (the full lines in the tooltips); widened,
    the full lines come back. (The selection line was cut to "s".)"""
    text = "To be, or not to be: that is the question. " * 24_000  # 1 MB: long numbers
    window.state.set_tokenizer("cl100k_base")
    window.documents.set_text(text)
    wait_settled(qtbot, window)
    select_code_points(window, 0, 400_000)
    qtbot.waitUntil(lambda: window.selection_counts.forms != [])
    window.resize(600, 600)  # the window stops at its minimum width
    QApplication.processEvents()
    sel, counts = window.selection_counts, window.counts_label
    enc = window.state.result.encoding
    s, n = selection_counts(enc, 0, 400_000), len(enc)
    assert window.width() < 1000
    for label, tokens in ((sel, s.tokens), (counts, n)):
        assert label.isVisible() and label.text_width(label.text()) <= label.contentsRect().width(), label.text()
        assert f"{tokens:,} token" in label.text()
        assert label.text() != label.toolTip().splitlines()[0]  # shortened
    assert sel.toolTip().startswith(f"selection: {s.tokens:,} tokens ({s.whole:,} whole) · 400,000 chars")
    assert counts.toolTip().startswith(f"{n:,} tokens · {len(text):,} characters")
    window.resize(1800, 600)
    QApplication.processEvents()
    for label in (sel, counts):
        assert label.text() == label.toolTip().splitlines()[0]
