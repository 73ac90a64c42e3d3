"""A line without break points (minified data, one long word) keeps the window usable: the
editor holds it as pieces with soft breaks between them (Qt lays a whole block out again on every
edit of it), and its tokens, counts, selection, copies and saved file stay the line's own."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, Qt
from PySide6.QtGui import QGuiApplication, QTextCursor

from tokexplorer.core.registry import get_builtin
from tokexplorer.core.analysis.selection import selection_counts
from tokexplorer.gui.editor.token_view import WRAP_ANYWHERE_LINE
from tokexplorer.core.positions import SOFT_LINE

from .helpers import wait_settled
from .test_counts import open_file

LINE = "a" * 200_000
TEXT = "x😀\n" + LINE + "\nshort words here\n"  # an astral character before the line, too


def _open(qtbot, window, tmp_path, text=TEXT):
    path = tmp_path / "long.txt"
    path.write_bytes(text.encode("utf-8"))
    open_file(qtbot, window, path)
    return path


def _editor_position(editor, cp: int) -> int:
    """The editor's UTF-16 position of code point `cp` of TEXT (3 = the line's start)."""
    doc = editor.document()
    piece, offset = divmod(cp - 3, SOFT_LINE)
    return doc.findBlockByNumber(1 + piece).position() + offset


def test_a_long_line_is_held_in_pieces_and_typed_into_with_exact_tokens(qtbot, window, tmp_path):
    window.state.set_tokenizer("cl100k_base")
    path = _open(qtbot, window, tmp_path)
    editor = window.editor
    doc = editor.document()
    lengths = []
    block = doc.begin()
    while block.isValid():
        lengths.append(block.length())
        block = block.next()
    assert max(lengths) <= SOFT_LINE + 1  # no block as long as the line
    assert editor.user_text() == TEXT
    assert "shown in pieces" in window.banner.label.text()
    tok = get_builtin("cl100k_base")
    assert window.state.result.encoding.ids == tok.encode(TEXT).ids
    # Type into the middle of the line, across the end of a piece, and delete a character.
    cp = 3 + 25 * SOFT_LINE - 2
    cursor = editor.textCursor()
    cursor.setPosition(_editor_position(editor, cp))
    editor.setTextCursor(cursor)
    qtbot.keyClicks(editor, "b")
    qtbot.keyClicks(editor, "cd")
    wait_settled(qtbot, window, timeout=60_000)
    cursor = editor.textCursor()
    cursor.setPosition(cursor.block().next().position())  # after the piece's soft break
    editor.setTextCursor(cursor)
    qtbot.keyClicks(editor, "e")
    expected = TEXT[:cp] + "bcd" + TEXT[cp:cp + 2] + "e" + TEXT[cp + 2:]
    wait_settled(qtbot, window, timeout=60_000)
    assert editor.user_text() == expected
    result = window.state.result
    assert result.encoding.ids == tok.encode(expected).ids
    # Every token's editor span holds its text (soft breaks aside).
    for i in result.range16(*editor.visible_range()):
        cursor = QTextCursor(doc)
        cursor.setPosition(int(result.starts16[i]))
        cursor.setPosition(int(result.ends16[i]), QTextCursor.MoveMode.KeepAnchor)
        shown = cursor.selectedText().replace("\u2029", "")
        assert shown == expected[result.encoding.starts[i]:result.encoding.ends[i]]
    window.documents.save()
    assert path.read_bytes() == expected.encode("utf-8")  # no line break added


def test_a_selection_across_a_soft_break_counts_and_copies_the_line(qtbot, window, tmp_path):
    window.state.set_tokenizer("cl100k_base")
    _open(qtbot, window, tmp_path)
    editor = window.editor
    start, end = 3 + SOFT_LINE - 10, 3 + 3 * SOFT_LINE + 10  # across three soft breaks
    cursor = editor.textCursor()
    cursor.setPosition(_editor_position(editor, start))
    cursor.setPosition(_editor_position(editor, end), QTextCursor.MoveMode.KeepAnchor)
    editor.setTextCursor(cursor)
    assert window.state.selection == (start, end)
    counts = selection_counts(window.state.result.encoding, start, end)
    assert counts.chars == end - start
    editor.copy()
    assert QGuiApplication.clipboard().text() == TEXT[start:end]


def test_deleting_a_soft_break_and_undoing_keeps_the_text(qtbot, window, tmp_path):
    _open(qtbot, window, tmp_path)
    editor = window.editor
    blocks = editor.document().blockCount()
    third = _editor_position(editor, 3 + 3 * SOFT_LINE) - 1  # the third soft break
    cursor = editor.textCursor()
    cursor.setPosition(_editor_position(editor, 3 + SOFT_LINE))  # after the first soft break
    editor.setTextCursor(cursor)
    qtbot.keyClick(editor, Qt.Key.Key_Backspace)
    assert editor.document().blockCount() == blocks - 1
    assert editor.user_text() == TEXT
    # A selection over a piece's end replaced, then undone: the break is soft again.
    third -= 1
    cursor.setPosition(third - 2)
    cursor.setPosition(third + 3, QTextCursor.MoveMode.KeepAnchor)
    editor.setTextCursor(cursor)
    qtbot.keyClicks(editor, "zz")
    assert editor.user_text() == TEXT[:3 + 3 * SOFT_LINE - 2] + "zz" + TEXT[3 + 3 * SOFT_LINE + 2:]
    editor.undo()
    assert editor.user_text() == TEXT
    assert editor.document().blockCount() == blocks - 1
    editor.undo()
    assert editor.user_text() == TEXT
    assert editor.document().blockCount() == blocks
    wait_settled(qtbot, window, timeout=60_000)
    assert window.state.result.encoding.text == TEXT


def test_a_long_line_of_astral_and_combining_characters_keeps_its_clusters(qtbot, window, tmp_path):
    line = "e\u0301😀" * 6_000  # an accent and an emoji after every letter
    text = line + "\n"
    _open(qtbot, window, tmp_path, text)
    editor = window.editor
    assert editor.document().blockCount() > 2
    block = editor.document().begin()
    while block.next().isValid():
        assert block.text()[:1] == "e"  # every piece starts a cluster
        block = block.next()
    assert editor.user_text() == text
    result = window.state.result
    assert result.encoding.ids == get_builtin(window.state.tokenizer).encode(text).ids
    doc = editor.document()
    assert all(doc.characterAt(p) == "\u2029" for p in result.soft16.tolist())
    cursor = editor.textCursor()  # from the second piece's start to the last's
    cursor.setPosition(int(result.soft16[0]) + 1)
    cursor.setPosition(int(result.soft16[-1]) + 1, QTextCursor.MoveMode.KeepAnchor)
    editor.setTextCursor(cursor)
    assert window.state.selection == (int(result.soft[0]), int(result.soft[-1]))


def test_pasting_a_long_line_wraps_anywhere(qtbot, window):
    editor = window.editor
    editor.textCursor().insertText("x" * (WRAP_ANYWHERE_LINE + 1))
    assert editor.wraps_anywhere()
    wait_settled(qtbot, window, timeout=60_000)


def test_a_pasted_long_line_goes_in_as_pieces_through_undo_and_redo(qtbot, window, tmp_path):
    window.state.set_tokenizer("cl100k_base")
    text = "start\n"
    path = tmp_path / "pasted.txt"
    path.write_text(text, encoding="utf-8")
    open_file(qtbot, window, path)
    editor = window.editor
    cursor = editor.textCursor()
    cursor.setPosition(2)
    cursor.setPosition(4, QTextCursor.MoveMode.KeepAnchor)  # replaces "ar"
    editor.setTextCursor(cursor)
    line = "".join(chr(97 + (i * 7) % 26) for i in range(30_000)) + " end\nnext line"
    mime = QMimeData()
    mime.setText(line)
    editor.insertFromMimeData(mime)
    pasted = "st" + line + "t\n"
    assert editor.document().blockCount() > 8 and editor.wraps_anywhere()
    assert editor.user_text() == pasted
    wait_settled(qtbot, window, timeout=60_000)
    assert window.state.result.encoding.ids == get_builtin("cl100k_base").encode(pasted).ids
    editor.undo()
    assert editor.user_text() == text
    editor.redo()
    assert editor.user_text() == pasted
    wait_settled(qtbot, window, timeout=60_000)
    assert window.state.result.encoding.text == pasted
    window.documents.save()
    assert path.read_bytes() == pasted.encode("utf-8")


COPY_AND_EXIT = """
import sys
from PySide6.QtGui import QGuiApplication, QTextCursor
from PySide6.QtWidgets import QApplication
from tokexplorer.gui.editor.editor import TokenEditor
from tokexplorer.core.positions import editor_text
from tokexplorer.gui.state import AppState
app = QApplication([])
editor = TokenEditor(AppState())
editor.load_text(editor_text("ab " * 10_000))
cursor = editor.textCursor()
cursor.setPosition(0)
cursor.setPosition(editor.document().characterCount() - 1, QTextCursor.MoveMode.KeepAnchor)
editor.setTextCursor(cursor)
editor.copy()
sys.stdout.write(str(QGuiApplication.clipboard().text() == "ab " * 10_000))
"""


def test_copying_across_soft_breaks_then_quitting_does_not_crash(tmp_path):
    """The copy of a selection with soft breaks in it is Qt's own mime data: one made in Python
    was deleted twice, and the process died at exit (SIGSEGV) after the copy had worked."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-c", COPY_AND_EXIT], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert (done.returncode, done.stdout) == (0, "True"), done.stderr[-2000:]


def test_find_matches_across_a_soft_break(qtbot, window, tmp_path):
    """Qt's find cannot see through the editor's cut of a long line; the find bar searches the
    line itself and selects the match on both sides of the break, forwards, backwards and wrapping."""
    import random

    rng = random.Random(3)
    line = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(30_000))
    text = line + "\n"
    _open(qtbot, window, tmp_path, text)
    result = window.state.result
    assert len(result.soft) >= 2
    cut = int(result.soft[1])
    needle = text[cut - 4:cut + 4]
    assert text.count(needle) == 1
    bar = window.find_bar
    window.find_action.trigger()
    bar.field.setText(needle.upper())  # case-insensitive unless asked
    assert bar.find_next()
    cursor = window.editor.textCursor()
    editor_cut = window.editor.document().findBlockByNumber(2).position()  # the second piece's end
    assert cursor.selectionStart() == editor_cut - 1 - 4 and cursor.selectionEnd() == editor_cut + 4
    assert bar.status.text() == ""
    assert bar.find_next() and bar.status.text() == "wrapped"  # the only match, found again
    assert window.editor.textCursor().selectionStart() == editor_cut - 5
    assert bar.find_previous() and window.editor.textCursor().selectionStart() == editor_cut - 5
    bar.case.setChecked(True)
    assert not bar.find_next() and bar.status.text() == "not found"
    assert window.editor.textCursor().selectionStart() == editor_cut - 5  # the cursor stays
    bar.field.setText(needle)
    assert bar.find_next()
    assert window.editor.display_text().replace("\n", "").replace("\u2029", "") == line


def test_end_and_home_pressed_again_go_to_the_whole_lines_ends(qtbot, window, tmp_path):
    """The first End stops where the line on screen ends; pressed there, End goes on to the end
    of the whole line, past the soft breaks of its pieces; Home likewise, and Shift selects."""
    _open(qtbot, window, tmp_path)
    editor = window.editor
    doc = editor.document()
    line_start, line_end = _editor_position(editor, 3), _editor_position(editor, 3 + len(LINE) - 1) + 1
    piece = doc.findBlockByNumber(3)  # the third piece: soft breaks on both sides
    cursor = editor.textCursor()
    cursor.setPosition(piece.position())
    editor.setTextCursor(cursor)

    def press(key, modifier=Qt.KeyboardModifier.NoModifier) -> int:
        qtbot.keyClick(editor, key, modifier)
        return editor.textCursor().position()

    assert piece.layout().lineCount() > 1  # the piece wraps on screen
    first = press(Qt.Key.Key_End)
    assert piece.position() < first < piece.position() + piece.length() - 1  # the line on screen
    assert press(Qt.Key.Key_End) == line_end
    assert editor.textCursor().block().next().text() == "short words here"
    assert press(Qt.Key.Key_End) == line_end  # already there: nothing moves
    # Home: the start of the last piece's last line on screen, then the whole line's start.
    first = press(Qt.Key.Key_Home)
    assert line_start < first < line_end and editor.textCursor().block().blockNumber() > 3
    assert press(Qt.Key.Key_Home) == line_start
    assert press(Qt.Key.Key_Home) == line_start
    # At a piece's end, End goes on at once (it is where the line on screen ends).
    cursor.setPosition(piece.position() + piece.length() - 1)
    editor.setTextCursor(cursor)
    assert press(Qt.Key.Key_End) == line_end
    # Shift+End twice from the whole line's start: the whole line selected.
    cursor.setPosition(line_start)
    editor.setTextCursor(cursor)
    press(Qt.Key.Key_End, Qt.KeyboardModifier.ShiftModifier)
    press(Qt.Key.Key_End, Qt.KeyboardModifier.ShiftModifier)
    assert window.state.selection == (3, 3 + len(LINE))
