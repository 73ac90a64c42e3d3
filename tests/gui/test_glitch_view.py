"""The glitch-token view on the real GPT-2 vocabulary, scanned by the tokenizing server: Find
lists SolidGoldMagikarp with its source, the filter keeps one kind of reason, and choosing a row
picks the token for the merge tree and the inspector."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tokexplorer.gui.panels.glitch import GlitchView

from .helpers import wait_settled


def scanned(qtbot, window, tokenizer: str) -> GlitchView:
    window.state.set_tokenizer(tokenizer)
    wait_settled(qtbot, window)
    window.show_view("glitch", switch=True)
    view = window.glitch  # the window's own dock
    assert view.isVisible()
    progress = []
    view.progress.valueChanged.connect(progress.append)
    qtbot.mouseClick(view.find_button, Qt.MouseButton.LeftButton)
    assert not view.find_button.isEnabled()
    qtbot.waitUntil(lambda: view.report is not None, timeout=60_000)
    assert view.report.tokenizer == tokenizer and progress and progress[-1] == view.progress.maximum()
    assert view.find_button.isEnabled() and view.progress.isHidden()
    return view


def row_of(view: GlitchView, token_id: int) -> int:
    return view.shown_ids().index(token_id)


def test_gpt2_lists_solidgoldmagikarp_and_choosing_it_explains_it(qtbot, window):
    view = scanned(qtbot, window, "gpt2")
    row = row_of(view, 43453)
    model = view.model
    assert model.data(model.index(row, 1)) == "␣SolidGoldMagikarp"
    assert "reported under-trained (Rumbelow & Watkins 2023)" in model.data(model.index(row, 2))
    assert "UDHR in 56 languages" in view.info.text()

    window.show_view("merges", switch=True)
    chosen = []
    window.state.token_chosen.connect(chosen.append)
    index = model.index(row, 1)
    view.table.setCurrentIndex(index)
    qtbot.keyClick(view.table, Qt.Key.Key_Return)
    assert chosen == [43453]
    # the merge tree follows the chosen token: SolidGoldMagikarp's merges in GPT-2
    tree = window.merge_tree
    qtbot.waitUntil(lambda: tree.token_id == 43453 and tree.up_to_date and tree.tree is not None, timeout=20_000)
    view.table.scrollTo(index)
    centre = view.table.visualRect(index).center()
    # subtle: a view takes a double-click only on the row a press went to first, as a real one has
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    qtbot.mouseDClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    assert chosen == [43453, 43453]
    # ... and the inspector looks it up
    inspector = window.inspector
    assert inspector.decode_box.text() == "43453"
    qtbot.waitUntil(lambda: not inspector.decode_pending, timeout=20_000)
    assert "SolidGoldMagikarp" in inspector.decoded.text()


def test_the_filter_keeps_one_kind_of_reason(qtbot, window):
    view = scanned(qtbot, window, "gpt2")
    everything = len(view.shown_ids())
    view.filter.setCurrentIndex(view.filter.findData("special"))
    assert view.shown_ids() == [50256]
    view.filter.setCurrentIndex(view.filter.findData("reported under-trained"))
    shown = view.shown_ids()
    assert 43453 in shown and 50256 not in shown and len(shown) < everything
    view.filter.setCurrentIndex(view.filter.findData(""))
    assert len(view.shown_ids()) == everything


def test_a_new_tokenizer_clears_the_list(qtbot, window):
    view = scanned(qtbot, window, "gpt2")
    window.state.set_tokenizer("cl100k_base")
    assert view.shown_ids() == [] and view.report is None
    assert "cl100k_base" in view.title.text()
