"""The byte / code-point inspector driven as a user would: real tokenizers, a selection or a caret
in the editor, the panel's own widgets read back."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QApplication

from tokexplorer.core.registry import get_builtin
from tokexplorer.gui.app import select_code_points
from tokexplorer.gui.panels import inspector

from .helpers import wait_settled


@pytest.fixture
def inspect(window, qtbot):
    """inspect(tokenizer, text, start[, end]) -> the panel, showing that selection (or caret)."""
    panel = window.inspector
    window.show_view("inspector")  # a hidden panel does nothing

    def run(name, text, start, end=None):
        window.state.set_tokenizer(name)
        window.documents.set_text(text)
        wait_settled(qtbot, window)
        assert select_code_points(window, start, start if end is None else end)
        qtbot.waitUntil(lambda: panel.up_to_date and panel.info is not None)
        return panel

    return run


def strip(panel):
    return [(f"{c.value:02X}", c.token) for c in panel.strip.cells]


def tree_rows(panel):
    """(depth, code point column, name column) of every row of the code-point tree."""
    rows = []
    for i in range(panel.tree.topLevelItemCount()):
        top = panel.tree.topLevelItem(i)
        rows.append((0, top.text(1), top.text(2)))
        rows += [(1, top.child(j).text(1), top.child(j).text(2)) for j in range(top.childCount())]
    return rows


def test_an_emoji_split_across_gpt2_tokens(inspect, window):
    panel = inspect("gpt2", "hi 👋 there", 3, 4)
    # GPT-2's tokens: ' \xf0\x9f\x91' (#1) then '\x8b' (#2): the bar falls inside the emoji.
    assert strip(panel) == [("F0", 1), ("9F", 1), ("91", 1), ("8B", 2)]
    assert [window.state.result.encoding.ids[t.index] for t in panel.info.tokens] == [50169, 233]
    assert tree_rows(panel) == [(0, "U+1F44B", "WAVING HAND SIGN")]
    assert panel.tree.topLevelItem(0).text(8) == "#1 #2"
    colours = [c.name() for c in panel.strip.colours]
    assert colours[0] == colours[1] == colours[2] != colours[3]
    assert "2</b> tokens touched (1 whole)" in panel.summary.text()
    tip = panel.strip.tip(3)
    assert "byte 4 of 4 of U+1F44B WAVING HAND SIGN" in tip and "token #2, id 233" in tip and "partial" in tip


def test_a_flag_is_one_cluster(inspect):
    panel = inspect("cl100k_base", "a 🇺🇳!", 2, 4)
    assert tree_rows(panel) == [(0, "cluster", "2 code points, 8 bytes"),
                                (1, "U+1F1FA", "REGIONAL INDICATOR SYMBOL LETTER U"),
                                (1, "U+1F1F3", "REGIONAL INDICATOR SYMBOL LETTER N")]
    assert [v for v, _ in strip(panel)] == "F0 9F 87 BA F0 9F 87 B3".split()


def test_a_combining_mark_shows_the_normal_forms(inspect):
    panel = inspect("cl100k_base", "cafe\u0301", 3, 5)
    assert tree_rows(panel) == [(0, "cluster", "2 code points, 3 bytes"), (1, "U+0065", "LATIN SMALL LETTER E"),
                                (1, "U+0301", "COMBINING ACUTE ACCENT")]
    assert "<b>NFC</b> differs: é (U+00E9)" in panel.notes.text()


def test_a_hangul_syllable_under_llama_byte_fallback(inspect):
    panel = inspect("llama-sp", "x 똠", 2)  # the caret in front of 똠: three byte pieces
    assert panel.info.caret_token is not None
    assert [v for v, _ in strip(panel)] == ["EB", "98", "A0"]
    assert len({t for _, t in strip(panel)}) == 3  # one token per byte
    assert tree_rows(panel) == [(0, "U+B620", "HANGUL SYLLABLE DDOM")]
    assert "“&lt;0xEB&gt;”" not in panel.strip.tip(0) and "“<0xEB>” (EB), byte-fallback" in panel.strip.tip(0)
    assert "byte-fallback piece(s): &lt;0xEB&gt; &lt;0x98&gt; &lt;0xA0&gt; are the bytes EB 98 A0" in panel.notes.text()


def test_a_zwj_family(inspect):
    family = "👨\u200d👩\u200d👧"
    panel = inspect("gpt2", f"{family} ok", 0, 5)
    rows = tree_rows(panel)
    assert rows[0] == (0, "cluster", "5 code points, 18 bytes")
    assert [r[1] for r in rows[1:]] == ["U+1F468", "U+200D", "U+1F469", "U+200D", "U+1F467"]
    assert len(panel.strip.cells) == 18
    assert "U+200D ZERO WIDTH JOINER (invisible) ×2" in panel.notes.text()


def test_the_caret_follows_tokens_and_the_tokenizer(inspect, window, qtbot):
    panel = inspect("cl100k_base", "hello world" + " more" * 300, 7)
    assert panel.info.caret_token == 1 and [v for v, _ in strip(panel)][0] == "20"
    # Far into the text, so that a position mistaken for a timer interval would show.
    select_code_points(window, 1200, 1200)
    QApplication.processEvents()  # one turn of the event loop is all an update waits for
    assert panel.up_to_date and panel.info.caret_token == window.state.result.encoding.token_index_at(1200)
    assert window.selection_counts.text() == ""
    select_code_points(window, 1011, 1411)  # 80 times " more"
    QApplication.processEvents()
    assert panel.up_to_date and panel.info.counts.chars == 400
    assert window.selection_counts.text() == "selection: 80 tokens (80 whole) · 400 chars · 400 bytes"
    window.state.set_tokenizer("llama-sp")
    wait_settled(qtbot, window)
    qtbot.waitUntil(lambda: panel.up_to_date and panel.info.tokenizer == "llama-sp")
    assert "llama-sp" in panel.summary.text()


def test_a_megabyte_select_all_is_bounded(inspect, window):
    text = "To be, or not to be: that is the question. " * 24_000  # 1 MB
    panel = inspect("cl100k_base", text, 0, len(text))
    assert panel.info.counts.chars == len(text) and panel.info.shown == 100
    assert "showing 100 of 1,032,000 code points" in panel.notes.text()
    assert panel.tree.topLevelItemCount() == 100 and len(panel.strip.cells) == 100
    assert window.selection_counts.text().startswith(f"selection: {len(window.state.result):,} tokens")


def decoded(qtbot, panel, typed: str) -> str:
    """Type ids into the decode box; the server's answer, once it is shown."""
    panel.decode_box.clear()
    qtbot.keyClicks(panel.decode_box, typed)
    qtbot.waitUntil(lambda: not panel.decode_pending, timeout=10_000)
    return panel.decoded.text()


def test_decode_box(inspect, qtbot):
    panel = inspect("cl100k_base", "hello world", 0)
    text = decoded(qtbot, panel, "15339, 1917")
    assert "text: “hello world”" in text
    assert "15339 “hello” · 1917 “␣world”" in text
    assert decoded(qtbot, panel, "15339").startswith(
        "id 15339 in cl100k_base: “hello” · bytes [104, 101, 108, 108, 111] (5 bytes)")
    text = decoded(qtbot, panel, "9468")  # the first two bytes of many emoji
    assert "not valid UTF-8 on its own" in text and "\\xf0\\x9f" in text
    text = decoded(qtbot, panel, "15339, x1")
    assert text == ("'x1' is not a token id (ids are whole numbers in the digits 0-9, such as 1917; "
                    "a character is looked up quoted, 'h', or as U+0068)")
    assert "c62828" in panel.decoded.styleSheet()
    assert "token id 100256 is not in cl100k_base" in decoded(qtbot, panel, "100256")
    panel.decode_box.clear()
    assert not panel.decoded.isVisible()


def test_decode_box_follows_the_tokenizer(inspect, window, qtbot):
    panel = inspect("cl100k_base", "hello", 0)
    qtbot.keyClicks(panel.decode_box, "15339")
    window.state.set_tokenizer("gpt2")
    wait_settled(qtbot, window)
    qtbot.waitUntil(lambda: "in gpt2" in panel.decoded.text())
    assert "“" in panel.decoded.text()


def test_copy_json_and_text(inspect, qtbot):
    panel = inspect("gpt2", "hi 👋 there", 3, 4)
    qtbot.mouseClick(panel.copy_json_button, Qt.MouseButton.LeftButton)
    data = json.loads(QApplication.clipboard().text())
    assert data["tokenizer"] == "gpt2" and data["counts"] == {"tokens": 2, "whole_tokens": 1, "chars": 1, "bytes": 4}
    assert [b["hex"] for b in data["bytes"]] == ["F0", "9F", "91", "8B"] and data["code_points"][0]["name"] == "WAVING HAND SIGN"
    qtbot.mouseClick(panel.copy_text_button, Qt.MouseButton.LeftButton)
    assert "U+1F44B\tWAVING HAND SIGN" in QApplication.clipboard().text()


def test_a_hidden_inspector_does_no_work(window, qtbot):
    window.inspector_dock.hide()
    window.documents.set_text("abc")
    wait_settled(qtbot, window)
    select_code_points(window, 0, 2)
    qtbot.wait(20)
    assert window.inspector.up_to_date and window.inspector.info is None
    window.show_view("inspector")
    qtbot.waitUntil(lambda: window.inspector.info is not None and window.inspector.info.counts.chars == 2)


def test_a_refused_text_says_so(inspect, window, qtbot):
    """Under "refuse" the text is shown tokenized as plain text; inside the refused span the
    inspector says why, outside it says nothing of it."""
    panel = inspect("cl100k_base", "a <|endoftext|> b", 4, 9)
    qtbot.waitUntil(lambda: window.state.result is not None and window.state.result.refused and panel.up_to_date)
    assert "does not encode" in panel.summary.text() and panel.tree.topLevelItemCount() == 5
    plain = get_builtin("cl100k_base").encode("a <|endoftext|> b", allowed_special="none")
    assert panel.info.counts.tokens == len(plain.token_range(4, 9))
    assert select_code_points(window, 0, 1)
    qtbot.waitUntil(lambda: panel.up_to_date and panel.info.counts.end == 1)
    assert "does not encode" not in panel.summary.text()


def test_double_clicking_a_byte_goes_to_its_token(inspect, window, qtbot):
    panel = inspect("gpt2", "hi 👋 there", 0, 10)
    k = next(i for i, c in enumerate(panel.strip.cells) if c.value == ord("t"))  # in ' there', token #3
    qtbot.mouseDClick(panel.strip, Qt.MouseButton.LeftButton, pos=panel.strip.cell_rect(k).center())
    qtbot.waitUntil(lambda: panel.up_to_date and panel.info.caret_token == 3)
    assert not window.editor.textCursor().hasSelection() and window.state.selection == (4, 4)


def _move_mouse(editor, position16: int) -> None:
    """A mouse move over the editor's viewport, onto UTF-16 position `position16`."""
    from PySide6.QtCore import QEvent, QPoint, QPointF
    from PySide6.QtGui import QMouseEvent, QTextCursor

    cursor = QTextCursor(editor.document())
    cursor.setPosition(position16)
    point = editor.cursorRect(cursor).center() + QPoint(2, 0)
    move = QMouseEvent(QEvent.Type.MouseMove, QPointF(point), QPointF(editor.viewport().mapToGlobal(point)),
                       Qt.MouseButton.NoButton, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(editor.viewport(), move)


def test_the_inspector_follows_hover_after_a_rest(inspect, window, qtbot):
    from PySide6.QtCore import QEvent

    from tokexplorer.gui.panels.inspector import HOVER_MS

    panel = inspect("gpt2", "hi 👋 there", 0)  # the caret on "hi"
    assert [r.info.codepoint for r in panel.info.rows] == ["U+0068", "U+0069"]
    editor = window.editor
    # A mouse that only passes over the emoji changes nothing: no flicker.
    _move_mouse(editor, 3)
    QApplication.sendEvent(editor, QEvent(QEvent.Type.Leave))
    qtbot.wait(HOVER_MS + 200)
    assert panel.hover is None and panel.up_to_date
    assert [r.info.codepoint for r in panel.info.rows] == ["U+0068", "U+0069"]
    # Resting on it: GPT-2's token ' \xf0\x9f\x91' (#1) shows the space and the emoji, every
    # byte in the colour of its token (the emoji's last byte is token #2's).
    _move_mouse(editor, 3)
    assert panel.hover is None  # not at once
    qtbot.waitUntil(lambda: panel.hover is not None and panel.up_to_date, timeout=5000)
    assert "under the mouse" in panel.summary.text()
    assert "token #1 under the mouse" in panel.summary.text()
    assert [r.info.codepoint for r in panel.info.rows] == ["U+0020", "U+1F44B"]
    assert strip(panel) == [("20", 1), ("F0", 1), ("9F", 1), ("91", 1), ("8B", 2)]
    # The mouse leaves the text: the caret's token again.
    QApplication.sendEvent(editor, QEvent(QEvent.Type.Leave))
    qtbot.waitUntil(lambda: panel.hover is None and panel.up_to_date, timeout=5000)
    assert [r.info.codepoint for r in panel.info.rows] == ["U+0068", "U+0069"]
    # A click (the caret moving) wins over a hover at once.
    _move_mouse(editor, 3)
    qtbot.waitUntil(lambda: panel.hover is not None and panel.up_to_date, timeout=5000)
    select_code_points(window, 5, 5)
    QApplication.processEvents()
    assert panel.hover is None and panel.up_to_date and "under the caret" in panel.summary.text()
    assert [r.info.codepoint for r in panel.info.rows][:2] == ["U+0020", "U+0074"]


def test_hovering_a_compare_pane_shows_its_token(inspect, window, qtbot):
    panel = inspect("gpt2", "    hello world!!!", 17)
    view = window.compare
    view.set_tokenizers(["gpt2", "cl100k_base"])
    view.set_active(True)
    wait_settled(qtbot, window)
    qtbot.waitUntil(lambda: view.up_to_date, timeout=60_000)
    cl100k = view.panes[1]
    _move_mouse(cl100k, 1)  # cl100k's first token is the three spaces '   ' (GPT-2: three tokens)
    qtbot.waitUntil(lambda: panel.hover is not None and panel.up_to_date, timeout=5000)
    assert panel.info.counts.chars == 3 and panel.info.counts.tokens == 3
    assert [r.info.codepoint for r in panel.info.rows] == ["U+0020"] * 3
    view.set_active(False)


@pytest.fixture
def app_font():
    """app_font(scale): the application's font scaled (as a desktop's larger font); restored after."""
    app = QApplication.instance()
    old = app.font()

    def scale(factor: float) -> None:
        font = QFont(old)
        font.setPointSizeF(old.pointSizeF() * factor)
        app.setFont(font)

    yield scale
    app.setFont(old)


def first_row_shown_whole(panel) -> bool:
    """The strip's first row lies inside its scroll area's view: the glyphs above, the bytes' hex,
    and the token labels under them, each label's text as drawn (e.g. "#0 11976")."""
    strip = panel.strip
    view = panel.strip_area.viewport().rect()
    lh = QFontMetrics(strip.font()).height()
    rects = [strip.cell_rect(i) for i in range(len(strip.cells))]
    row = [r for r in rects if r.top() == rects[0].top()]
    labels = strip.token_labels(0, len(row))
    assert any(" " in text for _, text in labels)  # at least one label with its id
    fm = QFontMetrics(strip.label_font())
    drawn = [fm.boundingRect(rect, Qt.AlignmentFlag.AlignCenter, text) for rect, text in labels]
    glyphs = row[0].united(row[-1]).adjusted(0, -lh, 0, 0)
    return (all(view.contains(r.translated(strip.pos())) for r in [*row, glyphs, *drawn])
            and all(strip.rect().contains(r) for r in drawn))


@pytest.mark.parametrize("scale, when", [(1.0, None), (1.5, "before"), (1.5, "after"), (2.0, "after")])
def test_the_byte_strip_shows_its_labels_whole(qtbot, make_window, app_font, scale, when):
    """At the window's own dock height, the byte strip's first row (glyphs, hex, the token labels
    under them) is inside its view, at the default font and at larger ones, set before the
    window is made or while it is open (the strip's height comes from its font's metrics)."""
    if when == "before":
        app_font(scale)
    window = make_window()
    if when == "after":
        app_font(scale)
    window.show_view("inspector")
    window.state.set_tokenizer("cl100k_base")
    window.documents.set_text("मानव अधिकारों की सार्वभौम घोषणा and hello")
    wait_settled(qtbot, window)
    assert select_code_points(window, 0, 12)
    panel = window.inspector
    qtbot.waitUntil(lambda: panel.up_to_date and panel.info is not None)
    QApplication.processEvents()
    assert panel.strip.font().pointSizeF() == pytest.approx(QApplication.font().pointSizeF())
    assert first_row_shown_whole(panel)
    window.resizeDocks([window.inspector_dock], [1], Qt.Orientation.Vertical)  # as short as it goes
    QApplication.processEvents()
    assert first_row_shown_whole(panel)


def notes_and_tree(panel) -> tuple[float, float, float]:
    """(lines the notes' text needs, lines the notes pane shows, rows the tree shows), the lines
    rounded (a label is a pixel or two taller than its lines' spacing)."""
    line = panel.notes.fontMetrics().lineSpacing()
    need = round(panel.notes.heightForWidth(panel.split.width()) / line)
    return need, round(panel.notes_area.height() / line), panel.tree.viewport().height() / panel.tree.sizeHintForRow(0)


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_the_notes_take_only_the_lines_they_need(qtbot, make_window, app_font, scale, corpora):
    """The notes pane is as tall as its text (one line for one note; at most NOTES_LINES, then it
    scrolls), so the code-point tree keeps the room; in a short dock the notes give way first,
    down to one line. (They kept three lines whatever they said, and the tree gave way.)"""
    app_font(scale)
    window = make_window()
    window.resize(1100, 1100)  # room for a tall dock
    window.show_view("inspector")
    panel = window.inspector
    window.state.set_tokenizer("cl100k_base")
    myanmar = (corpora / "multilingual/udhr/udhr_mya.txt").read_text("utf-8")[:1000]
    window.documents.set_text("a\u200bb and more " + myanmar)
    wait_settled(qtbot, window)

    def show(start: int, end: int, dock: int) -> tuple[float, float, float]:
        window.resizeDocks([window.inspector_dock], [dock], Qt.Orientation.Vertical)
        assert select_code_points(window, start, end)
        qtbot.waitUntil(lambda: panel.up_to_date and panel.info is not None and panel.info.counts.end == end)
        QApplication.processEvents()
        return notes_and_tree(panel)

    need, shown, rows = show(0, 3, 320)  # a zero-width space: one note
    assert "ZERO WIDTH SPACE" in panel.notes.text() and need == 1
    assert shown == 1  # the tree has the rest
    # a long Myanmar selection: four lines of notes, in a dock with room for them after Python's
    # lists (which keep their NUMBERS_LINES lines: they never give way)
    need, shown, rows = show(14, 414, 600)
    assert need > inspector.NOTES_LINES and shown == inspector.NOTES_LINES and rows >= inspector.TREE_ROWS
    need, shown, rows = show(14, 414, 300)  # a short dock
    assert rows < inspector.TREE_ROWS + 1 and shown == 1  # the notes gave way to the tree


@pytest.mark.parametrize("scale", [1.0, 1.5, 2.0])
def test_pythons_lists_keep_their_lines_in_a_small_window(qtbot, make_window, app_font, scale, corpora):
    """In a 1024 x 576 window (a 2560 px screen at 200 %) the Explore workspace's inspector dock
    has room for the byte strip's row and little more: the lists Python prints (and the tokens'
    line) keep the lines their text needs, up to NUMBERS_LINES, and the parts scroll as a whole to
    show them. (The splitter squeezed them to 1 px.)"""
    app_font(scale)
    window = make_window()
    window.resize(1024, 576)
    window.workspaces.switch("Explore")
    window.show_view("inspector")
    panel = window.inspector
    window.state.set_tokenizer("cl100k_base")
    myanmar = (corpora / "multilingual/udhr/udhr_mya.txt").read_text("utf-8")[:60]
    window.documents.set_text(myanmar + " مرحبا 👋🏽 你好")
    wait_settled(qtbot, window)
    assert select_code_points(window, 0, 24)
    qtbot.waitUntil(lambda: panel.up_to_date and panel.info is not None)
    QApplication.processEvents()
    assert panel.body.height() < panel.split.height()  # the dock is too short for the parts: they scroll
    line = panel.numbers.fontMetrics().lineSpacing()
    need = panel.numbers.heightForWidth(panel.split.width())
    assert need > 2 * line  # the three lists and the tokens, wrapped
    assert panel.numbers_area.height() >= min(need, inspector.NUMBERS_LINES * line)
    panel.body.ensureWidgetVisible(panel.numbers_area, 0, 0)
    QApplication.processEvents()
    shown = panel.numbers_area.visibleRegion().boundingRect()
    assert shown.height() >= panel.numbers.fontMetrics().height()
    assert panel.strip_area.height() >= panel.strip.row_height()  # the strip keeps its row
    assert panel.tree.height() >= panel.tree.header().height() + inspector.TREE_MIN_ROWS * panel.tree.sizeHintForRow(0)


def test_numbers_as_python_prints_them(inspect, qtbot):
    """Decimal by default, as the lecture's list(...) prints: the code-point columns, and the
    lists of "h".encode("utf-8" / "utf-16" / "utf-32") with the byte order mark, from Python's own
    codecs; the switch writes them in hex and says so to whoever listens."""
    panel = inspect("gpt2", "h", 0, 1)
    assert panel.base == panel.strip.base == "decimal"
    item = panel.tree.topLevelItem(0)
    assert [item.text(k) for k in (1, 5, 6, 7)] == ["U+0068", "104", "104", "104"]
    text = panel.numbers.text()
    for codec in ("utf-8", "utf-16", "utf-32"):
        assert f'list(s.encode("{codec}"))</code> {list("h".encode(codec))}' in text
    assert str([255, 254, 104, 0]) in text or __import__("sys").byteorder == "big"  # the lecture's, little-endian
    with qtbot.waitSignal(panel.base_changed) as switched:
        panel.base_box.setCurrentText("hex")
    assert switched.args == ["hex"] and panel.strip.base == "hex"
    item = panel.tree.topLevelItem(0)
    assert [item.text(k) for k in (5, 6, 7)] == ["68", "0068", "00000068"]
    assert " ".join(f"{b:02X}" for b in "h".encode("utf-16")) in panel.numbers.text()
    assert decoded(qtbot, panel, "71").startswith("id 71 in gpt2: “h” · bytes 68 (1 byte)")
    panel.set_base("decimal")
    assert panel.base_box.currentText() == "decimal" and "[104]" in panel.decoded.text()


def test_an_emoji_in_decimal_has_its_code_units(inspect):
    panel = inspect("cl100k_base", "a👋", 1, 2)
    item = panel.tree.topLevelItem(0)
    assert [item.text(k) for k in (5, 6, 7)] == ["240 159 145 139", "55357 56395", "128075"]
    assert str(list("👋".encode("utf-16"))) in panel.numbers.text()


def test_decode_box_looks_up_characters_as_chr_and_ord(inspect, qtbot):
    """U+0068, 'h' and h are characters (chr / ord); a bare number is a token id, with what chr
    makes of it beside."""
    panel = inspect("cl100k_base", "hello", 0)
    for typed in ("U+0068", "'h'", "h", "chr(104)"):
        text = decoded(qtbot, panel, typed)
        assert text.startswith("ord('h') = 104 · chr(104) = 'h' · U+0068 LATIN SMALL LETTER H · UTF-8 [104]"), typed
        assert "in cl100k_base: 71 “h”" in text
    text = decoded(qtbot, panel, "104")
    assert text.startswith("id 104 in cl100k_base: “")
    assert "as a code point instead: chr(104) = 'h' (U+0068 LATIN SMALL LETTER H)" in text
    panel.decode_box.setText("👋")  # (keyClicks cannot type it)
    qtbot.waitUntil(lambda: not panel.decode_pending, timeout=10_000)
    assert panel.decoded.text().startswith("ord('👋') = 128075 · chr(128075) = '👋' · U+1F44B WAVING HAND SIGN")
    assert "past the last code point" in decoded(qtbot, panel, "U+110000")


def test_sentencepiece_pieces_as_sentencepiece_names_them(inspect, window, qtbot):
    """llama-sp's tokens by their names from sentencepiece's id_to_piece (▁hell, <0x0A>), asked of
    the server; the app's own rendering (␣hell, \\n) one click away; gone for GPT-2."""
    from .helpers import tokenizer_for

    panel = inspect("llama-sp", "hello\n", 0, 6)
    qtbot.waitUntil(lambda: panel.pieces_button.isVisible() and "▁" in panel.numbers.text(), timeout=10_000)
    tok = tokenizer_for(window, "llama-sp")
    names = [tok.pieces[i] for i in window.state.result.encoding.ids]
    assert names == ["▁hell", "o", "<0x0A>"]
    assert "tokens: 6312 “▁hell” · 28709 “o” · 13 “&lt;0x0A&gt;”" in panel.numbers.text()
    assert decoded(qtbot, panel, "6312, 13").endswith("tokens: 6312 “▁hell” · 13 “&lt;0x0A&gt;”")
    panel.pieces_button.click()
    assert "tokens: 6312 “␣hell” · 28709 “o” · 13 “\\n”" in panel.numbers.text()
    assert panel.decoded.text().endswith("tokens: 6312 “␣hell” · 13 “\\n”")
    panel = inspect("gpt2", "hello", 0, 5)
    qtbot.waitUntil(lambda: not panel.pieces_button.isVisible(), timeout=10_000)


def test_the_numbers_switch_is_remembered(qtbot, make_window):
    window = make_window()
    assert window.inspector.base == "decimal"  # the first start: as Python prints them
    window.inspector.base_box.setCurrentText("hex")
    window.window_settings.save()
    again = make_window()
    assert again.inspector.base == again.inspector.base_box.currentText() == "hex"
    assert again.inspector.tree.headerItem().text(7) == "UTF-32"
