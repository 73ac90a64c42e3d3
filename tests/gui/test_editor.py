"""The editor and main window through the user's eyes: typing, tokenizers, astral characters,
whitespace markers, the special-token refusal, settings, files, panels."""

from __future__ import annotations

import base64
import bisect
import random
import types

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QHelpEvent, QKeyEvent, QMouseEvent, QTextCursor, QTextOption
from PySide6.QtWidgets import QApplication, QToolTip

from tokexplorer.bench import gui as bench_gui
from tokexplorer.core.encoding import TokenFlag
from tokexplorer.core.registry import builtin_names, get_builtin
from tokexplorer.core.token_colours import colour_indices
from tokexplorer.gui.widgets.colours import CLUSTER_SPLIT
from tokexplorer.gui.editor.token_view import describe_token
from tokexplorer.core.positions import cluster_bounds16, editor_text, to_utf16
from tokexplorer.server.tokenized import REFUSED
from tokexplorer.gui.services.worker import HUGE_TEXT, HUGE_TEXT_DEBOUNCE_MS

from .helpers import drift_next_request, tokenized_of, tokenizer_for, type_text, wait_settled

BUILTINS = ["gpt2", "cl100k_base", "o200k_base", "llama-sp"]


def painted_spans(editor) -> list[tuple[int, int, str]]:
    """(start, end, background) of every token range painted on the visible lines, in UTF-16
    positions."""
    return [(s, e, editor._palette.background(c).name()) for s, e, c, _ in editor.drawn_tokens()]


def expected_spans(window, text: str) -> list[tuple[int, int]]:
    """Token spans in UTF-16 units, clipped to lines (a block holds no newline), with boundaries
    inside a grapheme cluster moved to the cluster's end (as the editor draws them)."""
    enc = get_builtin(window.state.tokenizer).encode(text, allowed_special=None)
    starts = to_utf16(text, enc.starts)
    ends = to_utf16(text, enc.ends)
    text16 = text.encode("utf-16-le", "surrogatepass")
    newlines = [i // 2 for i in range(0, len(text16), 2) if text16[i:i + 2] == b"\n\x00"]
    spans = []
    for s, e in zip(starts.tolist(), ends.tolist()):
        cuts = [s] + [n for n in newlines if s <= n < e] + [e]
        for a, b in zip(cuts, cuts[1:]):
            a = a + 1 if a in newlines else a
            if b > a:
                spans.append((a, b))
    bounds = cluster_bounds16(text)
    snapped = [(bounds[bisect.bisect_left(bounds, a)], bounds[bisect.bisect_left(bounds, b)]) for a, b in spans]
    return [(a, b) for a, b in snapped if b > a]


def test_typing_updates_highlight_and_counts(qtbot, window):
    type_text(window.editor, "hello world")
    wait_settled(qtbot, window)
    assert window.state.result.encoding.text == "hello world"
    assert "2 tokens" in window.counts_label.text()
    assert [(s, e) for s, e, _ in painted_spans(window.editor)] == [(0, 5), (5, 11)]
    type_text(window.editor, "!!")
    wait_settled(qtbot, window)
    assert window.state.result.encoding.text == "hello world!!"
    assert "again in" in window.counts_label.toolTip()  # only the end was encoded again
    assert window.counts_label.text().startswith(f"{len(window.state.result)} tokens")


def test_colours_survive_an_insertion(qtbot, window):
    type_text(window.editor, "one two three four five six")
    wait_settled(qtbot, window)
    before = [c for _, _, c in painted_spans(window.editor)]
    cursor = window.editor.textCursor()
    cursor.setPosition(0)
    window.editor.setTextCursor(cursor)
    type_text(window.editor, "zero ")
    wait_settled(qtbot, window)
    after = [c for _, _, c in painted_spans(window.editor)]
    assert after[-len(before) + 1:] == before[1:]  # the later tokens keep their colours


@pytest.mark.parametrize("name", BUILTINS)
def test_switching_tokenizers(qtbot, window, name):
    text = "    hello world!!!\n"
    window.documents.set_text(text)
    window.state.set_tokenizer(name)
    wait_settled(qtbot, window)
    assert window.state.result.tokenizer == name
    assert window.state.result.encoding.ids == get_builtin(name).encode(text).ids
    assert window.tokenizer_box.currentText() == name
    assert window.busy_label.text() == f"{name} ✓"
    tip = window.tokenizer_box.itemData(window.tokenizer_box.currentIndex(), Qt.ItemDataRole.ToolTipRole)
    assert f"{get_builtin(name).n_vocab:,} tokens" in tip  # the picker says what each name is


def test_fifty_rapid_switches_while_typing_end_on_the_right_tokens(qtbot, window, corpora):
    """Switch tokenizer (every built-in in turn) after every keystroke, 50 times, without waiting
    for any answer: the
    window ends on the last tokenizer picked, with the ids of a fresh encode of the text typed."""
    import itertools

    text = (corpora / "multilingual/zh_hans_lunyu.txt").read_text("utf-8")[:3000] + "\n"
    window.documents.set_text(text)
    wait_settled(qtbot, window)
    catalog = window.state.catalog
    every = [n for n in catalog.names() if catalog.is_builtin(n)]
    assert len(every) >= 8
    names = itertools.islice(itertools.cycle(every), 50)
    typed = "naïve 👋🏽 कि x" * 4
    for name, ch in zip(names, itertools.cycle(typed)):
        type_text(window.editor, ch)
        window.state.set_tokenizer(name)
        QApplication.processEvents()
    wait_settled(qtbot, window)
    assert window.state.result.tokenizer == name == window.tokenizer_box.currentText()
    shown = window.editor.user_text()
    assert "".join(itertools.islice(itertools.cycle(typed), 50)) in shown
    assert window.state.result.encoding.text == shown
    assert window.state.result.encoding.ids == tokenizer_for(window, name).encode(shown, allowed_special="none").ids
    assert window.banner.kind != "error"


@pytest.mark.parametrize("name", BUILTINS)
def test_highlight_positions_after_astral_characters(qtbot, window, name):
    text = "😀 𝕏 𠀀 hello\n👋🏽 wörld 🇺🇳 end"
    window.state.set_tokenizer(name)
    wait_settled(qtbot, window)
    type_text(window.editor, text)
    wait_settled(qtbot, window)
    assert window.editor.display_text() == text
    assert [(s, e) for s, e, _ in painted_spans(window.editor)] == expected_spans(window, text)
    # The token under "end" is found from the UTF-16 position Qt reports.
    pos16 = len(text.encode("utf-16-le")) // 2 - 2
    index = window.state.result.index_at16(pos16)
    assert window.state.result.encoding.token(index).text.strip().endswith("end")


def test_whitespace_markers_do_not_change_the_text(qtbot, window):
    text = "a b\tc  \nnext line\n"
    window.documents.set_text(text)
    wait_settled(qtbot, window)
    spans = painted_spans(window.editor)
    flags = QTextOption.Flag.ShowTabsAndSpaces | QTextOption.Flag.ShowLineAndParagraphSeparators
    window.whitespace_action.setChecked(True)
    assert window.state.show_whitespace
    assert window.editor.document().defaultTextOption().flags() & flags == flags
    assert window.editor.display_text() == text
    wait_settled(qtbot, window)
    assert painted_spans(window.editor) == spans
    assert window.state.result.encoding.text == text
    window.whitespace_action.setChecked(False)
    assert not window.editor.document().defaultTextOption().flags() & flags
    assert window.editor.display_text() == text


def test_special_token_refusal_keeps_the_picture(qtbot, window, tmp_path):
    window.state.set_tokenizer("cl100k_base")
    text = "hi <|endoftext|> there"
    type_text(window.editor, text)
    wait_settled(qtbot, window)
    assert window.banner.isVisible() and window.banner.kind == "refusal"
    assert "<|endoftext|>" in window.banner.label.text()
    result = window.state.result  # the text as plain text, every token coloured
    assert result.encoding.ids == get_builtin("cl100k_base").encode(text, allowed_special="none").ids
    assert window.counts_label.text().startswith(f"{len(result)} tokens")
    drawn = window.editor.drawn_tokens()
    assert (drawn[0][0], drawn[-1][1]) == (0, len(text))
    refused = "".join(text[s:e] for s, e, _, f in drawn if f & REFUSED)
    assert "endoftext" in refused and "hi" not in refused and "there" not in refused
    allow = [b for b in window.banner._buttons if b.text().startswith("Encode as special")][0]
    allow.click()  # for this document only
    wait_settled(qtbot, window)
    assert not window.banner.isVisible()
    assert window.state.effective_policy == "all" and window.state.policy == "refuse"
    assert window.policy_box.currentData() == "all"
    flags = window.state.result.flags
    assert any(f & TokenFlag.SPECIAL for f in flags.tolist())
    assert not any(f & REFUSED for _, _, _, f in window.editor.drawn_tokens())
    path = tmp_path / "other.txt"  # another document: the global policy again
    path.write_text(text)
    window.documents.open_text(path)
    qtbot.waitUntil(lambda: window.state.path == path)
    wait_settled(qtbot, window)
    assert window.state.effective_policy == "refuse" and window.banner.kind == "refusal"
    window.state.set_policy("none")
    wait_settled(qtbot, window)
    assert not window.banner.isVisible()
    assert not any(f & (TokenFlag.SPECIAL | REFUSED) for f in window.state.result.flags.tolist())


def test_legend_is_one_glance_away(qtbot, make_window):
    window = make_window()
    legend = window.legend
    assert legend.isVisible() and legend.parent() is not None
    tips = {e.label: e.toolTip() for e in legend.entries}
    assert set(tips) == {"tokens", "special", "part of a character", "byte fallback",
                         "boundary in a character", "normalised", "dropped", "refused", "invisible character"}
    assert "UTF-8 bytes" in tips["part of a character"] and "never share" in tips["tokens"]
    assert all(e.width() >= e.sizeHint().width() - 1 for e in legend.entries)  # nothing cut off
    window.legend_action.trigger()
    assert not legend.isVisible()
    window.show_about()
    assert "Wavy" not in window.dialogs.asked[-1][1]  # the legend is no longer hidden in About
    window.window_settings.save()
    assert not make_window().legend.isVisible()


def test_unicode_typing_arrives_intact(qtbot, window):
    text = "héllo 👋 안녕 🇺🇳"
    type_text(window.editor, text)
    wait_settled(qtbot, window)
    assert window.editor.display_text() == text
    assert window.state.result.encoding.ids == get_builtin(window.state.tokenizer).encode(text).ids


def test_settings_restored(qtbot, make_window):
    first = make_window()
    first.state.set_tokenizer("o200k_base")
    first.state.set_policy("none")
    first.whitespace_action.setChecked(True)
    first.dark_action.trigger()  # as the menu does: a chosen theme is kept
    first.monospace_action.setChecked(True)
    first.zoom_in_action.trigger()
    size = first.editor.font_size()
    first.token_dock.hide()
    window_size = (max(760, first.minimumSizeHint().width()), 600)  # not below what the docks need
    first.resize(*window_size)
    wait_settled(qtbot, first)
    first.close()
    second = make_window()
    assert second.state.tokenizer == "o200k_base"
    assert second.tokenizer_box.currentText() == "o200k_base"
    assert second.state.policy == "none"
    assert second.state.show_whitespace and second.whitespace_action.isChecked()
    assert second.state.dark and second.dark_action.isChecked()
    assert second.monospace_action.isChecked() and second.editor.font_size() == size
    assert not second.token_dock.isVisible()
    assert (second.width(), second.height()) == window_size
    second.dark_action.setChecked(False)


def test_the_theme_follows_the_system_until_chosen(qtbot, make_window):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from tokexplorer.gui import settings as keys

    first = make_window()
    system_dark = QApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark
    assert first.state.dark == system_dark
    first.window_settings.save()
    assert first.settings.value(keys.DARK) is None  # nothing chosen, nothing stored
    first.dark_action.trigger()
    first.window_settings.save()
    assert keys.read_bool(first.settings, keys.DARK, system_dark) == (not system_dark)


def test_zoom_and_monospace_change_the_font_not_the_text(qtbot, window):
    from PySide6.QtGui import QFontDatabase, QFontInfo

    type_text(window.editor, "def f():\n    return 1\n")
    wait_settled(qtbot, window)
    ids, default = window.state.result.encoding.ids, window.editor.font_size()
    window.zoom_in_action.trigger()
    window.zoom_in_action.trigger()
    assert window.editor.font_size() == default + 2
    window.zoom_out_action.trigger()
    assert window.editor.font_size() == default + 1
    window.monospace_action.trigger()
    fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    assert window.editor.font().family() == fixed.family()
    assert QFontInfo(window.editor.font()).fixedPitch() == QFontInfo(fixed).fixedPitch()
    assert window.editor.font_size() == default + 1  # the size is kept
    for _ in range(100):
        window.zoom_out_action.trigger()
    assert window.editor.font_size() == 6  # zooming out stops at a readable size
    window.zoom_reset_action.trigger()
    assert window.editor.font_size() == default and window.state.font_size == 0
    wait_settled(qtbot, window)
    assert window.editor.display_text() == "def f():\n    return 1\n"
    assert window.state.result.encoding.ids == ids
    window.monospace_action.trigger()
    assert not window.state.monospace


def test_non_utf8_file_offers_other_decodings(qtbot, window, tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes(b"caf\xe9 cr\xe8me\n")
    window.documents.open_text(path)
    qtbot.waitUntil(lambda: window.editor.display_text() == "café crème\n", timeout=10_000)
    kind, error = window.dialogs.asked[-1]
    assert kind == "choose_encoding" and (error.offset, error.byte) == (3, 0xE9)
    assert path.read_bytes() == b"caf\xe9 cr\xe8me\n"  # never changed unless saved
    assert not window.state.modified


def test_non_utf8_file_declined_leaves_the_text(qtbot, window, tmp_path):
    window.dialogs.encoding_answer = None
    type_text(window.editor, "keep me")
    window.editor.document().setModified(False)
    path = tmp_path / "bad.txt"
    path.write_bytes(b"\xff\xfe\xfd" * 3 + b"\x80")
    path.write_bytes(b"ok \x80")
    window.documents.open_text(path)
    qtbot.waitUntil(lambda: any(k == "choose_encoding" for k, _ in window.dialogs.asked), timeout=10_000)
    assert window.editor.display_text() == "keep me"


@pytest.mark.parametrize("data,text,newline", [
    (b"\xef\xbb\xbfbom\n", "bom\n", "\n"),
    ("utf16 👋\n".encode("utf-16"), "utf16 👋\n", "\n"),
    (b"one\r\ntwo\r\n", "one\ntwo\n", "\r\n"),
])
def test_open_and_save_round_trip(qtbot, window, tmp_path, data, text, newline):
    path = tmp_path / "in.txt"
    path.write_bytes(data)
    window.documents.open_text(path)
    qtbot.waitUntil(lambda: window.state.path == path and not window.editor.isReadOnly(), timeout=10_000)
    wait_settled(qtbot, window)
    assert window.editor.display_text() == text
    assert window.state.result.encoding.text == text.replace("\n", newline)  # the file's own
    assert window.state.newline == newline
    assert path.read_bytes() == data
    type_text(window.editor, "x")
    assert window.state.modified and window.isWindowModified()
    assert window.documents.save()
    assert path.read_bytes() == ("x" + text).replace("\n", newline).encode("utf-8")
    assert not window.state.modified


def test_unsaved_changes_asked_on_close(qtbot, window):
    type_text(window.editor, "draft")
    window.dialogs.unsaved_answer = "cancel"
    assert not window.close()
    assert window.dialogs.asked[-1] == ("ask_unsaved", "Untitled")
    window.dialogs.unsaved_answer = "discard"
    assert window.close()


def test_big_text_loads_in_slices_with_progress(qtbot, window, tmp_path):
    path = tmp_path / "big.txt"
    line = "The quick brown fox jumps over the lazy dog. 😀\n"
    path.write_text(line * 30_000, encoding="utf-8")  # 1.4 M characters: several slices
    seen = []
    window.editor.load_progress.connect(lambda done, total: seen.append((done, total)))
    window.documents.open_text(path)
    qtbot.waitUntil(lambda: window.state.result is not None and len(window.state.result.encoding.text) == len(line) * 30_000,
                    timeout=30_000)
    assert len(seen) > 1 and seen[-1][0] == seen[-1][1]
    assert window.editor.document().blockCount() == 30_001
    assert window.state.result.encoding.text == window.editor.display_text()


def test_panels_smoke(qtbot, window):
    window.state.set_tokenizer("gpt2")
    type_text(window.editor, "Hello 👋 world, hello\nagain")
    wait_settled(qtbot, window)
    result = window.state.result
    # token-id view: one row per token, linked by the hovered token
    model = window.token_table.model()
    assert model.result is result  # settled: the view has caught up
    assert model.rowCount() == len(result)
    assert model.data(model.index(1, 1)) == result.encoding.ids[1]
    assert result.encoding.token_bytes[1] == b" \xf0\x9f\x91"  # GPT-2: space + 3 of the emoji's bytes
    assert model.data(model.index(1, 2)) == "␣\\xf0\\x9f\\x91"  # the space shows, and the bytes
    # the other roles a view asks: colour, tooltip and alignment where they belong, nothing else
    roles = Qt.ItemDataRole
    assert model.data(model.index(1, 2), roles.BackgroundRole) == window.token_table.model()._palette.background(
        int(result.colours[1]))
    assert model.data(model.index(1, 3), roles.ToolTipRole) == "20 f0 9f 91"
    assert model.data(model.index(1, 0), roles.TextAlignmentRole) == int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    assert [model.data(model.index(1, c), r) for c in range(4)
            for r in (roles.DecorationRole, roles.FontRole, roles.ForegroundRole)] == [None] * 12
    window.state.set_hovered(2)
    selections = window.editor.extraSelections()
    assert len(selections) == 1
    assert (selections[0].cursor.selectionStart(), selections[0].cursor.selectionEnd()) == (
        int(result.starts16[2]), int(result.ends16[2]))
    assert window.token_table.currentIndex().row() == 2
    # tooltip text

    tip = describe_token(result, 2)
    assert f"{result.encoding.ids[2]}" in tip and "partial" in tip  # GPT-2 splits the emoji's bytes
    # chunk view
    window.chunk_dock.show()
    window.chunk_dock.raise_()
    qtbot.waitUntil(lambda: window.chunk_view.model.rowCount() > 0, timeout=10_000)
    model = window.chunk_view.model
    chunks = tokenizer_for(window, "gpt2").encode(result.encoding.text).chunks
    assert [model.span(row) for row in range(model.rowCount())] == chunks
    assert [model.data(model.index(i, 2)) for i in range(3)] == ["Hello", "␣👋", "␣world"]
    # hovering a chunk marks its text in the editor
    start, end = chunks[1]
    window.chunk_view._on_entered(window.chunk_view.model.index(1, 0))
    selections = window.editor.extraSelections()
    assert selections[0].cursor.selectedText() == result.encoding.text[start:end]
    # dark theme repaints with the dark formats, text unchanged
    window.dark_action.setChecked(True)
    assert painted_spans(window.editor)
    window.dark_action.setChecked(False)
    # help
    window.shortcuts_action.trigger()
    window.about_action.trigger()
    assert [k for k, _ in window.dialogs.asked[-2:]] == ["show_info", "show_info"]
    # SentencePiece: the chunk view explains there is no regex split
    window.state.set_tokenizer("llama-sp")
    wait_settled(qtbot, window)
    assert "no regex pre-split" in window.chunk_view.summary.text()


def test_stale_results_are_dropped(qtbot, window):
    results = []
    window.service.result.connect(results.append)
    window.documents.set_text("first")
    g1 = window.service.submit()
    window.documents.set_text("second text")
    g2 = window.service.submit()
    wait_settled(qtbot, window)
    assert [r.generation for r in results][-1] == g2 and g1 not in [r.generation for r in results]
    assert window.state.result.encoding.text == "second text"


def test_open_tokenizer_file(qtbot, window, tmp_path):
    bad = tmp_path / "broken.tiktoken"
    bad.write_bytes(b"not a tokenizer\n")
    window.documents.open_tokenizer(bad)
    qtbot.waitUntil(lambda: window.banner.kind == "error", timeout=10_000)
    assert "broken.tiktoken" not in window.state.catalog.names()

    good = tmp_path / "tiny.tiktoken"
    good.write_bytes(b"".join(base64.b64encode(bytes([i])) + b" %d\n" % i for i in range(256)))
    window.documents.open_tokenizer(good)
    qtbot.waitUntil(lambda: window.state.tokenizer == "tiny.tiktoken", timeout=10_000)
    type_text(window.editor, "abc")
    wait_settled(qtbot, window)
    assert window.state.result.encoding.ids == [97, 98, 99]
    assert window.tokenizer_box.findText("tiny.tiktoken") >= 0


@pytest.mark.parametrize("name", ["gpt2", "llama-sp"])
def test_incremental_highlight_equals_a_full_repaint(qtbot, window, name):
    window.resize(window.width(), 1400)  # every line on screen, below docks too: all are formatted
    window.state.set_tokenizer(name)
    window.documents.set_text("".join(f"line {i}: the quick brown fox 😀 jumps\n" for i in range(30)))
    wait_settled(qtbot, window)
    editor = window.editor
    cursor = editor.textCursor()
    cursor.setPosition(editor.document().findBlockByNumber(5).position() + 7)
    editor.setTextCursor(cursor)
    for step, text in enumerate(["x", " ", "\n", "ab", "\b", "\n\n", "\b", "  y"]):
        if text == "\b":
            for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
                QApplication.sendEvent(editor, QKeyEvent(kind, Qt.Key.Key_Backspace, Qt.KeyboardModifier.NoModifier))
        else:
            type_text(editor, text)
        if step % 2:
            wait_settled(qtbot, window)
    wait_settled(qtbot, window)
    colours = window.state.result.colours.tolist()
    assert colours == colour_indices(window.state.result.encoding.id_array).tolist()
    assert [(s, e) for s, e, _ in painted_spans(editor)] == expected_spans(window, editor.display_text())


def test_worker_copy_follows_every_kind_of_edit(qtbot, window, capfd):
    """The worker keeps its own copy of the text from Qt's edits; it must never drift."""
    editor = window.editor
    rng = random.Random(7)
    pieces = ["a", " ", "\n", "😀", "𝕏x", "\xa0", "\u2028", "é", "tab\t", "\n\n"]
    window.documents.set_text("start 😀 text\nsecond line\n")
    wait_settled(qtbot, window)
    for step in range(60):
        n = editor.document().characterCount() - 1
        op = rng.choice(["insert", "delete", "replace", "undo", "redo", "paste_block"])
        cursor = QTextCursor(editor.document())
        # Character boundaries only: a user's cursor never stops inside a surrogate pair.
        text = editor.display_text()
        bounds = to_utf16(text, np.arange(len(text) + 1)).tolist()
        i = rng.randrange(len(bounds))
        a, b = bounds[i], bounds[min(len(bounds) - 1, i + rng.randint(1, 4))]
        if op == "insert":
            cursor.setPosition(a)
            cursor.insertText(rng.choice(pieces))
        elif op == "delete" and n:
            cursor.setPosition(a)
            cursor.setPosition(b, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
        elif op == "replace":
            cursor.setPosition(a)
            cursor.setPosition(b, QTextCursor.MoveMode.KeepAnchor)
            cursor.insertText(rng.choice(pieces))
        elif op == "undo":
            editor.undo()
        elif op == "redo":
            editor.redo()
        else:
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText("appended\nlines 👋\n")
        if step % 5 == 4:
            wait_settled(qtbot, window)
            assert window.state.result.encoding.text == editor.display_text()
    wait_settled(qtbot, window)
    assert window.state.result.encoding.text == editor.display_text()
    assert "out of step" not in capfd.readouterr().err  # never needed the safety net
    editor.selectAll()
    editor.cut()
    wait_settled(qtbot, window)
    assert window.state.result.encoding.text == editor.display_text() == ""


def test_a_long_line_is_coloured_around_what_is_visible(qtbot, window):
    words = " ".join(f"word{i}" for i in range(6000))  # one line of ~50,000 characters
    window.documents.set_text(words)
    wait_settled(qtbot, window)
    spans = painted_spans(window.editor)
    assert spans and spans[0][0] == 0
    assert spans[-1][1] < len(words) // 2  # not the whole line
    assert len(spans) < 2000  # only the lines on screen
    # scrolling to the end colours the end
    window.editor.moveCursor(window.editor.textCursor().MoveOperation.End)
    window.editor.ensureCursorVisible()
    qtbot.waitUntil(lambda: painted_spans(window.editor)[-1][1] == len(words), timeout=10_000)


def test_recent_files_and_dropped_files(qtbot, window, tmp_path):
    first, second = tmp_path / "one.txt", tmp_path / "two.txt"
    first.write_text("first file\n", encoding="utf-8")
    second.write_text("second file\n", encoding="utf-8")
    window.documents.open_text(first)
    qtbot.waitUntil(lambda: window.editor.display_text() == "first file\n", timeout=10_000)
    # drop the second file on the window
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(second))])
    drop = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                      Qt.KeyboardModifier.NoModifier)
    window.dropEvent(drop)
    qtbot.waitUntil(lambda: window.editor.display_text() == "second file\n", timeout=10_000)
    actions = window.documents.recent_menu.actions()
    assert [a.statusTip() for a in actions] == [str(second), str(first)]
    actions[1].trigger()
    qtbot.waitUntil(lambda: window.editor.display_text() == "first file\n", timeout=10_000)
    assert window.windowTitle().startswith("one.txt")


@pytest.mark.slow
def test_bench_gui_runs(qtbot, tmp_path):
    """`tokexplorer bench --gui` end to end on a small text with a few keystrokes."""
    corpus = tmp_path / "small.txt"
    corpus.write_text("To be, or not to be, that is the question:\n" * 200, encoding="utf-8")
    section, huge = bench_gui.run(types.SimpleNamespace(corpus=str(corpus), repeat=1, gui_keys=4, huge_mb=1,
                                                       train_vocab=512))
    assert [row[0] for row in section["rows"]] == builtin_names()
    assert all(row[-1] == "4/4" for row in section["rows"])
    assert section["headers"][3:5] == ["switch back s", "back stall ms"]
    assert all(float(row[3]) > 0 for row in section["rows"])  # each switched back to, once loaded
    assert "launch" in " ".join(section["notes"])
    assert "opening a 1 MB text (small.txt repeated" in huge["title"]
    assert huge["headers"][:7] == ["app s", "baseline s", "ratio", "longest stall ms", "window peak MB",
                                   "server peak MB", "both MB"]
    app_s, base_s, ratio, _, peak, server_peak, both = (float(x) for x in huge["rows"][0][:7])
    assert app_s > 0 and base_s > 0 and abs(ratio - app_s / base_s) < 0.2 * ratio and peak > 50
    assert server_peak > 30 and both == pytest.approx(peak + server_peak, abs=1)  # each process's own


def test_hover_and_tooltip_from_the_mouse(qtbot, window):
    window.state.set_tokenizer("cl100k_base")
    type_text(window.editor, "😀 hello tokens")
    wait_settled(qtbot, window)
    editor = window.editor
    cursor = editor.textCursor()
    cursor.setPosition(5)  # inside " hello", after the astral character (UTF-16 position 5)
    point = editor.cursorRect(cursor).center() + QPoint(2, 0)
    move = QMouseEvent(QEvent.Type.MouseMove, QPointF(point), QPointF(editor.viewport().mapToGlobal(point)),
                       Qt.MouseButton.NoButton, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(editor.viewport(), move)
    index = window.state.hovered
    assert window.state.result.encoding.token(index).text == " hello"
    assert window.token_table.currentIndex().row() == index  # the token-id view follows
    QApplication.sendEvent(editor.viewport(), QHelpEvent(QEvent.Type.ToolTip, point, editor.viewport().mapToGlobal(point)))
    qtbot.waitUntil(QToolTip.isVisible, timeout=5_000)
    assert f"#{index} of" in QToolTip.text() and "characters 1–7" in QToolTip.text()
    QToolTip.hideText()


def test_dropped_files_are_not_inserted_as_paths(window, tmp_path):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(tmp_path / "a.txt"))])
    assert not window.editor.canInsertFromMimeData(mime)
    text = QMimeData()
    text.setText("plain text")
    assert window.editor.canInsertFromMimeData(text)


def test_a_server_copy_out_of_step_is_repaired(qtbot, window):
    type_text(window.editor, "abc")
    wait_settled(qtbot, window)
    sent = drift_next_request(window.service, [(0, 0, "something else entirely")])  # simulate a bug
    type_text(window.editor, "d")
    wait_settled(qtbot, window)
    assert window.state.result.encoding.text == "abcd"
    assert sent[0] is False and True in sent[1:]  # the length was off: the whole text went again


def test_clusters_split_by_tokens_are_drawn_whole(qtbot, window):
    """cl100k_base cuts "é" (e + combining acute) into two tokens, and GPT-2 cuts "क्ष" into
    several: each cluster is drawn in one colour (Qt shapes a format range on its own, so a colour
    change inside a cluster would break it apart on screen) and marked with a dotted underline."""
    window.state.set_tokenizer("cl100k_base")
    text = "cafe\u0301 क्ष"
    type_text(window.editor, text)
    wait_settled(qtbot, window)
    enc = window.state.result.encoding
    assert [t.text for t in enc][:3] == ["ca", "fe", "\u0301"]
    drawn = window.editor.drawn_tokens()
    assert (2, 5) in [(s, e) for s, e, _, _ in drawn]  # "fe" + the accent, the accent's token with it
    assert [(s, e) for s, e, _, f in drawn if f & CLUSTER_SPLIT][0] == (2, 5)  # marked
    assert window.editor.display_text() == text
    assert CLUSTER_SPLIT not in {int(f) for f in enc.flags}  # a drawing detail, not a token flag


def test_huge_texts_wait_for_a_pause_in_the_typing(qtbot, window):
    """An edit of an ordinary text goes to the server at the next turn of the event loop; on a huge
    text, edits wait for a pause in the typing (HUGE_TEXT_DEBOUNCE_MS) and a burst goes as one."""
    import time

    service, pause = window.service, HUGE_TEXT_DEBOUNCE_MS / 1000
    wait_settled(qtbot, window)
    gen = service.generation
    service.schedule(100)
    QApplication.processEvents()
    assert service.generation == gen + 1
    wait_settled(qtbot, window)
    gen = service.generation
    for _ in range(3):
        service.schedule(HUGE_TEXT + 1)
    typed = time.perf_counter()
    QApplication.processEvents()
    assert service.generation == gen  # not yet
    qtbot.waitUntil(lambda: service.generation != gen, timeout=10_000)
    assert service.generation == gen + 1  # one request for the burst
    assert service.submitted_at - typed >= 0.9 * pause  # after the pause (a coarse timer may fire 5% early)
    wait_settled(qtbot, window)


def test_find_bar_finds_wraps_and_leaves_the_tokens(qtbot, window):
    text = "😀 Hello world\nhello again 𝕏 hello\n"
    window.documents.set_text(text)
    wait_settled(qtbot, window)
    ids = window.state.result.encoding.ids
    window.find_action.trigger()
    bar = window.find_bar
    assert bar.isVisible() and bar.field.hasFocus()
    qtbot.keyClicks(bar.field, "hello")  # ASCII only: see helpers.type_text
    cursor = window.editor.textCursor()
    assert cursor.selectedText() == "Hello"  # found as you type, case-insensitive
    assert cursor.selectionStart() == 3  # UTF-16: the emoji and a space come first
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    assert window.editor.textCursor().selectionStart() == len("😀 Hello world\n".encode("utf-16-le")) // 2
    bar.case.setChecked(True)
    window.find_next_action.trigger()
    third = len("😀 Hello world\nhello again 𝕏 ".encode("utf-16-le")) // 2
    assert window.editor.textCursor().selectionStart() == third
    window.find_next_action.trigger()  # wraps to the first lower-case match
    assert bar.status.text() == "wrapped"
    assert window.editor.textCursor().selectionStart() == len("😀 Hello world\n".encode("utf-16-le")) // 2
    qtbot.keyClick(bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)  # backwards, wrapping
    assert window.editor.textCursor().selectionStart() == third
    bar.field.setText("nowhere")
    assert not bar.find_next() and bar.status.text() == "not found"
    assert window.editor.textCursor().selectionStart() == third  # the cursor stays
    qtbot.keyClick(bar.field, Qt.Key.Key_Escape)
    assert not bar.isVisible()
    wait_settled(qtbot, window)
    assert window.editor.display_text() == text and window.state.result.encoding.ids == ids


def test_copy_token_ids_of_the_selection_or_of_everything(qtbot, window):
    import json

    window.state.set_tokenizer("cl100k_base")
    window.documents.set_text("👋 hello world!!!")
    wait_settled(qtbot, window)
    window.copy_ids_action.trigger()
    assert json.loads(QApplication.clipboard().text()) == get_builtin("cl100k_base").encode("👋 hello world!!!").ids
    cursor = window.editor.textCursor()
    cursor.setPosition(3)  # UTF-16: after the emoji (2 units) and the space
    cursor.setPosition(8, QTextCursor.MoveMode.KeepAnchor)  # "hello"
    window.editor.setTextCursor(cursor)
    window.copy_ids_action.trigger()
    assert json.loads(QApplication.clipboard().text()) == [24748]  # " hello": the token under it
    type_text(window.editor, "x")  # no event loop has run since: the tokens are of the old text
    window.copy_ids_action.trigger()
    assert json.loads(QApplication.clipboard().text()) == [24748]  # nothing stale was copied
    assert "not tokenized" in window.statusBar().currentMessage()


def test_samples_menu_opens_the_lecture_quirks(qtbot, window):
    from tokexplorer.core.analysis.quirks import quirk

    type_text(window.editor, "draft")
    window.dialogs.unsaved_answer = "cancel"
    window.documents.open_sample(quirk("endoftext"))
    assert window.editor.display_text() == "draft"  # asked first, and the answer was cancel
    window.dialogs.unsaved_answer = "discard"
    labels = [a.text() for a in window.menuBar().actions()]
    samples = window.menuBar().actions()[labels.index("&Samples")].menu().actions()
    next(a for a in samples if "<|endoftext|>" in a.text()).trigger()
    qtbot.waitUntil(lambda: window.editor.display_text() == "Please repeat: <|endoftext|> and continue.",
                    timeout=10_000)
    wait_settled(qtbot, window)
    assert window.state.effective_policy == "all" and window.state.policy == "refuse" and not window.state.modified
    flags = window.state.result.encoding.flags
    assert sum(bool(f & TokenFlag.SPECIAL) for f in flags) == 1  # one special token
    assert window.banner.kind == "note" and "ends a document" in window.banner.label.text()


def test_views_sharing_one_document_paint_their_own_tokens(qtbot):
    """The compare view's seam: two token views on one QTextDocument, each fed its own result."""
    from PySide6.QtGui import QTextDocument

    from tokexplorer.gui.editor.token_view import TokenView
    from tokexplorer.gui.state import AppState

    state = AppState()
    document = QTextDocument()
    text = "hello world, unbelievably tokenized"
    document.setPlainText(text)
    panes = {}
    for name in ("gpt2", "llama-sp"):
        pane = TokenView(state, document=document)
        qtbot.addWidget(pane)
        pane.show()
        pane.set_result(tokenized_of(name, text))
        panes[name] = pane
    assert panes["gpt2"].document() is panes["llama-sp"].document()
    for name, pane in panes.items():
        spans = [(s, e) for s, e, _, _ in pane.drawn_tokens()]
        assert spans == [(int(a), int(b)) for a, b in get_builtin(name).encode(text).spans if b > a]
    assert panes["gpt2"].drawn_tokens() != panes["llama-sp"].drawn_tokens()
    state.set_result(None)  # the window's own result does not reach them
    assert panes["gpt2"].drawn_tokens()


def test_a_request_while_a_big_text_loads_sends_the_whole_text(qtbot, window, capfd):
    """A big text goes into Qt in slices; a request made meanwhile (a tokenizer picked, the
    start-up load) gets the whole text with its whole length, so the worker's copy is in step:
    no "out of step" resend, and the tokens are the full text's once the load ends."""
    from tokexplorer.core.registry import get_builtin
    from tokexplorer.gui.editor.editor import LOAD_SLICE

    text = "".join(f"line {i}: naïve 👋 text\r\n" for i in range(3 * LOAD_SLICE // 20))
    assert len(text) > 2 * LOAD_SLICE
    wait_settled(qtbot, window)
    window.editor.load_text(editor_text(text))
    assert window.editor.document().characterCount() < len(text)  # still loading
    window.service.submit()
    wait_settled(qtbot, window, timeout=60_000)
    assert window.editor.user_text() == text
    encoding = window.state.result.encoding
    assert encoding.text == text
    assert encoding.ids == get_builtin(window.state.tokenizer).encode(text, allowed_special="none").ids
    assert "out of step" not in capfd.readouterr().err


def test_a_big_text_is_tokenized_once_while_it_goes_in(qtbot, window, tmp_path, monkeypatch):
    """Opening a big text asks the server as the load starts (it tokenizes while Qt takes the
    text in), and the load's end asks nothing more: the text is tokenized whole once, and the next
    keystroke is an edit of the server's copy."""
    from tokexplorer.core.registry import get_builtin
    from tokexplorer.gui.editor.editor import LOAD_SLICE

    text = "".join(f"line {i}: naïve 👋 text\n" for i in range(4 * LOAD_SLICE // 20))
    path = tmp_path / "big.txt"
    path.write_text(text, encoding="utf-8")
    wait_settled(qtbot, window)
    whole, generations = [], []
    apply = window.service._tokens.apply
    monkeypatch.setattr(window.service._tokens, "apply",
                        lambda answer: (getattr(answer, "removed", 0) is None and whole.append(answer.n_bytes))
                        or apply(answer))
    before = window.service.generation
    # (connected after the window's own slots, so these run after them)
    window.editor.load_started.connect(lambda: generations.append(window.service.generation))
    window.editor.loaded.connect(lambda: generations.append(window.service.generation))
    window.documents.open_text(path)
    wait_settled(qtbot, window, timeout=60_000)
    assert generations == [before + 1, before + 1]  # asked as the load started, not at its end
    assert whole == [len(text.encode("utf-8"))]  # one answer with every token, of the whole text
    encoding = window.state.result.encoding
    assert encoding.text == text
    assert encoding.ids == get_builtin(window.state.tokenizer).encode(text).ids
    window.editor.moveCursor(QTextCursor.MoveOperation.End)
    type_text(window.editor, "x")
    wait_settled(qtbot, window)
    assert whole == [len(text.encode("utf-8"))]  # an edit, not the whole text again
    assert window.state.result.encoding.text == text + "x"


def test_a_big_text_opened_while_another_goes_in_shows_its_own_tokens(qtbot, window, tmp_path):
    """A second text opened while the first still goes in (each tokenized as it loads) ends with
    the second's tokens, the first's request answered or dropped on the way."""
    from tokexplorer.core.registry import get_builtin
    from tokexplorer.gui.editor.editor import LOAD_SLICE

    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text("".join(f"first {i} naïve\n" for i in range(LOAD_SLICE // 2)), encoding="utf-8")
    text = "".join(f"second {i} 👋\n" for i in range(LOAD_SLICE // 3))
    second.write_text(text, encoding="utf-8")
    wait_settled(qtbot, window)
    window.documents.open_text(first)
    qtbot.waitUntil(lambda: window.editor.loading, timeout=30_000)
    window.documents.open_text(second)
    qtbot.waitUntil(lambda: window.state.path == second, timeout=30_000)
    wait_settled(qtbot, window, timeout=60_000)
    assert window.editor.display_text() == text
    encoding = window.state.result.encoding
    assert encoding.text == text
    assert encoding.ids == get_builtin(window.state.tokenizer).encode(text).ids


def test_end_and_home_pressed_again_go_to_a_wrapped_lines_ends(qtbot, window):
    """In a line that wraps on screen, End goes to the end of the line on screen, and pressed
    there, on to the end of the whole line; Home likewise to its start."""
    text = "word " * 400 + "\nnext line"
    window.documents.set_text(text)
    editor = window.editor
    block = editor.document().firstBlock()
    assert block.layout().lineCount() > 2
    cursor = editor.textCursor()
    cursor.setPosition(0)
    editor.setTextCursor(cursor)

    def press(key) -> int:
        qtbot.keyClick(editor, key)
        return editor.textCursor().position()

    first = press(Qt.Key.Key_End)
    assert 0 < first < len("word " * 400)
    assert press(Qt.Key.Key_End) == len("word " * 400)
    first = press(Qt.Key.Key_Home)
    assert 0 < first < len("word " * 400)
    assert press(Qt.Key.Key_Home) == 0
    cursor.setPosition(len(text))  # a line that fits: End and Home as ever
    editor.setTextCursor(cursor)
    assert press(Qt.Key.Key_End) == len(text)
    assert press(Qt.Key.Key_Home) == len(text) - len("next line")


def test_no_background_job_outlives_the_window(qtbot, window):
    """Closing waits for the panels' jobs in the global pool: one still running at exit would
    emit into signals Python is tearing down (a crash on exit)."""
    import threading
    import time

    from PySide6.QtCore import QThreadPool

    from tokexplorer.gui.services.worker import run_job

    started, finished = threading.Event(), threading.Event()

    def slow(progress):
        started.set()
        time.sleep(0.5)
        finished.set()

    run_job(slow, on_result=lambda _: None, on_error=lambda _: None)
    assert started.wait(5)
    assert window.close()
    assert finished.is_set() and QThreadPool.globalInstance().activeThreadCount() == 0
