"""Samples and Learn steps in the workspaces (gui/workspaces.py `show_for_step`, Documents'
`view_wanted`): a compare sample or step goes to the Compare workspace; a step's view Learn does
not hold is a tab in Learn for that step only (Token IDs, Chunks, the inspector) or opens in its
own workspace (Training, Plots, Compare), and the Learn view says which; Learn's saved layout never
keeps a step's view."""

from __future__ import annotations

import pytest

from tokexplorer.core.lesson.chapters import all_steps
from tokexplorer.gui.workspaces import find_workspace, in_front

LEARN = find_workspace("Learn")
OUTSIDE = [s for s in all_steps() if not LEARN.holds(s.view)]
GUESTS = {"ids", "chunks", "inspector"}  # Explore's docks: beside the text, so a tab in Learn
AWAY = {"compare": "Compare", "training": "Train", "plots": "Train"}


def sample_action(window, question_start: str):
    samples = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Samples")
    return next(a for a in samples.actions() if a.text().startswith(question_start))


def shown_docks(window) -> set[str]:
    return {name for name, dock in window.workspaces.docks().items() if not dock.isHidden()}


def learn_docks(window) -> set[str]:
    return {v for g in LEARN.groups for v in g.views if v in window.views}


def load(qtbot, window, step) -> None:
    learn = window.learn
    learn.select_step(step.key)
    learn.load_button.click()
    qtbot.waitUntil(lambda: window.state.result is not None and window.state.result.encoding.text
                    == learn.step_text(), timeout=30_000)


def test_the_steps_outside_learn_are_the_ones_this_file_covers():
    assert {s.view for s in OUTSIDE} == GUESTS | set(AWAY)
    assert len(OUTSIDE) == 27  # of the lesson's 36 steps


def test_a_compare_sample_switches_to_compare(window, qtbot):
    assert window.workspaces.current.name == "Explore"
    sample_action(window, "Why was GPT-2 bad at Python?").trigger()
    assert window.workspaces.current.name == "Compare" and window.compare.active
    assert window.compare.names == ["gpt2", "cl100k_base"]
    window.workspaces.switch("Explore")  # and the panes stay with Compare
    assert not window.compare.active


def test_a_sample_for_the_editor_leaves_train_for_a_workspace_with_the_text(window, qtbot):
    window.workspaces.switch("Train")
    sample_action(window, "What happens when user text contains").trigger()
    assert window.workspaces.current.name == "Explore" and window.centralWidget().isVisible()
    assert not window.compare.active


@pytest.mark.parametrize("view", sorted(GUESTS))
def test_a_steps_view_from_explore_is_a_tab_in_learn_for_that_step(make_window, qtbot, view):
    window = make_window()
    window.workspaces.switch("Learn")
    step = next(s for s in OUTSIDE if s.view == view)
    load(qtbot, window, step)
    dock = window.views[view]
    assert window.workspaces.current.name == "Learn"
    assert in_front(dock) and dock in window.tabifiedDockWidgets(window.views["learn"])
    assert window.learn.loaded.text().startswith(f"{dock.windowTitle()}, a view of the Explore workspace, "
                                                 "is shown here as a tab for this step")
    assert window.statusBar().currentMessage() == window.learn.loaded.text()
    # The next step (its view, BPE by Hand, is Learn's own) sends the tab away.
    load(qtbot, window, next(s for s in all_steps() if s.view == "bpe"))
    assert shown_docks(window) == learn_docks(window) and in_front(window.views["bpe"])
    assert window.learn.loaded.isHidden()
    # So does leaving Learn, and its layout does not keep the tab: not after coming back, nor Reset.
    load(qtbot, window, step)
    window.workspaces.switch("Explore")
    assert in_front(dock) or view != "inspector"  # Explore shows it where Explore has it
    window.workspaces.switch("Learn")
    assert shown_docks(window) == learn_docks(window)
    assert in_front(window.views["learn"])  # the tab the guest joined, not the one beside it
    load(qtbot, window, step)
    window.workspaces.reset_action.trigger()
    assert shown_docks(window) == learn_docks(window)


def test_the_tab_is_not_saved_when_the_window_closes(make_window, qtbot):
    first = make_window()
    first.workspaces.switch("Learn")
    load(qtbot, first, next(s for s in OUTSIDE if s.view == "inspector"))
    assert not first.inspector_dock.isHidden()
    first.close()
    second = make_window()
    assert second.workspaces.current.name == "Learn"
    assert shown_docks(second) == learn_docks(second)


@pytest.mark.parametrize("step", [s for s in OUTSIDE if s.view in AWAY], ids=lambda s: s.key)
def test_a_step_whose_view_has_its_own_workspace_goes_there(make_window, qtbot, step):
    window = make_window()
    window.workspaces.switch("Learn")
    load(qtbot, window, step)
    home = AWAY[step.view]
    assert window.workspaces.current.name == home
    if step.view == "compare":
        assert window.compare.active
    else:
        assert in_front(window.views[step.view])
    title = window.views[step.view].windowTitle() if step.view != "compare" else "The compare view"
    assert window.learn.loaded.text() == (f"{title} is in the {home} workspace: the step opened there. "
                                          "Ctrl+3 comes back to Learn.")
    window.workspaces.actions["Learn"].trigger()  # Ctrl+3
    assert shown_docks(window) == learn_docks(window) and not window.compare.active
    assert in_front(window.views["learn"])
    assert not window.learn.loaded.isHidden()  # still says where the step's view is


def test_every_step_outside_learn_leaves_learn_as_the_table_has_it(window, qtbot):
    """All 27 in one window, each followed by the step after it (or Ctrl+3 when it went away)."""
    window.workspaces.switch("Learn")
    for step in OUTSIDE:
        load(qtbot, window, step)
        if step.view in GUESTS:
            assert window.workspaces.current.name == "Learn" and in_front(window.views[step.view]), step.key
            window.learn.next_step()
            window.learn.load_button.click()
            if window.workspaces.current.name != "Learn":  # the next step went away in turn
                window.workspaces.switch("Learn")
        else:
            assert window.workspaces.current.name == AWAY[step.view], step.key
            window.workspaces.switch("Learn")
        assert shown_docks(window) - learn_docks(window) <= ({window.learn.current.view} & GUESTS), step.key
