"""Invisible and bidi characters made visible in the window ("Trojan Source"): a boxed label at
each one's place in the editor and in every compare pane, with Show Whitespace on or off, the text
unchanged; a tooltip naming it; the status bar's warning while the text holds bidi controls, kept
through edits. Also what the status bar says while a new text loads, and how a 1 MB file wraps."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtGui import QColor, QHelpEvent, QTextCursor
from PySide6.QtWidgets import QApplication, QToolTip

from tokexplorer.core.files.textfile import read_text_file
from tokexplorer.core.positions import editor_text
from tokexplorer.gui.editor.invisibles import invisible_marks

from .helpers import type_text, wait_settled

TEXT = ("RLO\u202eevil\u202c reads backwards\n"
        "zero\u200bwidth, soft\u00adhyphen, BOM\ufeffinside, word\u2060joiner\n"
        "emoji 👨\u200d👩\u200d👧 stay whole\n")
LABELS = ["RLO", "PDF", "ZWSP", "SHY", "BOM", "WJ"]


def labels(view) -> list[str]:
    return [d.label for d in invisible_marks(view, view.viewport().rect())]


def show(qtbot, window, text: str) -> None:
    window.state.set_tokenizer("cl100k_base")
    window.documents.set_text(text)
    wait_settled(qtbot, window)


def test_each_invisible_gets_a_marker_with_or_without_whitespace_shown(qtbot, window):
    show(qtbot, window, TEXT)
    editor = window.editor
    for on in (False, True):
        window.state.set_show_whitespace(on)
        qtbot.wait(50)
        assert labels(editor) == LABELS
        assert editor.user_text() == TEXT  # painted, never inserted
        assert window.state.result.encoding.text == TEXT
    window.state.set_show_whitespace(False)
    # The RLO's box is drawn at its place: red pixels where its box is, none of it before.
    rlo = invisible_marks(editor, editor.viewport().rect())[0]
    image = editor.viewport().grab().toImage()
    box = rlo.box.toRect()
    pixels = [QColor(image.pixel(x, y)) for x in range(box.left(), box.right() + 1)
              for y in range(box.top(), box.bottom() + 1)]
    assert sum(1 for c in pixels if c.red() - max(c.green(), c.blue()) > 80) > 20  # its border and label
    # It stands after "RLO", where the override starts in the stored text.
    cursor = QTextCursor(editor.document())
    cursor.setPosition(3)
    assert abs(rlo.x - editor.cursorRect(cursor).center().x()) <= 3
    assert rlo.reach is not None and rlo.reach[1] > rlo.reach[0]  # the text it turns around


def test_a_marker_tooltip_names_the_character(qtbot, window):
    show(qtbot, window, TEXT)
    editor = window.editor
    drawn = invisible_marks(editor, editor.viewport().rect())
    for d, said in ((drawn[0], "U+202E RIGHT-TO-LEFT OVERRIDE (bidi control)"),
                    (drawn[2], "U+200B ZERO WIDTH SPACE (zero-width)")):
        point = d.box.center().toPoint()
        QApplication.sendEvent(editor.viewport(), QHelpEvent(QEvent.Type.ToolTip, point,
                                                             editor.viewport().mapToGlobal(point)))
        qtbot.waitUntil(lambda: QToolTip.isVisible() and said in QToolTip.text(), timeout=5_000)
        if d.bidi:  # what it governs, in the order it is stored
            assert "“evil” after it, up to U+202C, is displayed right to left" in QToolTip.text()
        QToolTip.hideText()


def test_the_status_bar_warns_of_bidi_controls_through_edits(qtbot, window):
    show(qtbot, window, TEXT)
    counts = window.counts_label
    tokens = window.state.result.stats["tokens"]
    assert window.state.bidi_controls == (0x202E, 0x202C)
    assert counts.text().startswith(f"{tokens:,} tokens")  # the counts first, always
    assert "⚠ 2 bidi controls" in counts.text() or "This text holds 2 bidi control characters" in counts.text()
    assert ("This text holds 2 bidi control characters (U+202E RLO, U+202C PDF): it may display in a "
            "different order than it is stored") in counts.toolTip()
    # Delete the override: one control left; delete the PDF too: no warning.
    editor = window.editor
    cursor = QTextCursor(editor.document())
    cursor.setPosition(3)
    cursor.setPosition(4, QTextCursor.MoveMode.KeepAnchor)
    cursor.removeSelectedText()
    assert window.state.bidi_controls == (0x202C,)
    cursor.setPosition(7)
    cursor.setPosition(8, QTextCursor.MoveMode.KeepAnchor)
    assert cursor.selectedText() == "\u202c"
    cursor.removeSelectedText()
    assert window.state.bidi_controls == ()
    wait_settled(qtbot, window)
    assert "bidi" not in counts.text() and "bidi" not in counts.toolTip()
    # Typed at the end of the text, after everything: found, and the positions before it kept.
    editor.moveCursor(QTextCursor.MoveOperation.End)
    type_text(editor, "x\u2067y")
    wait_settled(qtbot, window)
    assert window.state.bidi_controls == (0x2067,)
    assert "⚠ 1 bidi control" in counts.text() or "holds 1 bidi control character" in counts.text()
    while "\u2067" in editor.user_text():
        editor.undo()
    assert window.state.bidi_controls == ()
    editor.undo()  # the deletion of the PDF
    assert window.state.bidi_controls == (0x202C,)


def test_compare_panes_mark_invisibles_too(qtbot, window):
    show(qtbot, window, TEXT)
    window.compare.set_tokenizers(["cl100k_base", "gpt2", "llama-sp"])
    window.compare.set_active(True)
    wait_settled(qtbot, window)
    qtbot.waitUntil(lambda: window.compare.up_to_date, timeout=30_000)
    for pane in window.compare.panes:
        assert labels(pane) == LABELS, pane.objectName()


def test_counts_say_counting_while_a_new_text_loads(qtbot, window, corpora):
    """The old text's counts never stand for the new one: from the moment a text starts going in
    until its tokens come, the status bar says "counting…"."""
    show(qtbot, window, "a short text")
    assert window.counts_label.text().startswith("3 tokens")
    big = (corpora / "en" / "tinyshakespeare.txt").read_text(encoding="utf-8")
    seen = []
    window.state.tokenized.connect(lambda r: seen.append(r is not None and r.stats["chars"]))
    window.editor.load_text(editor_text(big))
    assert window.counts_label.text() == "counting…"
    assert seen == []  # (the server has not answered yet: the check above meant something)
    qtbot.waitUntil(lambda: not window.editor.loading, timeout=60_000)
    wait_settled(qtbot, window, timeout=60_000)
    tokens = window.state.result.stats["tokens"]
    assert tokens == 301_829  # cl100k_base on tinyshakespeare
    assert window.counts_label.text().startswith("301,829 tokens")


def test_a_megabyte_file_opens_wrapped_and_stays_so_through_an_undo(qtbot, window, corpora):
    """The 1.1 MB Japanese novel (CRLF, a line of 11,183 characters held in pieces): it opens
    with its lines wrapped to the editor's width, no horizontal scroll bar, as a short text does;
    an edit and its undo change nothing there."""
    path = corpora / "multilingual" / "ja_wagahaiwa_nekodearu.txt"
    window.documents.open_text(path)
    qtbot.waitUntil(lambda: window.state.path == path and not window.editor.loading, timeout=60_000)
    wait_settled(qtbot, window, timeout=60_000)
    editor = window.editor
    block = editor.document().findBlockByNumber(18)  # a paragraph of 499 characters
    assert len(block.text()) == 499

    def wrapped() -> bool:
        cursor = QTextCursor(block)
        editor.setTextCursor(cursor)
        editor.centerCursor()
        width = editor.viewport().width()
        lines = list(editor.visible_lines(editor.viewport().rect()))
        return (editor.horizontalScrollBar().maximum() == 0 and block.layout().lineCount() > 3
                and all(line.naturalTextWidth() <= width + 1 for _, line, _ in lines))

    assert wrapped()
    cursor = QTextCursor(block)
    cursor.setPosition(block.position() + 5)
    editor.setTextCursor(cursor)
    type_text(editor, "猫")
    editor.undo()
    wait_settled(qtbot, window, timeout=60_000)
    assert wrapped() and editor.user_text() == read_text_file(path)


def test_a_loaded_text_is_searched_slice_by_slice(qtbot, window, corpora):
    """A text long enough to go in slices, with controls near the start, across the slices and
    after astral characters: each is counted at its own UTF-16 place (deleting it clears it)."""
    base = (corpora / "en" / "tinyshakespeare.txt").read_text(encoding="utf-8")[:200_000]
    text = "😀\u202e" + base[:70_000] + "\U0001d54f\u2066" + base[70_000:] + "\u2069"
    window.editor.load_text(editor_text(text))
    assert window.state.bidi_controls == ()  # (the old text's warning is gone at once)
    qtbot.waitUntil(lambda: not window.editor.loading, timeout=60_000)
    assert window.state.bidi_controls == (0x202E, 0x2066, 0x2069)
    tally = window.editor.bidi_tally
    doc = window.editor.document()
    assert [doc.characterAt(p) for p in tally.positions] == ["\u202e", "\u2066", "\u2069"]
