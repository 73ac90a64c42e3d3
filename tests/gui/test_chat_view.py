"""The Chat view with real tokenizers: its numbers are the core's (counted by a tokenizing server
the view asks; the expected ones here, by the core in the test's process), the rendered text is
coloured token by token under the text, a tokenizer without a chat format gets a message,
switching the tokenizer recounts."""

from __future__ import annotations

import json

import pytest
from PySide6.QtWidgets import QApplication

from tokexplorer.core.chat.conversation import Message, count_chat
from tokexplorer.core.registry import get_builtin
from tokexplorer.gui.panels.chat import ChatView
from tokexplorer.gui.services.server_link import ServerLink
from tokexplorer.gui.state import AppState

CONVERSATION = [Message("system", "Be brief."), Message("user", "안녕! 👋🏽 2+2?"),
                Message("assistant", "4"), Message("user", "Thanks")]


@pytest.fixture
def state():
    """A state with a link to the tokenizing server, as the main window gives its panels."""
    state = AppState()
    state.server = ServerLink()
    state.set_tokenizer("cl100k_base")
    return state


@pytest.fixture
def view(qtbot, state):
    view = ChatView(state)
    qtbot.addWidget(view)
    view.show()
    return view


def wait_for_count(qtbot, view, generation=None):
    generation = view.generation if generation is None else generation
    qtbot.waitUntil(lambda: view.count is not None and view.generation >= generation and view.up_to_date,
                    timeout=20_000)


def test_the_view_shows_the_cores_counts(qtbot, view):
    view.set_messages(CONVERSATION)
    qtbot.waitUntil(lambda: view.count is not None and len(view.count.parts) == 5, timeout=20_000)
    expected = count_chat(get_builtin("cl100k_base"), CONVERSATION)
    assert view.count.encoding.ids == expected.encoding.ids
    assert view.rendered.toPlainText() == expected.text
    table = [[view.table.item(r, c).text() for c in range(5)] for r in range(view.table.rowCount())]
    assert [int(row[2]) for row in table] == [p.tokens for p in expected.parts]
    assert sum(int(row[2]) for row in table) == expected.total
    assert table[-1][1] == "(reply prompt)"
    assert f"{expected.total:,} tokens" in view.summary.text()
    # One background per token, drawn as selections (the text keeps one format).
    selections = view.rendered.extraSelections()
    assert len(selections) == expected.total
    assert selections[0].cursor.selectedText() == "<|im_start|>"


def test_without_generation_prompt_and_on_another_tokenizer(qtbot, view):
    view.set_messages(CONVERSATION)
    wait_for_count(qtbot, view)
    view.prompt_box.setChecked(False)
    qtbot.waitUntil(lambda: view.count is not None and view.count.parts[-1].index == 3, timeout=20_000)
    view.state.set_tokenizer("o200k_base")
    qtbot.waitUntil(lambda: view.count is not None and view.count.format == "harmony", timeout=20_000)
    assert view.count.total == count_chat(get_builtin("o200k_base"), CONVERSATION,
                                          add_generation_prompt=False).total


def test_a_tokenizer_without_a_chat_format_gets_a_message(qtbot, view):
    wait_for_count(qtbot, view)
    view.state.set_tokenizer("gpt2")
    qtbot.waitUntil(lambda: "has no chat format" in view.summary.text(), timeout=20_000)
    assert view.table.rowCount() == 0 and view.rendered.toPlainText() == ""


def test_copy_json(qtbot, view):
    wait_for_count(qtbot, view)
    view.copy_json()
    data = json.loads(QApplication.clipboard().text())
    assert data["total"] == len(data["ids"]) == view.count.total
    assert [m["role"] for m in data["messages"]] == ["system", "user"]


def test_a_hidden_view_counts_only_once_shown(qtbot, state):
    view = ChatView(state)
    qtbot.addWidget(view)
    view.set_messages(CONVERSATION)
    qtbot.wait(300)
    assert view.count is None and view.generation == 0 and view.up_to_date  # hidden: no work
    view.show()
    qtbot.waitUntil(lambda: view.count is not None and view.up_to_date, timeout=20_000)
    assert view.count.total == count_chat(get_builtin("cl100k_base"), CONVERSATION).total


def test_a_new_message_scrolls_into_view_and_takes_the_typing(qtbot, view):
    """Add message under a conversation taller than its list: the new message is shown, not below the fold."""
    view.resize(700, 600)
    view.set_messages(CONVERSATION * 2)
    wait_for_count(qtbot, view)
    port = view.scroll.viewport()
    for _ in range(3):
        view.add_button.click()
        new = view._editors[-1]

        def shown() -> bool:
            top = new.mapTo(port, new.rect().topLeft())
            bottom = new.mapTo(port, new.rect().bottomRight())
            return port.rect().contains(top) and port.rect().contains(bottom)

        qtbot.waitUntil(shown, timeout=2_000)
    assert view.scroll.verticalScrollBar().value() > 0  # it had to scroll
    assert len(view.messages()) == 2 * len(CONVERSATION) + 3 and view.messages()[-1] == Message("user", "")
    assert QApplication.focusWidget() is view._editors[-1].content or not view.isActiveWindow()
