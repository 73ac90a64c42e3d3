"""The Learn view with the real tokenizing server: for every step, the table shows the lecture's
printed values and beside them what the app computes (the same values the core computes in this
process), with ✓ wherever the step's own text reproduces the lecture; a step on the user's text
agrees once the lecture's own text is pasted; Previous / Next walk the steps, and "Load This Step"
emits the step and its text."""

from __future__ import annotations


import pytest

from tokexplorer.core.lesson.chapters import all_steps, step_by_key
from tokexplorer.core.lesson.check import check_step, shorten, step_text
from tokexplorer.core.registry import get_builtin
from tokexplorer.gui.panels.learn import LearnView
from tokexplorer.gui.services.server_link import ServerLink
from tokexplorer.gui.state import AppState

STEPS = all_steps()


@pytest.fixture(scope="module")
def state():
    state = AppState()
    state.server = ServerLink()
    return state


@pytest.fixture
def view(qtbot, state):
    view = LearnView(state)
    qtbot.addWidget(view)
    view.resize(1100, 700)
    view.show()
    qtbot.waitUntil(lambda: view.up_to_date, timeout=30_000)
    return view


def show(qtbot, view, key: str) -> None:
    view.select_step(key)
    qtbot.waitUntil(lambda: view.up_to_date and view.current.key == key, timeout=60_000)


@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.key)
def test_each_step_shows_the_lecture_beside_the_app(qtbot, view, step):
    show(qtbot, view, step.key)
    expected = check_step(step, step_text(step), get_builtin)  # the core, in this process
    rows = view.shown_rows()
    assert len(rows) == len(step.numbers) == len(expected)
    for (mark, label, lecture, app), number, core in zip(rows, step.numbers, expected):
        assert label == number.label
        assert lecture == (shorten(number.printed_text()) if number.lecture is not None else "(printed none)")
        assert app == shorten(core.app)
        assert mark == {True: "✓", False: "✗", None: ""}[core.agrees]
        if number.lecture is not None and step.source.kind != "yours":
            assert mark == "✓", (step.key, label, lecture, app)  # the step claims agreement: it holds


def test_the_numbers_a_student_checks(qtbot, view):
    def app(key: str) -> dict[str, str]:
        show(qtbot, view, key)
        return {label: value for _, label, _, value in view.shown_rows()}

    assert app("unicode/code-points")['[ord(x) for x in "hello"]'] == "[104, 101, 108, 108, 111]"
    assert app("unicode/utf")['list("h".encode("utf-16"))'] == "[255, 254, 104, 0]"
    special = app("special/endoftext")
    assert special["len(encoder)"] == "50257" and special["encoder['<|endoftext|>']"] == "50256"
    assert special["ids of the text"].count("50256") == 1
    cl100k = app("special/cl100k")
    assert cl100k["len(enc)"] == "100277" and cl100k["ENDOFTEXT"] == "100257"
    python = app("tiktoken/python")
    assert int(python["gpt2 tokens"]) == len(get_builtin("gpt2").encode(step_text(step_by_key("tiktoken/python"))).ids)
    assert int(python["gpt2 tokens"]) > int(python["cl100k_base tokens"])
    assert app("tiktoken/spaces")["cl100k_base"] == "[262, 24748, 1917, 12340]"
    show(qtbot, view, "tiktoken/spaces")
    assert view.status.text() == "2 of 2 of the lecture's numbers agree on this text."


def test_a_step_on_your_text_agrees_once_the_lectures_text_is_pasted(qtbot, view, lecture_article):
    article = lecture_article
    show(qtbot, view, "bpe/twenty-merges")
    assert view.yours_row.isVisible()
    assert [row[0] for row in view.shown_rows()] == ["✗"] * 4  # the UDHR stand-in is not the article
    assert "does not ship: paste or open it to compare" in view.notes.text()
    view.paste.setPlainText(article)
    qtbot.waitUntil(lambda: view.up_to_date and view.step_text() == article and view.shown_rows()[0][3] == "24597",
                    timeout=30_000)
    rows = view.shown_rows()
    assert [row[0] for row in rows] == ["✓"] * 4
    assert [row[3] for row in rows[:3]] == ["24597", "19438", "1.27"]
    assert not view.notes.isVisible()
    # The text stays with its step: back on it after another step, it is still the article.
    view.next_step()
    qtbot.waitUntil(lambda: view.up_to_date and view.current.key == "decoding/replace", timeout=30_000)
    view.previous_step()
    qtbot.waitUntil(lambda: view.up_to_date and view.current.key == "bpe/twenty-merges", timeout=30_000)
    assert view.paste.toPlainText() == article and view.shown_rows()[1][3] == "19438"


def test_load_emits_the_step_and_its_text(qtbot, view):
    show(qtbot, view, "regex/spaces")
    assert not view.yours_row.isVisible()
    with qtbot.waitSignal(view.step_opened, timeout=5_000) as opened:
        view.load_button.click()
    step, text = opened.args
    assert step.key == "regex/spaces" and step.tokenizer == "gpt2" and step.view == "chunks"
    assert text == step.source.text
    show(qtbot, view, "vocab-size/hindi")
    with qtbot.waitSignal(view.step_opened, timeout=5_000) as opened:
        view.load_step()
    assert opened.args[1] == step_text(step_by_key("vocab-size/hindi")) and "मानव" in opened.args[1]
    assert "udhr/udhr_hin.txt" in view.source.text()


def test_previous_and_next_walk_every_step(qtbot, view):
    show(qtbot, view, STEPS[0].key)
    assert not view.previous_button.isEnabled()
    seen = [view.current.key]
    while view.next_button.isEnabled():
        view.next_step()
        seen.append(view.current.key)
    assert seen == [s.key for s in STEPS]
    view.previous_step()
    assert view.current is STEPS[-2]
    qtbot.waitUntil(lambda: view.up_to_date, timeout=60_000)


def test_choosing_a_chapter_opens_its_first_step(qtbot, view):
    top = view.chapters.topLevelItem(6)  # SentencePiece
    view.chapters.setCurrentItem(top)
    assert view.current.key == "sentencepiece/train"
    assert "7 of 9" in view.where.text()


def test_editor_text_without_a_text(qtbot, view):
    show(qtbot, view, "bpe/pair-counts")
    view.use_editor_text()
    assert view.status.text() == "The editor has no text yet."


def test_the_window_loads_a_step(qtbot, make_window):
    """Load This Step in the window: the step's text as a new untitled text, its tokenizer and
    policy, its view in front."""
    from tokexplorer.gui.workspaces import in_front

    window = make_window()
    window.show_view("learn", switch=True)
    learn = window.learn
    assert in_front(window.views["learn"])
    show(qtbot, learn, "regex/spaces")
    learn.load_button.click()
    step = step_by_key("regex/spaces")
    qtbot.waitUntil(lambda: window.state.result is not None and window.state.tokenizer == "gpt2"
                    and window.state.result.encoding.text == step.source.text, timeout=30_000)
    assert window.state.path is None and in_front(window.views["chunks"])
    assert window.banner.label.text().startswith("Runs of spaces")
    show(qtbot, learn, "special/endoftext")
    learn.load_step()
    qtbot.waitUntil(lambda: window.state.result is not None and window.state.effective_policy == "all"
                    and "<|endoftext|>" in window.state.result.encoding.text
                    and window.state.result.tokenizer == "gpt2", timeout=30_000)
    assert 50256 in window.state.result.encoding.id_array.tolist()
    # A step on your text takes the editor's text.
    show(qtbot, learn, "bpe/twenty-merges")
    learn.use_editor_text()
    qtbot.waitUntil(lambda: learn.up_to_date and learn.step_text() == window.state.result.encoding.text,
                    timeout=30_000)
