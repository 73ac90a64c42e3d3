"""The compare view with real tokenizers: counts against tiktoken's own encoders, one document
for every pane, hover linking, boundary marks (one inside an emoji), selection counts, samples."""

from __future__ import annotations

import json
import re

import pytest

from PySide6.QtCore import QPoint, Qt, QThreadPool
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tokexplorer.core.analysis.compare import boundary_marks, cheapest, compare_counts, covering, summary
from tokexplorer.core.analysis.quirks import quirk, sample_text
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.analysis.selection import selection_counts
from tokexplorer.gui.app import select_code_points
from tokexplorer.gui.widgets.fitting_label import plain
from tokexplorer.gui.editor.editor import LOAD_SLICE
from tokexplorer.core.positions import editor_prefix, utf16_len

from ..core.library_peers import tiktoken_encoding
from .helpers import settled, type_text

HELLO = "    hello world!!!"


@pytest.fixture(autouse=True)
def no_job_left_running(qtbot):
    """Let the windows' background jobs (the chunk view's split...) finish inside the test that
    started them: one that answers after its window is gone fails the next test instead."""
    yield
    QThreadPool.globalInstance().waitForDone(30_000)
    qtbot.wait(50)


def wait_compared(qtbot, window) -> None:
    qtbot.waitUntil(lambda: settled(window) and window.compare.up_to_date, timeout=60_000)


def compare(qtbot, window, text: str, names: list[str]):
    window.documents.set_text(text)
    window.compare.set_tokenizers(names)
    window.compare.set_active(True)
    wait_compared(qtbot, window)
    return window.compare


def token_counts(view) -> list[int]:
    """The token count each pane's header shows."""
    return [int(re.search(r"<b>([\d,]+)</b> tokens", c.header.counts.text()).group(1).replace(",", ""))
            for c in view.columns]


def test_hello_world_gpt2_vs_cl100k(window, qtbot, tmp_path):
    view = compare(qtbot, window, HELLO, ["gpt2", "cl100k_base"])
    want = [len(tiktoken_encoding(n, tmp_path).encode(HELLO)) for n in ("gpt2", "cl100k_base")]
    assert want == [6, 4]
    assert view.names == ["gpt2", "cl100k_base"] and token_counts(view) == want
    assert "-2 (-33.3%) vs gpt2" in view.columns[1].header.counts.text()
    assert "cheapest: cl100k_base, 4 tokens" in view.summary.text()
    assert window.compare_action.isChecked()
    # GPT-2 cuts the indentation after the first and second space; cl100k does not.
    marks = view.visible_marks(view.panes[0])
    assert marks.positions.tolist() == [1, 2] and not view.visible_marks(view.panes[1]).positions.size


def test_python_indentation_sample_opens_in_compare(window, qtbot, tmp_path):
    q = quirk("python-indentation")
    window.documents.open_sample(q)
    wait_compared(qtbot, window)
    view = window.compare
    assert view.active and view.names == ["gpt2", "cl100k_base"]
    code = sample_text(q)
    assert token_counts(view) == [len(tiktoken_encoding(n, tmp_path).encode(code)) for n in view.names]
    assert token_counts(view)[1] < token_counts(view)[0] - 10
    # An editor sample turns the compare view off and shows the tokenizer it names.
    window.documents.open_sample(quirk("long-token"))
    wait_compared(qtbot, window)
    assert not view.active and window.state.tokenizer == "cl100k_base"
    assert not view.columns[1].isVisible() and not window.compare_action.isChecked()


def test_json_vs_yaml_counts_each_part(window, qtbot):
    window.documents.open_sample(quirk("json-vs-yaml"))
    wait_compared(qtbot, window)
    view = window.compare
    assert view.names == ["gpt2", "cl100k_base", "o200k_base", "llama-sp"]
    assert view.parts.isVisible()
    parts = dict(re.findall(r"(JSON|YAML): ([^│]+)", view.parts.text()))
    for label in ("JSON", "YAML"):
        counts = dict(re.findall(r"(\S+) (\d+)", parts[label]))
        assert counts.keys() == set(view.names)
    for name in view.names:
        assert int(dict(re.findall(r"(\S+) (\d+)", parts["YAML"]))[name]) < int(
            dict(re.findall(r"(\S+) (\d+)", parts["JSON"]))[name])


def test_typing_in_any_pane_edits_all(window, qtbot, tmp_path):
    view = compare(qtbot, window, HELLO, ["gpt2", "cl100k_base", "o200k_base"])
    pane = view.panes[2]
    pane.setFocus()
    cursor = pane.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.End)
    pane.setTextCursor(cursor)
    type_text(pane, "\n    if x:\n        👋 done")
    wait_compared(qtbot, window)
    text = HELLO + "\n    if x:\n        👋 done"
    assert window.editor.display_text() == text and all(p.display_text() == text for p in view.panes)
    assert window.state.result.encoding.text == text
    assert all(p.result.encoding.text == text for p in view.panes[1:])
    assert token_counts(view) == [len(tiktoken_encoding(n, tmp_path).encode(text)) for n in view.names]
    # The caret moved with the typing in every pane.
    assert {p.textCursor().position() for p in view.panes} == {utf16_len(text)}
    # The marks on screen are those of the new text, in every pane.
    encodings = [window.state.result.encoding] + [p.result.encoding for p in view.panes[1:]]
    for pane, m in zip(view.panes, boundary_marks(encodings)):
        shown = view.visible_marks(pane)
        assert shown.positions.tolist() == [utf16_len(text[:c]) for c in m.chars.tolist()]
        assert shown.fractions.tolist() == m.fraction.tolist()


def marked(pane) -> tuple[int, int] | None:
    """The UTF-16 range a pane highlights as hovered, or None."""
    selections = pane.extraSelections()
    if not selections:
        return None
    cursor = QTextCursor(selections[0].cursor)
    return cursor.selectionStart(), cursor.selectionEnd()


def test_hover_links_tokens_across_panes(window, qtbot):
    view = compare(qtbot, window, HELLO, ["gpt2", "cl100k_base"])
    gpt2, cl100k = view.panes
    # Hover cl100k's first token ('   '): GPT-2's three one-space tokens light up.
    assert covering([window.state.result.encoding, cl100k.result.encoding], 1, 2) == [range(1, 2), range(0, 1)]
    cursor = QTextCursor(cl100k.document())
    cursor.setPosition(1)
    QTest.mouseMove(cl100k.viewport(), cl100k.cursorRect(cursor).center() + QPoint(2, 0))
    qtbot.waitUntil(lambda: marked(gpt2) is not None, timeout=5000)
    assert marked(gpt2) == (0, 3) and marked(cl100k) == (0, 3)
    # Hover GPT-2's ' hello' in the window's editor: cl100k's ' hello' lights up.
    cursor.setPosition(6)
    QTest.mouseMove(gpt2.viewport(), gpt2.cursorRect(cursor).center())
    qtbot.waitUntil(lambda: marked(cl100k) == (3, 9), timeout=5000)
    assert marked(gpt2) == (3, 9)
    # Leaving clears every pane.
    QTest.mouseMove(window.banner, QPoint(1, 1))
    qtbot.waitUntil(lambda: marked(gpt2) is None and marked(cl100k) is None, timeout=5000)


def red_pixels(widget) -> int:
    image = widget.grab().toImage()
    return sum(1 for x in range(0, image.width()) for y in range(0, min(image.height(), 60))
               if (lambda c: c.red() > 190 and c.green() < 60 and c.blue() < 60)(image.pixelColor(x, y)))


def test_a_gpt2_boundary_inside_an_emoji_is_marked(window, qtbot):
    text = "hi 😀 and 😂"  # GPT-2 cuts each emoji after three of its four bytes; o200k_base does not
    view = compare(qtbot, window, text, ["gpt2", "o200k_base"])
    marks = view.visible_marks(view.panes[0])
    inside = marks.fractions > 0
    assert marks.positions[inside].tolist() == [utf16_len("hi "), utf16_len("hi 😀 and ")]
    assert marks.fractions[inside].tolist() == [0.75, 0.75] and marks.lengths[inside].tolist() == [2, 2]
    assert not (view.visible_marks(view.panes[1]).fractions > 0).any()
    # Drawn: red marks in GPT-2's pane only.
    assert red_pixels(view.panes[0].viewport()) > 0 and red_pixels(view.panes[1].viewport()) == 0


def test_selection_counts_per_pane(window, qtbot):
    view = compare(qtbot, window, HELLO, ["gpt2", "cl100k_base"])
    select_code_points(window, 0, 9)  # "    hello"
    qtbot.waitUntil(lambda: all(c.header.selection.text() for c in view.columns), timeout=5000)
    gpt2_enc = window.state.result.encoding
    cl100k_enc = view.panes[1].result.encoding
    for column, enc in zip(view.columns, (gpt2_enc, cl100k_enc)):
        s = selection_counts(enc, 0, 9)
        assert column.header.selection.text().startswith(f"selection: {s.tokens} tokens ({s.whole} whole)")
    assert (selection_counts(gpt2_enc, 0, 9).tokens, selection_counts(cl100k_enc, 0, 9).tokens) == (4, 2)
    # The selection is the same in every pane.
    assert view.panes[1].textCursor().selectionStart() == 0 and view.panes[1].textCursor().selectionEnd() == 9


def test_selection_counts_readable_in_four_narrow_panes(window, qtbot, corpora):
    """Four panes in a 1000 px window: each pane's selection line fits its pane (no cut text) and
    shows the tokens the selection touches in that pane; the full line is its tooltip."""
    window.resize(1000, 700)
    text = (corpora / "multilingual/udhr/udhr_mya.txt").read_text("utf-8")[:2000]
    view = compare(qtbot, window, text, ["gpt2", "cl100k_base", "o200k_base", "llama-sp"])
    select_code_points(window, 0, 400)
    qtbot.waitUntil(lambda: all(c.header.selection.text() for c in view.columns), timeout=5000)
    QApplication.processEvents()
    assert window.width() <= 1000 and len(view.columns) == 4
    for column, result in view.shown():
        label = column.header.selection
        s = selection_counts(result.encoding, 0, 400)
        assert s.tokens >= 100
        shown = label.text()
        assert shown.split(" ")[1] == f"{s.tokens:,}"  # "selection: 1,121 …" or "sel.: 1,121 …"
        assert label.fontMetrics().horizontalAdvance(shown) <= label.contentsRect().width(), shown
        assert label.toolTip() == (f"selection: {s.tokens:,} tokens ({s.whole:,} whole) · "
                                   f"{s.chars:,} chars · {s.bytes:,} bytes")
    assert any(c.header.selection.text() != c.header.selection.toolTip() for c in view.columns)  # narrow
    window.compare.remove_pane(view.panes[3])
    window.compare.remove_pane(view.panes[2])
    window.resize(1600, 700)
    QApplication.processEvents()
    assert all(c.header.selection.text() == c.header.selection.toolTip() for c in view.columns)  # wide


def fits(label) -> bool:
    return label.text_width(label.text()) <= label.contentsRect().width()


def test_counts_and_summary_readable_in_four_narrow_panes(window, qtbot, corpora):
    """Four panes in a 1000 px window: each pane's two count lines fit the pane and keep its tokens
    and its difference to the first pane (the full lines in the tooltips); the summary row fits
    and names the cheapest tokenizer. Widened, the full lines come back."""
    window.resize(1000, 700)
    text = (corpora / "multilingual/udhr/udhr_mya.txt").read_text("utf-8")[:2000]
    names = ["gpt2", "cl100k_base", "o200k_base", "llama-sp"]
    view = compare(qtbot, window, text, names)
    QApplication.processEvents()
    assert window.width() <= 1000 and len(view.columns) == 4
    counts = compare_counts(names, [r.encoding for _, r in view.shown()])
    for i, (column, c) in enumerate(zip(view.columns, counts)):
        head = column.header
        assert fits(head.counts) and fits(head.ratios), (head.counts.text(), head.ratios.text())
        shown = plain(head.counts.text())
        assert shown.startswith(f"{c.tokens:,}")
        if i:
            assert f"{c.delta_pct:+.1f}%" in shown, shown
        assert head.ratios.text().startswith(f"{c.bytes_per_token:.2f} B")
        full = (f"<b>{c.tokens:,}</b> tokens · " + (f"{c.delta_label()} vs gpt2" if i else "the reference"))
        assert head.counts.toolTip() == full
        assert head.ratios.toolTip() == f"{c.bytes_per_token:.2f} bytes/token · {c.chars_per_token:.2f} chars/token"
    assert any(plain(c.header.counts.text()) != plain(c.header.counts.toolTip()) for c in view.columns)  # narrow
    best = counts[cheapest(counts)[0]].name
    assert best == "o200k_base" and fits(view.summary)
    assert plain(view.summary.text()).startswith(f"cheapest: {best}")
    assert view.summary.toolTip() == summary(counts)
    assert plain(view.summary.text()) != summary(counts)  # it had to be shortened
    window.resize(2200, 700)
    QApplication.processEvents()
    for column in view.columns:
        assert column.header.counts.text() == column.header.counts.toolTip()
        assert column.header.ratios.text() == column.header.ratios.toolTip()
    assert plain(view.summary.text()) == summary(counts)


def test_scrolling_and_caret_in_step(window, qtbot, corpora):
    text = (corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:40_000]
    view = compare(qtbot, window, text, ["gpt2", "cl100k_base", "llama-sp"])
    view.panes[2].verticalScrollBar().setValue(300)
    assert len({p.verticalScrollBar().value() for p in view.panes}) == 1
    assert len({p.firstVisibleBlock().blockNumber() for p in view.panes}) == 1
    assert view.panes[0].firstVisibleBlock().blockNumber() > 100
    cursor = view.panes[1].textCursor()
    cursor.setPosition(12_345)
    view.panes[1].setTextCursor(cursor)
    assert [p.textCursor().position() for p in view.panes] == [12_345] * 3
    assert len({p.firstVisibleBlock().blockNumber() for p in view.panes}) == 1


def test_panes_are_added_and_removed(window, qtbot):
    view = compare(qtbot, window, HELLO, ["gpt2", "cl100k_base"])
    assert view.add_pane() is not None and view.add_pane() is not None
    assert view.add_pane() is None and not view.add_button.isEnabled()
    assert view.names == ["gpt2", "cl100k_base", "o200k_base", "llama-sp"]
    wait_compared(qtbot, window)
    assert len(token_counts(view)) == 4
    view.remove_pane(view.panes[1])
    assert view.names == ["gpt2", "o200k_base", "llama-sp"]
    view.remove_pane(view.panes[1])
    view.remove_pane(view.panes[1])  # the last two stay
    assert view.names == ["gpt2", "llama-sp"]
    view.columns[1].header.picker.setCurrentText("cl100k_base")
    wait_compared(qtbot, window)
    assert view.names == ["gpt2", "cl100k_base"] and token_counts(view) == [6, 4]


def test_a_refused_special_token_is_counted_as_text_and_said(window, qtbot, tmp_path):
    text = "a <|endoftext|> b"
    view = compare(qtbot, window, text, ["gpt2", "llama-sp", "cl100k_base"])
    heads = [c.header.ratios.text() for c in view.columns]  # the second line says it
    assert "refused" in heads[0] and "refused" not in heads[1] and "refused" in heads[2]
    as_text = [len(tiktoken_encoding(n, tmp_path).encode_ordinary(text)) for n in ("gpt2", "cl100k_base")]
    assert [token_counts(view)[0], token_counts(view)[2]] == as_text
    window.state.set_policy("all")
    wait_compared(qtbot, window)
    assert [token_counts(view)[0], token_counts(view)[2]] == [
        len(tiktoken_encoding(n, tmp_path).encode(text, allowed_special="all")) for n in ("gpt2", "cl100k_base")]
    assert not any("refused" in c.header.counts.text() + c.header.ratios.text() for c in view.columns)


def test_screenshot_of_the_compare_view(tmp_path):
    from .test_screenshot import png_size, run

    text = tmp_path / "sample.txt"
    text.write_text("    hello world!!! 😀\n", encoding="utf-8")
    out = tmp_path / "compare.png"
    proc = run(["--screenshot", str(out), "--view", "compare", "-t", "gpt2", "-t", "cl100k_base",
                "--open", str(text)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()  # one picture of both panes, not one per tokenizer
    assert len(lines) == 1 and json.loads(lines[0])["path"] == str(out)
    width, height = png_size(out)
    assert width >= 600 and height >= 400


def test_edits_made_in_editor_mode_reach_the_panes_when_compare_returns(window, qtbot, tmp_path):
    view = compare(qtbot, window, HELLO, ["gpt2", "cl100k_base"])
    window.compare_action.trigger()  # off
    assert not view.active and not view.columns[1].isVisible()
    editor = window.editor
    cursor = editor.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.End)
    editor.setTextCursor(cursor)
    type_text(editor, " and 👋 more")
    wait_compared(qtbot, window)
    window.compare_action.trigger()  # on again
    wait_compared(qtbot, window)
    text = HELLO + " and 👋 more"
    assert view.panes[1].result.encoding.text == text
    assert token_counts(view) == [len(tiktoken_encoding(n, tmp_path).encode(text)) for n in view.names]


def test_the_compare_view_comes_back_as_it_was_left(make_window, qtbot):
    first = make_window()
    compare(qtbot, first, HELLO, ["gpt2", "cl100k_base", "llama-sp"])
    first.window_settings.save()
    second = make_window()
    wait_compared(qtbot, second)
    assert second.compare.active and second.compare_action.isChecked()
    assert second.compare.names == ["gpt2", "cl100k_base", "llama-sp"]
    second.compare.set_active(False)
    second.window_settings.save()
    assert not make_window().compare.active


def open_compared(window, qtbot, path, source: str) -> None:
    """Write `source` to `path` as UTF-8 bytes (its own line breaks) and open it beside gpt2 and
    cl100k_base in the compare view."""
    path.write_bytes(source.encode("utf-8"))
    window.compare.set_tokenizers(["gpt2", "cl100k_base"])
    window.compare.set_active(True)
    window.documents.open_text(path)
    qtbot.waitUntil(lambda: window.state.path is not None, timeout=10_000)
    wait_compared(qtbot, window)


def test_a_file_loaded_in_slices_reaches_the_panes_whole_once_it_is_in(window, qtbot, tmp_path):
    """While the window's editor takes a big file in slices the panes keep no books on the
    slices; then each takes the very text the editor was given (no copy read back out of the
    document per pane) and counts it as tiktoken does. After an edit they read the document."""
    source = ("naïve café 😀\r\n" + "x" * 70 + "\n") * 2_000
    assert len(source) > LOAD_SLICE
    open_compared(window, qtbot, tmp_path / "big.txt", source)
    view, editor = window.compare, window.editor
    pane = view.panes[1]
    assert pane.edit_count == 0  # (it was one per slice)
    assert editor.text_as_loaded() == source and editor.user_text() is editor.text_as_loaded()  # no copy
    assert pane.result.encoding.text == source
    assert token_counts(view) == [len(tiktoken_encoding(n, tmp_path).encode(source)) for n in view.names]
    cursor = editor.textCursor()
    cursor.setPosition(0)
    editor.setTextCursor(cursor)
    type_text(editor, "Z")
    wait_compared(qtbot, window)
    assert editor.text_as_loaded() is None
    assert editor.user_text() == "Z" + source == pane.result.encoding.text


def test_a_crlf_file_is_compared_with_its_own_line_breaks(window, qtbot, tmp_path):
    source = "    hello\r\n    world!!!\r\n        deeper 😀\r\n"
    open_compared(window, qtbot, tmp_path / "crlf.txt", source)
    view = window.compare
    assert window.state.result.encoding.text == source == view.panes[1].result.encoding.text
    assert token_counts(view) == [len(tiktoken_encoding(n, tmp_path).encode(source)) for n in view.names]
    encodings = [window.state.result.encoding, view.panes[1].result.encoding]
    # Editor positions as the tokens' own (Tokenized.starts16): a "\r\n" is one line break, and a
    # boundary between its "\r" and "\n" sits at that break.
    prefix = editor_prefix(source)
    for pane, m in zip(view.panes, boundary_marks(encodings)):
        assert view.visible_marks(pane).positions.tolist() == (m.chars + prefix[m.chars]).tolist()


def test_a_pane_follows_edits_across_kept_line_breaks(window, qtbot, tmp_path, capfd):
    """Deleting a CRLF and a lone CR of a mixed file with the panes shown: each pane takes the
    window editor's source edit (the map is followed once, not once per view), so every pane
    tokenizes the file's own text without resending it."""
    source = "ab\r\ncd\ref\ngh\r\n"
    open_compared(window, qtbot, tmp_path / "mixed.txt", source)
    cursor = QTextCursor(window.editor.document())
    for start, end, text in [(1, 4, "X"), (3, 5, ""), (0, 0, "\n")]:  # "b\r\nc", "\re", a typed break
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(text)
        wait_compared(qtbot, window)
        expected = window.editor.user_text()
        assert window.compare.panes[1].result.encoding.text == expected == window.state.result.encoding.text
    assert window.editor.user_text() == "\naXdf\ngh\r\n"
    assert "out of step" not in capfd.readouterr().err


def test_undo_in_a_pane_gives_every_pane_the_files_line_breaks_back(window, qtbot, tmp_path, capfd):
    """Undoing, in a pane, the deletion of a lone CR's and a CRLF's breaks: the window's map gets
    back what they stood for, and every pane tokenizes the file's own text again."""
    source = "ab\r\ncd\ref\ngh"
    open_compared(window, qtbot, tmp_path / "mixed.txt", source)
    pane = window.compare.panes[1]
    cursor = QTextCursor(pane.document())
    cursor.setPosition(1)
    cursor.setPosition(8, QTextCursor.MoveMode.KeepAnchor)  # "b", the CRLF, "cd", the CR, "ef"
    pane.setTextCursor(cursor)
    qtbot.keyClick(pane, Qt.Key.Key_Backspace)
    wait_compared(qtbot, window)
    assert window.editor.user_text() == "a\ngh" == pane.result.encoding.text
    qtbot.keyClick(pane, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    wait_compared(qtbot, window)
    assert window.editor.user_text() == source
    assert pane.result.encoding.text == source == window.state.result.encoding.text
    assert pane.result.encoding.ids == get_builtin("cl100k_base").encode(source).ids
    assert "out of step" not in capfd.readouterr().err


def test_a_caret_in_another_pane_names_the_windows_token(window, qtbot):
    """The state's caret (which the merge tree and the trace follow) is an index into the window's
    tokens; a click in a pane of another tokenizer must not put that pane's index there, and the
    window's marked token id is not marked in a pane whose ids mean other tokens."""
    view = compare(qtbot, window, HELLO + " tokenization", ["gpt2", "llama-sp"])
    llama = view.panes[1]
    carets = []
    window.state.caret_changed.connect(carets.append)
    cursor = QTextCursor(llama.document())
    cursor.setPosition(len(HELLO) + 3)  # inside " tokenization"
    llama.setTextCursor(cursor)
    qtbot.wait(50)
    encoding = window.state.result.encoding
    assert carets == [encoding.token_index_at(len(HELLO) + 3)]  # never llama's own index
    # Mark an id of llama's first token: the window's gpt2 tokens do not have it, and the
    # llama pane must not mark its own token of that number either.
    window.state.set_marked(llama.result.encoding.ids[0])
    assert not llama.extraSelections()


def test_a_long_line_is_compared_through_its_soft_breaks(window, qtbot, tmp_path):
    """A line held as pieces: every pane tokenizes the line itself, typing in a pane reaches all,
    and the boundary marks sit where the tokens are (a soft break before each piece)."""
    source = "x😀 " + "ab" * 7_000 + "\n"
    open_compared(window, qtbot, tmp_path / "long.txt", source)
    view = window.compare
    pane = view.panes[1]
    assert window.editor.document().blockCount() > 3  # pieces
    cursor = QTextCursor(pane.document())
    cursor.setPosition(pane.document().findBlockByNumber(2).position())  # after the second soft break
    pane.setTextCursor(cursor)
    qtbot.keyClicks(pane, "Z")
    wait_compared(qtbot, window)
    expected = window.editor.user_text()
    assert expected.count("Z") == 1 and expected.replace("Z", "") == source
    results = [window.state.result, pane.result]
    assert [r.encoding.text for r in results] == [expected, expected]
    assert token_counts(view) == [len(tiktoken_encoding(n, tmp_path).encode(expected)) for n in view.names]
    prefix = editor_prefix(expected, results[0].soft)
    for p, m in zip(view.panes, boundary_marks([r.encoding for r in results])):
        assert view.visible_marks(p).positions.tolist() == (m.chars + prefix[m.chars]).tolist()


def test_a_long_line_pasted_into_a_pane_goes_in_as_pieces(window, qtbot, tmp_path, capfd):
    """A line without break points pasted into the second pane is held as pieces for every pane
    (soft breaks that stand for nothing), and each pane tokenizes the line itself."""
    from PySide6.QtCore import QMimeData

    source = "first\nlast\n"
    open_compared(window, qtbot, tmp_path / "paste.txt", source)
    view = window.compare
    pane = view.panes[1]
    cursor = QTextCursor(pane.document())
    cursor.setPosition(len("first\nla"))
    pane.setTextCursor(cursor)
    line = "".join(chr(97 + (i * 7) % 26) for i in range(25_000))
    mime = QMimeData()
    mime.setText(line)
    pane.insertFromMimeData(mime)
    expected = "first\nla" + line + "st\n"
    assert pane.document().blockCount() > 6 and pane.wraps_anywhere()  # pieces, not one line
    assert pane.textCursor().position() == len("first\nla") + len(line) + pane.document().blockCount() - 3
    assert window.editor.user_text() == expected
    wait_compared(qtbot, window)
    results = [window.state.result, pane.result]
    assert [r.encoding.text for r in results] == [expected, expected]
    assert token_counts(view) == [len(tiktoken_encoding(n, tmp_path).encode(expected)) for n in view.names]
    assert "out of step" not in capfd.readouterr().err
