"""The window counts what the command line counts: every file of the shared corpora, opened in the
app, is tokenized exactly as the file holds it (CRLF, lone CR, U+2028, U+2029, U+0085,
noncharacters...) under every built-in, with the tokens, characters and bytes of the core (and of
`tokexplorer compare --json` for blns.txt, the file whose counts used to differ)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from PySide6.QtGui import QTextCursor

from tokexplorer.core.registry import builtin_names, get_builtin
from tokexplorer.core.files.textfile import read_text_file

from .helpers import wait_settled
from .test_shaping import CORPORA

FILES = sorted(p for p in CORPORA.rglob("*") if p.is_file())


def open_file(qtbot, window, path) -> None:
    window.documents.open_text(path)
    qtbot.waitUntil(lambda: window.state.path == path and not window.editor.isReadOnly(), timeout=60_000)
    wait_settled(qtbot, window, timeout=60_000)


ODD = "\r\u2028\u2029\x85\ufdd0\ufdd1\ufffe\uffff\ufeff"  # what Qt may not hold as it is


@pytest.mark.slow
def test_every_corpus_file_counts_as_on_the_command_line(qtbot, window):
    """Every file under cl100k_base; those holding a character of ODD under every built-in too
    (the others are plain text to Qt, and encoding 9 MB four times twice is slow); the token
    counts of files over 200,000 characters follow from their text being the file's."""
    assert len(FILES) > 50
    odd = 0
    window.state.set_tokenizer("cl100k_base")
    for path in FILES:
        text = read_text_file(path)
        open_file(qtbot, window, path)
        names = builtin_names() if any(c in text for c in ODD) else ["cl100k_base"]
        odd += len(names) > 1
        for name in names:
            window.state.set_tokenizer(name)
            wait_settled(qtbot, window, timeout=60_000)
            result = window.state.result
            assert result.encoding.text == text, path.name  # the file's own text, not Qt's
            got = result.stats
            assert (got["chars"], got["bytes"]) == (len(text), len(text.encode("utf-8"))), path.name
            if len(names) > 1 or len(text) < 200_000:  # the core's own count (slow on the big ones)
                expected = get_builtin(name).encode(text, allowed_special="none").stats()
                assert got["tokens"] == expected["tokens"], (path.name, name)
            assert window.counts_label.text().startswith(f"{got['tokens']:,} tokens")
        window.state.set_tokenizer("cl100k_base")
    assert odd >= 5


def test_blns_counts_equal_the_cli(qtbot, window):
    path = CORPORA / "unicode" / "blns.txt"
    open_file(qtbot, window, path)
    window.state.set_tokenizer("llama-sp")
    wait_settled(qtbot, window)
    cli = subprocess.run([sys.executable, "-m", "tokexplorer", "compare", "--json", "-f", str(path),
                          "-t", "llama-sp", "--allowed-special", "none"],
                         capture_output=True, text=True, timeout=120, env=os.environ.copy())
    row = json.loads(cli.stdout)["results"][0]
    stats = window.state.result.stats
    assert (stats["tokens"], stats["chars"], stats["bytes"]) == (row["tokens"], row["chars"], row["bytes"])


@pytest.mark.parametrize("text,marked", [
    ("a\u2029b", ["\u2029"]),
    ("x\r\ny\rz\nw", ["\r\n", "\r"]),  # mixed: the usual "\n" is not marked
    ("p\u2028q\x85r\ufffes\U0001fffft\ufdd0u", ["\ufdd0"]),  # Qt holds all but U+FDD0
])
def test_what_qt_cannot_hold_is_tokenized_saved_and_marked(qtbot, window, tmp_path, text, marked):
    path = tmp_path / "odd.txt"
    path.write_bytes(text.encode("utf-8"))
    open_file(qtbot, window, path)
    assert window.state.result.encoding.text == text
    assert window.editor.display_text() != text or not marked  # Qt holds line breaks there
    assert window.state.result.encoding.ids == get_builtin(window.state.tokenizer).encode(text).ids
    type_at_end = window.editor.textCursor()
    type_at_end.movePosition(type_at_end.MoveOperation.End)
    type_at_end.insertText("!")
    wait_settled(qtbot, window)
    assert window.state.result.encoding.text == text + "!"  # edits keep the file's characters
    window.documents.save()
    assert path.read_bytes() == (text + "!").encode("utf-8")
    assert window.editor._source.src == marked
    window.editor.viewport().grab()  # painted with the markers


def test_edits_next_to_kept_line_breaks_stay_in_step(qtbot, window, tmp_path, capfd):
    """A typed line break right after a lone CR stands for a CRLF (a plain LF would join the CR
    into one line break): deleting the CR's break must delete only the CR (the worker is told
    source units, not editor ones), and the source keeps one line break per line shown."""
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"aa\n\ra")
    open_file(qtbot, window, path)
    editor = window.editor
    cursor = QTextCursor(editor.document())
    for start, end, text in [(0, 3, ""), (1, 1, "\n"), (0, 1, "")]:
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(text)
        wait_settled(qtbot, window)
        assert window.state.result.encoding.text == editor.user_text()
    assert editor.user_text() == "\r\na" and editor.display_text() == "\na"
    assert "out of step" not in capfd.readouterr().err


def test_switching_tokenizers_keeps_the_workers_copy_in_step_past_kept_breaks(qtbot, window, tmp_path, capfd):
    """The first probe of a switch reads the text's start; a U+2029 and a U+FDD0 far after it
    (each held by Qt as a line break) are not part of that probe (they were: every tokenizer
    switch on such a file resent the whole text)."""
    path = tmp_path / "far.txt"
    source = "ab " * 3000 + "\u2029x\ufdd0y\n"
    path.write_text(source, encoding="utf-8")
    open_file(qtbot, window, path)
    for name in ["gpt2", "o200k_base", "cl100k_base"]:
        window.state.set_tokenizer(name)
        wait_settled(qtbot, window)
        assert window.state.result.encoding.text == source
    assert "out of step" not in capfd.readouterr().err


def test_undo_gives_a_deleted_line_break_back_what_it_stood_for(qtbot, window, tmp_path, capfd):
    """Qt's undo restores the editor's text, not what its line breaks stand for: deleting a lone
    CR's and a U+2029's breaks, then undoing (the keys, and the Edit menu), must give the file's
    own text back, tokens and saved bytes included; redoing deletes them again."""
    from PySide6.QtCore import Qt

    original = "one\rtwo\u2029three\nfour\n"
    path = tmp_path / "odd.txt"
    path.write_bytes(original.encode("utf-8"))
    open_file(qtbot, window, path)
    editor = window.editor
    cursor = QTextCursor(editor.document())
    cursor.setPosition(2)
    cursor.setPosition(10, QTextCursor.MoveMode.KeepAnchor)  # "e\rtwo\u2029th"
    editor.setTextCursor(cursor)
    qtbot.keyClick(editor, Qt.Key.Key_Delete)
    wait_settled(qtbot, window)
    assert editor.user_text() == "onree\nfour\n" == window.state.result.encoding.text
    qtbot.keyClick(editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    wait_settled(qtbot, window)
    assert editor.user_text() == original == window.state.result.encoding.text
    editor.redo()
    wait_settled(qtbot, window)
    assert editor.user_text() == "onree\nfour\n"
    window.undo_action.trigger()  # the Edit menu
    wait_settled(qtbot, window)
    assert window.state.result.encoding.text == original
    assert window.state.result.encoding.ids == get_builtin(window.state.tokenizer).encode(original).ids
    assert window.documents.save()
    assert path.read_bytes() == original.encode("utf-8")
    assert "out of step" not in capfd.readouterr().err
