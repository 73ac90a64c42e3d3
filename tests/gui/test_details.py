"""The window's details: recent files that work from anywhere, one default tokenizer everywhere,
dialogs and tables sized to their content, no ratio of nothing, and a window that does not import
the command line."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import tokexplorer
from tokexplorer.cli.commands import encoding as encoding_command
from tokexplorer.core.registry import DEFAULT_TOKENIZER
from tokexplorer.gui import settings as keys
from tokexplorer.gui.state import AppState

from .helpers import type_text, wait_settled

PACKAGE = Path(tokexplorer.__file__).parent


def test_recent_files_are_absolute(qtbot, window, tmp_path, monkeypatch):
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    window.documents.open_text(Path("notes.txt"))  # as `tokexplorer --open notes.txt` does
    qtbot.waitUntil(lambda: window.state.path is not None)
    wait_settled(qtbot, window)
    assert keys.read_list(window.settings, keys.RECENT_FILES)[0] == str(tmp_path / "notes.txt")


def test_one_default_tokenizer_for_app_cli_and_readme():
    assert AppState().tokenizer == DEFAULT_TOKENIZER
    source = Path(encoding_command.__file__).read_text(encoding="utf-8")
    assert '"--tokenizer", default=DEFAULT_TOKENIZER' in source  # the command line's default
    readme = (PACKAGE.parent / "README.md").read_text(encoding="utf-8")
    assert f"by {DEFAULT_TOKENIZER}" in readme and f"-t {DEFAULT_TOKENIZER}" in readme
    assert not re.search(r"coloured token by token by (?!%s)" % DEFAULT_TOKENIZER, readme)


def test_empty_text_shows_no_ratio(qtbot, window):
    type_text(window.editor, "a")
    wait_settled(qtbot, window)
    assert "bytes/token" in window.counts_label.text()
    window.editor.clear()
    wait_settled(qtbot, window)
    assert window.counts_label.text() == "0 tokens · 0 characters · 0 bytes"


def test_shortcuts_dialog_names_the_new_actions(qtbot, window):
    # That the dialog shows every name whole: tests/gui/test_about.py.
    window.show_shortcuts()
    text = window.dialogs.asked[-1][1]
    assert "Show Legend" in text and "Copy Token IDs" in text


def test_token_table_fits_its_dock(qtbot, window):
    table = window.token_table
    wait_settled(qtbot, window)
    assert not table.horizontalScrollBar().isVisible()  # empty: nothing to scroll
    type_text(window.editor, "hello world, tokenizers everywhere")
    wait_settled(qtbot, window)
    widest = max(len(t.bytes) for t in window.state.result.encoding)
    needed = table.fontMetrics().horizontalAdvance("ff " * widest) - table.fontMetrics().horizontalAdvance(" ")
    assert table.columnWidth(3) >= needed  # the bytes of every token here show whole
    assert sum(table.columnWidth(c) for c in range(4)) <= table.viewport().width() + 1


def test_the_window_does_not_import_the_command_line():
    for path in (PACKAGE / "gui").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                assert not re.match(r"(tokexplorer\.)?(cli|commands)\b", name), (path.name, name)
