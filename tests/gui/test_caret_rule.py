"""One token at the caret for every view (`core.analysis.caret.token_at_caret`): at a boundary the
token after the caret, at the end of the text the last one. The Token IDs table's current row,
`state.caret` (which the merge tree, the trace and the inspector follow), the merge tree's token
and the inspector's all name the same token."""

from __future__ import annotations

from tokexplorer.core.registry import get_builtin
from tokexplorer.gui.panels import token_ids

from .helpers import wait_settled

TEXT = "Combining tokens"  # cl100k_base: "Comb" "ining" " tokens"


def put_caret(window, position16: int) -> None:
    cursor = window.editor.textCursor()
    cursor.setPosition(position16)
    window.editor.setTextCursor(cursor)


def ids_table_showing(qtbot, window, text: str):
    """The Token IDs view in front, up to date with `text` in cl100k_base."""
    window.show_view("ids")
    window.state.set_tokenizer("cl100k_base")
    window.documents.set_text(text)
    wait_settled(qtbot, window)
    table = window.token_table
    qtbot.waitUntil(lambda: table.up_to_date, timeout=5_000)
    return table


def test_every_view_names_the_same_token_at_the_caret(qtbot, window):
    window.show_view("ids")
    window.state.set_tokenizer("cl100k_base")
    window.documents.set_text(TEXT)
    wait_settled(qtbot, window)
    enc = get_builtin("cl100k_base").encode(TEXT)
    assert [enc.token_bytes[i] for i in range(len(enc))] == [b"Comb", b"ining", b" tokens"]
    table = window.token_table
    qtbot.waitUntil(lambda: table.up_to_date, timeout=5_000)
    # (position, the token's index): inside "Comb", at the boundary "Comb|ining", at the one
    # before " tokens", at the end of the text.
    for position, index in ((2, 0), (4, 1), (9, 2), (len(TEXT), 2), (0, 0)):
        put_caret(window, position)
        assert window.state.caret == index, position
        qtbot.waitUntil(lambda: table.currentIndex().row() == index, timeout=5_000)
    # The merge tree and the inspector follow the state's caret: at the boundary, "ining".
    window.show_view("merges")
    put_caret(window, 4)
    ining = enc.ids[1]
    qtbot.waitUntil(lambda: window.merge_tree.tree is not None and window.merge_tree.tree.id == ining,
                    timeout=10_000)
    assert table.currentIndex().row() == window.state.caret == 1


def test_the_table_returns_to_the_caret_when_the_hover_ends(qtbot, window):
    table = ids_table_showing(qtbot, window, TEXT)
    put_caret(window, 4)
    window.state.set_hovered(2)  # the mouse over " tokens" in the text
    assert table.currentIndex().row() == 2
    window.state.set_hovered(-1)  # it leaves: the caret's token again
    assert table.currentIndex().row() == 1


def test_a_selection_selects_the_rows_of_the_tokens_it_touches(qtbot, window):
    table = ids_table_showing(qtbot, window, TEXT)
    cursor = window.editor.textCursor()
    cursor.setPosition(2)  # from inside "Comb" ...
    cursor.setPosition(6, cursor.MoveMode.KeepAnchor)  # ... into "ining"
    window.editor.setTextCursor(cursor)
    selected = lambda: sorted(i.row() for i in table.selectionModel().selectedRows())  # noqa: E731
    qtbot.waitUntil(lambda: selected() == [0, 1], timeout=5_000)
    assert table.currentIndex().row() == 0  # the first of them current, not the caret's "ining"
    cursor.setPosition(0, cursor.MoveMode.KeepAnchor)
    cursor.setPosition(4)  # the selection gone: the caret's token again, "ining" at the boundary
    window.editor.setTextCursor(cursor)
    qtbot.waitUntil(lambda: selected() == [1], timeout=5_000)


def test_a_selection_of_very_many_tokens_selects_only_the_first_row(qtbot, window):
    """Qt draws a selected range row by row: a select-all on a book selected 300,000 rows and
    took seconds, so past SELECTED_ROWS tokens only the first token's row is selected."""
    table = ids_table_showing(qtbot, window, "word " * (token_ids.SELECTED_ROWS + 50))
    window.editor.selectAll()
    qtbot.waitUntil(lambda: [i.row() for i in table.selectionModel().selectedRows()] == [0], timeout=5_000)
    assert table.currentIndex().row() == 0
