"""The BPE-by-hand view on a window's text: the sorted pair counts, merges from the server, the tie
rule said where it decides, the selection, and the lecture's merge on typed numbers."""

from __future__ import annotations

import pytest
from tokexplorer.gui.panels.bpe_by_hand import BpeByHandView

from .helpers import wait_settled


@pytest.fixture
def view(qtbot, window):
    """The view beside a window (it is not docked there yet), shown, on the window's state."""
    view = BpeByHandView(window.state)
    qtbot.addWidget(view)
    view.resize(1100, 500)
    view.show()
    return view


def shown(qtbot, view, merges: int | None = None) -> None:
    qtbot.waitUntil(lambda: view.up_to_date and view.snapshot is not None
                    and (merges is None or len(view.snapshot.steps) == merges), timeout=20_000)


def rows(view, n: int) -> list[list[str]]:
    return [[view.table.item(r, c).text() for c in range(3)] for r in range(n)]


def test_table_merge_and_tie_on_a_known_text(qtbot, window, view):
    """'ab cd ab cd': ab, b␣, ␣c and cd occur twice each. The table lists them as sorted() does,
    cd first; minbpe's rule takes ab (met first), so its row is the bold one. Merging it makes 256:
    256 ␣ c d ␣ 256 ␣ c d, 11 bytes -> 9 ids."""
    window.documents.set_text("ab cd ab cd")
    wait_settled(qtbot, window)
    shown(qtbot, view)
    assert view.source == "ab cd ab cd"
    assert rows(view, 4) == [["2", "(99, 100)", "c + d"], ["2", "(98, 32)", "b + ␣"], ["2", "(97, 98)", "a + b"],
                             ["2", "(32, 99)", "␣ + c"]]
    assert view.table.item(2, 1).font().bold() and not view.table.item(0, 1).font().bold()
    assert "takes the one met first in the text, (97, 98); the sorted table lists (99, 100) first" in view.tie.text()
    assert view.snapshot.marks == (0, 6)  # a b at bytes 0 and 6 are highlighted
    view.merge_button.click()
    shown(qtbot, view, 1)
    assert view.snapshot.head == (256, 32, 99, 100, 32, 256, 32, 99, 100)
    assert "11 bytes → 9 ids after 1 merge: compression 1.22×" in view.summary.text()
    assert view.merges_list.count() == 1 and view.merges_list.item(0).text().startswith("256 ← (97, 98) a + b  ×2")
    assert "ab<sub>256</sub>" in view.sequence.text()
    view.count.setValue(20)
    view.merge_n_button.click()  # 5 more make the text one id: ab␣, ab␣c, ab␣cd, ab␣cd␣, all
    shown(qtbot, view, 6)
    assert view.snapshot.length == 1 and view.merges == 6 and "No pair is left" in view.summary.text()
    assert not view.merge_button.isEnabled() and view.merges_list.count() == 6
    view.reset_button.click()
    shown(qtbot, view, 0)
    assert view.snapshot.length == 11 and view.merge_button.isEnabled()


def test_selection_pattern_and_wide_characters(qtbot, window, view):
    """The selection alone is merged; GPT-4's pre-split keeps pairs inside chunks. '語語 👋👋':
    語 is e8 aa 9e, 👋 is f0 9f 91 8b; with the GPT-4 pattern ' 👋👋' is one chunk and '語語' another."""
    window.documents.set_text("xyz 語語 👋👋")
    wait_settled(qtbot, window)
    window.state.set_selection(4, 9)
    qtbot.waitUntil(lambda: view.source == "語語 👋👋", timeout=5_000)
    shown(qtbot, view)
    assert view.source_label.text() == "The selection: characters 4–9"
    view.pattern.setCurrentIndex(view.pattern.findData("gpt4"))
    shown(qtbot, view)
    snapshot = view.snapshot
    assert snapshot.chunk_starts == (0, 6) and snapshot.n_bytes == 15
    # 2 each: (232, 170), (170, 158), (240, 159), (159, 145), (145, 139); never (158, 32) across chunks
    assert [pair for _, pair in snapshot.table[:5]] == [(240, 159), (232, 170), (170, 158), (159, 145), (145, 139)]
    assert (1, (158, 232)) in snapshot.table and all(pair != (158, 32) for _, pair in snapshot.table)
    view.count.setValue(3)
    view.merge_n_button.click()
    shown(qtbot, view, 3)
    # 語 twice (256 = e8 aa, 257 = 語), then 👋's f0 9f (2 times) before 語語 (once)
    assert [s.pair for s in view.snapshot.steps] == [(232, 170), (256, 158), (240, 159)]
    assert view.snapshot.head == (257, 257, 32, 258, 145, 139, 258, 145, 139)
    assert "語<sub>257</sub>" in view.sequence.text() and "┃" in view.sequence.text()


def test_too_big_a_text_is_one_message(qtbot, window, view):
    view.source = "x" * 10_000_001
    view.reset()
    qtbot.waitUntil(lambda: view.up_to_date, timeout=20_000)
    assert view.snapshot is None and "at most 10,000,000 (10 MB)" in view.summary.text()


def test_lecture_merge_on_typed_numbers(qtbot, window, view):
    view.modes.setCurrentIndex(1)
    view.typed_button.click()
    qtbot.waitUntil(lambda: view.typed is not None, timeout=10_000)
    assert view.typed.merged == (5, 6, 99, 9, 1)
    assert "[5, 6, 99, 9, 1]" in view.typed_result.text()
    view.typed_pair.setText("6, eight")
    view.typed_button.click()
    qtbot.waitUntil(lambda: view.typed is None, timeout=10_000)
    assert "'eight' is not a whole number" in view.typed_result.text()


def test_empty_editor_hint_and_a_new_text_starts_over(qtbot, window, view):
    wait_settled(qtbot, window)
    qtbot.waitUntil(lambda: view.up_to_date, timeout=10_000)
    assert view.snapshot is None and view.source_label.text().startswith("Type or open a text")
    window.documents.set_text("aaab")
    wait_settled(qtbot, window)
    shown(qtbot, view)
    view.merge_button.click()
    shown(qtbot, view, 1)
    assert view.snapshot.head == (256, 97, 98)  # aa, then a b: the overlapping a a counts once
    window.documents.set_text("xyxy")
    wait_settled(qtbot, window)
    qtbot.waitUntil(lambda: view.source == "xyxy", timeout=5_000)
    shown(qtbot, view, 0)
    assert view.merges == 0 and view.snapshot.table == ((2, (120, 121)), (1, (121, 120)))


def test_the_pair_table_fits_a_narrow_dock(qtbot, window):
    """In a 350 px dock at 1.5 times the font the table's columns fit its width (no sideways
    scrolling) and each cell's tooltip is its row whole, with the bold row's reason."""
    from .narrow import narrow_dock

    window.documents.set_text("ab cd ab cd")
    wait_settled(qtbot, window)
    narrow_dock(qtbot, window, "bpe", scale=1.5)
    view = window.bpe_by_hand
    shown(qtbot, view)
    view.merge(1)
    shown(qtbot, view, merges=1)
    table = view.table
    assert sum(table.columnWidth(c) for c in range(3)) <= table.viewport().width()
    assert table.columnWidth(0) >= table.fontMetrics().horizontalAdvance("2")  # the count, whole
    tips = [table.item(0, c).toolTip() for c in range(3)]
    assert tips == ["2 × (256, 32) ab + ␣: the next merge takes this pair"] * 3, rows(view, 3)
    assert view.merges_list.item(0).toolTip() == view.merges_list.item(0).text()
