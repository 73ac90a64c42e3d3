"""A line without break points (minified data, one long word) keeps the window usable: the
editor wraps it anywhere (Qt's word-boundary wrapping costs the square of such a line's length),
and its tokens stay the command line's."""

from __future__ import annotations

from PySide6.QtGui import QTextCursor

from tokexplorer.core.registry import get_builtin
from tokexplorer.gui.editor import WRAP_ANYWHERE_LINE

from .helpers import wait_settled
from .test_counts import open_file


def test_a_long_unbroken_line_wraps_anywhere_with_exact_tokens(qtbot, window, tmp_path):
    text = "a" * 200_000 + "\nshort words here\n"
    path = tmp_path / "long.txt"
    path.write_text(text, encoding="utf-8")
    editor = window.editor
    assert not editor.wraps_anywhere()
    open_file(qtbot, window, path)
    assert editor.wraps_anywhere()
    cursor = QTextCursor(editor.document())
    cursor.setPosition(100_000)
    cursor.insertText("b c")
    wait_settled(qtbot, window, timeout=60_000)
    typed = text[:100_000] + "b c" + text[100_000:]
    assert window.state.result.encoding.ids == get_builtin(window.state.tokenizer).encode(typed).ids
    short = tmp_path / "short.txt"
    short.write_text("hello world\n" * 10, encoding="utf-8")
    open_file(qtbot, window, short)
    assert not editor.wraps_anywhere()  # words wrap at their boundaries again


def test_pasting_a_long_line_wraps_anywhere(qtbot, window):
    editor = window.editor
    editor.textCursor().insertText("x" * (WRAP_ANYWHERE_LINE + 1))
    assert editor.wraps_anywhere()
    wait_settled(qtbot, window, timeout=60_000)
