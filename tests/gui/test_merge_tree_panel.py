"""The merge-tree panel with real tokenizers: the tree under the caret, marking a node's token."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tokexplorer.core.registry import get_builtin

from .helpers import wait_settled


def open_text(qtbot, window, tokenizer: str, text: str) -> None:
    window.show_view("merges")
    window.state.set_tokenizer(tokenizer)
    window.documents.set_text(text)
    wait_settled(qtbot, window)


def put_caret(window, position16: int) -> None:
    cursor = window.editor.textCursor()
    cursor.setPosition(position16)
    window.editor.setTextCursor(cursor)


def shown(panel, token_id: int) -> bool:
    return panel.tree is not None and panel.tree.id == token_id and len(panel.items) > 0


def test_caret_token_tree_has_tiktokens_leaves_and_ranks(qtbot, window):
    open_text(qtbot, window, "gpt2", "he said hello and hello")
    panel = window.merge_tree
    put_caret(window, 10)  # inside " hello" (characters 7..13)
    qtbot.waitUntil(lambda: shown(panel, 23748), timeout=10_000)
    enc = get_builtin("gpt2").tiktoken_encoding
    nodes = [item.node for item in panel.items]
    assert [n.bytes for n in nodes if n.is_leaf] == [b" ", b"h", b"e", b"l", b"l", b"o"]
    assert all(n.rank == enc.encode_single_token(n.bytes) for n in nodes)
    assert [n.text for n in nodes[:3]] == [" hello", " hell", " he"]
    # Boxes of one level never overlap, and children sit below their parent.
    rects = [item.rect() for item in panel.items]
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert not (a.intersects(b) and a.top() == b.top())
    assert "id 23748" in panel.title.text() and "rank 23748" in panel.title.text()


def test_clicking_a_node_marks_its_occurrences(qtbot, window):
    open_text(qtbot, window, "gpt2", "he said hello and hello")
    panel = window.merge_tree
    put_caret(window, 10)
    qtbot.waitUntil(lambda: shown(panel, 23748), timeout=10_000)
    he = next(item for item in panel.items if item.node.text == "he")
    point = panel.view.mapFromScene(he.sceneBoundingRect().center())
    qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert window.state.marked == 258
    marks = [(s.cursor.selectionStart(), s.cursor.selectionEnd()) for s in window.editor.extraSelections()]
    assert marks == [(0, 2)]  # "he" at the start is a token; the "he" inside " hello" is not
    assert "1 of the text's tokens" in panel.status.text()
    root = panel.items[0]
    qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton,
                     pos=panel.view.mapFromScene(root.sceneBoundingRect().center()))
    assert window.state.marked == 23748
    marks = [(s.cursor.selectionStart(), s.cursor.selectionEnd()) for s in window.editor.extraSelections()]
    assert marks == [(7, 13), (17, 23)]


def test_sentencepiece_tree_and_a_tokenizer_without_one(qtbot, window, tmp_path):
    open_text(qtbot, window, "llama-sp", "hello there")
    panel = window.merge_tree
    sp = get_builtin("llama-sp")
    hell = sp.encode("hello").ids[0]  # "▁hell" + "o"
    put_caret(window, 2)
    qtbot.waitUntil(lambda: shown(panel, hell), timeout=10_000)
    leaves = [n.node for n in panel.items if n.node.is_leaf]
    assert [n.text for n in leaves] == [" ", "h", "e", "l", "l"]  # characters, not bytes
    assert panel.items[0].node.rank == round(-sp.score(hell))
    from tokexplorer.core.training.sentencepiece import llama2_options, save_sentencepiece, train_sentencepiece

    unigram = train_sentencepiece("hello world\nhello there\n" * 50,
                                  llama2_options(12, "unigram", byte_fallback=False))
    path = save_sentencepiece(unigram, tmp_path / "uni")[0]
    name = window.state.add_tokenizer_file(path)
    open_text(qtbot, window, name, "hello there")
    put_caret(window, 2)
    qtbot.waitUntil(lambda: "no merge tree" in panel.title.text(), timeout=10_000)
    assert "unigram" in panel.title.text() and not panel.items


def test_hidden_panel_waits_until_shown(qtbot, window):
    """A closed dock does no work; opening it shows the caret's token."""
    window.merge_dock.hide()
    window.state.set_tokenizer("gpt2")
    window.documents.set_text("he said hello")
    wait_settled(qtbot, window)
    put_caret(window, 10)
    assert window.merge_tree.tree is None and window.merge_tree.up_to_date
    window.show_view("merges")
    qtbot.waitUntil(lambda: shown(window.merge_tree, 23748), timeout=10_000)


def test_hover_previews_and_leaving_returns_to_the_caret(qtbot, window):
    open_text(qtbot, window, "gpt2", "he said hello and hello")
    panel = window.merge_tree
    put_caret(window, 10)
    qtbot.waitUntil(lambda: shown(panel, 23748), timeout=10_000)
    window.state.set_hovered(1)  # " said"
    qtbot.waitUntil(lambda: shown(panel, 531), timeout=10_000)
    window.state.set_hovered(-1)
    qtbot.waitUntil(lambda: shown(panel, 23748), timeout=10_000)


def overlapping_labels(panel) -> list[tuple[str, str]]:
    """Pairs of label lines (text, id or rank) whose drawn rectangles intersect, anywhere in the tree."""
    labels = [label for item in panel.items for label in item.labels]
    rects = [label.sceneBoundingRect() for label in labels]
    return [(labels[i].text(), labels[j].text()) for i in range(len(rects)) for j in range(i + 1, len(rects))
            if rects[i].intersects(rects[j])]


def test_sentencepiece_labels_never_overlap(qtbot, window):
    """llama-sp's " Chinese": leaves whose "id 28710" and "rank 28451" are wider than their one
    character once lay on top of each other; now each box is as wide as its label, and Fit keeps it so."""
    open_text(qtbot, window, "llama-sp", "The Chinese language")
    panel = window.merge_tree
    chinese = get_builtin("llama-sp").encode(" Chinese").ids[-1]
    put_caret(window, 6)
    qtbot.waitUntil(lambda: shown(panel, chinese), timeout=10_000)
    leaves = [item for item in panel.items if item.node.is_leaf]
    assert [item.node.text for item in leaves] == list(" Chinese")
    assert [label.text() for label in leaves[1].labels] == ["C", "id 28743", "rank 28484"]  # stacked lines
    assert overlapping_labels(panel) == []
    # every label inside its own box, so boxes keep their labels apart too
    assert all(item.sceneBoundingRect().contains(label.sceneBoundingRect())
               for item in panel.items for label in item.labels)
    panel.fit()
    scale = panel.view.transform().m11()
    assert 0.5 <= scale <= 1.0 and overlapping_labels(panel) == []
    # With the room a tree view has on its own, Fit shows the whole tree at a readable size.
    window.merge_dock.setFloating(True)
    window.merge_dock.resize(900, 600)
    qtbot.waitUntil(lambda: panel.view.viewport().height() > 400)
    panel.fit()
    visible = panel.view.mapToScene(panel.view.viewport().rect()).boundingRect()
    assert visible.contains(panel.scene.itemsBoundingRect()) and panel.view.transform().m11() >= 0.6


@pytest.mark.parametrize("tokenizer, text", [("gpt2", " SolidGoldMagikarp"), ("gpt2", " externalToEVA"),
                                             ("cl100k_base", " unconstitutional"), ("cl100k_base", ".DataGridViewTextBoxColumn")])
def test_long_trees_labels_never_overlap(qtbot, window, tokenizer, text):
    open_text(qtbot, window, tokenizer, text)
    panel = window.merge_tree
    token_id = get_builtin(tokenizer).encode(text).ids[0]
    put_caret(window, 3)
    qtbot.waitUntil(lambda: shown(panel, token_id), timeout=10_000)
    assert panel.tree.depth() >= 6
    assert b"".join(item.node.bytes for item in panel.items if item.node.is_leaf) == text.encode()
    assert overlapping_labels(panel) == []
