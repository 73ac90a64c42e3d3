"""Lines that move on the screen (a newline above them) are painted from the shapes kept for them
(`gui.editor.painted_lines`), and look exactly as a fresh paint of them does: left to right and
right to left, with markers (byte-level tokens cutting an emoji); the same lines with other tokens
or in another font or width are painted afresh."""

from __future__ import annotations

from PySide6.QtCore import QRectF

from tokexplorer.gui.editor.painted_lines import PaintedLines

from .helpers import type_text, wait_settled
from .test_shaping import corpus_lines, grab

TEXT = "\n".join([
    "The first line, where the newline goes.",
    corpus_lines("udhr_eng.txt", 2, 60),
    corpus_lines("udhr_arb.txt", 2, 50),
    "mixed: abc " + corpus_lines("udhr_arb.txt", 1, 20) + " 123 def",
    corpus_lines("udhr_hin.txt", 2, 50),
    corpus_lines("udhr_mya.txt", 1, 40),
    "emoji 👩🏽‍🚀 and 🇯🇵 cut into bytes, 日本語のテキスト",
] * 2)


def settled_editor(qtbot, make_window, tokenizer="gpt2"):
    window = make_window()
    window.state.set_tokenizer(tokenizer)
    window.documents.set_text(TEXT)
    wait_settled(qtbot, window)
    editor = window.editor
    editor.setCursorWidth(0)  # no caret blinking between two pictures
    cursor = editor.textCursor()
    cursor.setPosition(len("The first"))
    editor.setTextCursor(cursor)
    editor.resize(700, 600)
    grab(editor)  # every line painted once
    return window, editor


def fresh(editor):
    editor.painted_lines.clear()
    return grab(editor)


def test_lines_moved_by_a_newline_are_painted_from_their_shapes_as_a_fresh_paint(qtbot, make_window):
    window, editor = settled_editor(qtbot, make_window)
    flagged = [t for t in editor.drawn_tokens() if t[3]]
    assert flagged  # the emoji's bytes are cut: markers are kept too
    reused = editor.painted_lines.reused
    type_text(editor, "\n")
    wait_settled(qtbot, window)
    moved = grab(editor)
    lines = sum(block.layout().lineCount() for block in iter_blocks(editor))
    # every line below the first is the same as before, one line lower
    assert editor.painted_lines.reused - reused >= lines - 3
    assert moved == fresh(editor)
    window.state.set_tokenizer("o200k_base")  # the same lines with other tokens: none is reused
    wait_settled(qtbot, window)
    assert grab(editor) == fresh(editor) != moved


def test_lines_are_painted_afresh_in_another_font_or_width(qtbot, make_window):
    window, editor = settled_editor(qtbot, make_window, "o200k_base")
    before = grab(editor)
    window.state.set_font(size=editor.font_size() + 3)
    wait_settled(qtbot, window)
    bigger = grab(editor)
    assert bigger != before and bigger == fresh(editor)
    editor.resize(420, 600)  # the lines wrap elsewhere
    qtbot.waitUntil(lambda: editor.viewport().width() < 420)
    narrower = grab(editor)
    assert narrower == fresh(editor)


def iter_blocks(editor):
    block = editor.document().begin()
    while block.isValid():
        yield block
        block = block.next()


def test_the_least_recently_painted_lines_are_forgotten_first():
    kept = PaintedLines(capacity=3)
    kept.follow("palette 1")
    for key in "abc":
        kept.put(key, QRectF())
    assert kept.get("a") is not None  # "a" painted again: "b" is now the oldest
    kept.put("d", QRectF())
    assert len(kept) == 3 and kept.get("b") is None and kept.get("a") is not None
    kept.follow("palette 1")
    assert len(kept) == 3
    kept.follow("palette 2")
    assert len(kept) == 0 and kept.reused == 2
