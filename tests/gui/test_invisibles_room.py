"""Each invisible character's box has room of its own in the text's layout: the letters after it are
laid out after the box, in the editor and in every compare pane, so no box covers a glyph; a click
after a box puts the caret after the character; typing one in gives it room at once, deleting it
takes the room away, and neither is an edit of the text. Measured on Qt's own layout: each line
laid out without the room (its formats taken away) and with it."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QTextCursor

from tokexplorer.gui.editor.invisibles import box_width, invisible_marks, marker_font, room

from .helpers import type_text, wait_settled

LINES = ["RLO\u202eevil\u202c!", "zero\u200bwidth", "soft\u00adhyphen", "a \ufeffBOM", "x\U000e0048\U000e0069y"]
# (line number, the glyphs before the mark, the glyphs after it), block-relative UTF-16 ranges
CASES = [
    (0, (2, 3), (4, 8)),  # the override: "live" comes after its box
    (0, (4, 8), (9, 10)),  # and the PDF's box after "live"
    (1, (3, 4), (5, 6)),
    (2, (3, 4), (5, 6)),
    (3, (1, 2), (3, 4)),
    (4, (0, 1), (5, 6)),  # tag characters spelling "Hi": one box
]
LABELS = ["RLO", "PDF", "ZWSP", "SHY", "BOM", "TAGS “Hi”"]
ARABIC = "مر\u200bحبا"  # right to left: the box between "مر" (right) and "حبا" (left)


def glyphs(view, block, span) -> QRectF:
    """Where Qt drew the characters of `span` (block-relative UTF-16 range), in viewport coordinates."""
    # subtle: the block's geometry first: it lays the block out if its room changed (a line of a
    # block not laid out again yet crashes Qt when asked for its glyphs).
    top_left = view.blockBoundingGeometry(block).translated(view.contentOffset()).topLeft()
    layout = block.layout()
    line = layout.lineForTextPosition(span[0])
    assert line.isValid()
    rects = [r.boundingRect() for r in line.glyphRuns(span[0], span[1] - span[0])]
    assert rects, (block.text(), span)
    united = rects[0]
    for r in rects[1:]:
        united = united.united(r)
    return united.translated(top_left + layout.position())


def without_room(view, block) -> None:
    block.layout().setFormats([])
    view.document().markContentsDirty(block.position(), block.length())


def show(qtbot, window, text: str) -> None:
    window.state.set_tokenizer("cl100k_base")
    window.documents.set_text(text)
    wait_settled(qtbot, window)


def check_rooms(view, room_keeper, metrics) -> None:
    """In `view`, the glyphs after each case's character start at least its box's width further
    right than without the room, and its box lies between the glyphs before and after it."""
    doc = view.document()
    drawn = invisible_marks(view, view.viewport().rect())[:len(CASES)]
    assert [d.label for d in drawn] == LABELS
    for k, ((n, before, after), d) in enumerate(zip(CASES, drawn)):
        block = doc.findBlockByNumber(n)
        assert block.text() == LINES[n]
        with_prev, with_next = glyphs(view, block, before), glyphs(view, block, after)
        without_room(view, block)
        bare_prev, bare_next = glyphs(view, block, before), glyphs(view, block, after)
        room_keeper.refresh(block)
        assert glyphs(view, block, after) == with_next  # the room is back, as it was
        width = box_width(metrics, d.label)
        assert with_next.left() - bare_next.left() >= width, (d.label, bare_next, with_next)
        # Moved by exactly the rooms before it on its line (after the PDF: the override's too).
        rooms = sum(room(metrics, LABELS[j]) for j in range(k + 1) if CASES[j][0] == n)
        assert abs(with_next.left() - bare_next.left() - rooms) <= 1
        # The box covers no glyph: it starts after the letters before it end (as drawn without
        # the room: a soft hyphen's room is the letter before it) and ends before the next.
        assert d.box.left() >= with_prev.left() + bare_prev.width() - 0.5, d.label
        assert d.box.right() <= with_next.left() + 0.5, d.label
        assert d.box.top() >= with_next.top() and d.box.bottom() <= with_next.bottom()


def test_each_box_has_room_and_covers_no_glyph(qtbot, window):
    text = "\n".join(LINES) + "\n" + ARABIC + "\n"
    show(qtbot, window, text)
    editor = window.editor
    assert editor.user_text() == text and window.state.result.encoding.text == text  # room, not text
    metrics = QFontMetricsF(marker_font(editor.font()))
    check_rooms(editor, editor.invisible_room, metrics)
    # Right to left: the box sits between the two letters around the character, which moved apart.
    block = editor.document().findBlockByNumber(len(LINES))
    box = [d for d in invisible_marks(editor, editor.viewport().rect()) if d.label == "ZWSP"][-1].box
    right, left = glyphs(editor, block, (1, 2)), glyphs(editor, block, (3, 4))
    assert left.right() <= box.left() + 0.5 and box.right() <= right.left() + 0.5
    assert right.left() - left.right() >= box_width(metrics, "ZWSP")


def test_compare_panes_share_the_room(qtbot, window):
    show(qtbot, window, "\n".join(LINES) + "\n")
    window.compare.set_tokenizers(["cl100k_base", "gpt2"])
    window.compare.set_active(True)
    wait_settled(qtbot, window)
    qtbot.waitUntil(lambda: window.compare.up_to_date, timeout=30_000)
    for pane in window.compare.panes:
        check_rooms(pane, window.editor.invisible_room, QFontMetricsF(marker_font(pane.font())))


def test_a_click_after_a_box_puts_the_caret_after_the_character(qtbot, window):
    """After the box, the caret stands after the character (a soft hyphen's, which Qt lays out with
    no width of its own, at the same place as the caret before it: either is right there)."""
    show(qtbot, window, "zero\u200bwidth soft\u00adhyphen a \ufeffBOM\n")
    editor = window.editor
    drawn = {d.label: d for d in invisible_marks(editor, editor.viewport().rect())}
    for label, at in (("ZWSP", 4), ("SHY", 15), ("BOM", 25)):
        box = drawn[label].box
        y = int(box.center().y())
        qtbot.mouseClick(editor.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(int(box.right()) + 2, y))
        assert editor.textCursor().position() in ((at, at + 1) if label == "SHY" else (at + 1,)), label
        assert editor.cursorRect().left() >= box.right() - 1  # the caret is drawn after the box
        if label == "SHY":  # (its room is the "t" before it: the left of the box is the t's right half)
            continue
        qtbot.mouseClick(editor.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(int(box.left()) - 2, y))
        assert editor.textCursor().position() == at, label
        assert editor.cursorRect().right() <= box.left() + 1


def test_typing_gives_room_and_deleting_takes_it_away_without_an_edit(qtbot, window):
    show(qtbot, window, "zerowidth\nplain line\n")
    editor = window.editor
    doc = editor.document()
    block = doc.firstBlock()
    changes = []
    doc.contentsChange.connect(lambda *a: changes.append(a))
    edits = editor.edit_count
    cursor = editor.textCursor()
    cursor.setPosition(4)
    editor.setTextCursor(cursor)
    type_text(editor, "\u200b")
    assert changes == [(4, 0, 1)] and editor.edit_count == edits + 1  # the room is no edit
    metrics = QFontMetricsF(marker_font(editor.font()))
    ranges = block.layout().formats()
    assert [(r.start, r.length, r.format.fontLetterSpacing()) for r in ranges] == [(4, 1, room(metrics, "ZWSP"))]
    assert not doc.findBlockByNumber(1).layout().formats()  # the other line is not touched
    x = editor.cursorRect().left()  # the caret, after the ZWSP: the box's room before it
    cursor.setPosition(4)
    assert x - editor.cursorRect(cursor).left() >= box_width(metrics, "ZWSP")
    editor.textCursor().deletePreviousChar()
    assert block.text() == "zerowidth" and block.layout().formats() == []
    editor.undo()
    assert block.text() == "zero\u200bwidth" and len(block.layout().formats()) == 1
    # A paste of several lines: each line holding one gets its room, the others none.
    editor.moveCursor(QTextCursor.MoveOperation.End)
    editor.insertPlainText("one\nt\u00adwo\nthree\nfo\u202eur\n")
    rooms = [len(doc.findBlockByNumber(n).layout().formats()) for n in range(doc.blockCount())]
    assert rooms == [1, 0, 0, 1, 0, 1, 0]


def test_a_bigger_font_makes_bigger_rooms(qtbot, window):
    show(qtbot, window, "zero\u200bwidth\n")
    editor = window.editor

    def spacing() -> float:
        ranges = editor.document().firstBlock().layout().formats()
        return ranges[0].format.fontLetterSpacing()

    small = spacing()
    window.state.set_font(size=editor.font_size() + 8)
    qtbot.waitUntil(lambda: spacing() > small + 4, timeout=5_000)
    assert spacing() == room(QFontMetricsF(marker_font(editor.document().defaultFont())), "ZWSP")


def test_the_legend_says_what_a_box_means(qtbot, window):
    entry = window.legend.findChild(type(window.legend.entries[-1]), "legend_invisible")
    assert entry is not None and entry.isVisible()  # shown whatever the text: the strip never moves
    assert "invisible or bidi-control character" in entry.toolTip() and "Hover" in entry.toolTip()
    assert entry.width() >= entry.sizeHint().width() - 1


def test_a_soft_hyphens_room_is_the_letter_before_it_with_its_accent(qtbot, window):
    """Qt gives a soft hyphen inside a line no width whatever its format, so its room is the letter
    before it, with that letter's combining accent (a format boundary would part them)."""
    show(qtbot, window, "cafe\u0301\u00adteria\n\u00adstart\n")
    editor = window.editor
    metrics = QFontMetricsF(marker_font(editor.font()))
    first, second = editor.document().firstBlock(), editor.document().firstBlock().next()
    ranges = first.layout().formats()
    assert [(r.start, r.length, r.format.fontLetterSpacing()) for r in ranges] == [(3, 2, room(metrics, "SHY"))]
    box = invisible_marks(editor, editor.viewport().rect())[0].box
    assert box.left() >= glyphs(editor, first, (3, 5)).left() + 3 and box.right() <= glyphs(editor, first, (6, 7)).left() + 0.5
    assert second.layout().formats() == []  # first on its line: no letter before it, no room
