"""The Chat view with a hostile chat template (a tokenizer.json whose tokenizer_config.json has
it): the view shows the template's message, never stays blank, and counts the next conversation
as usual (the server was not held)."""

from __future__ import annotations

import json
import shutil

import pytest

from tokexplorer.core.chat.conversation import Message
from tokexplorer.core.registry import DEEPSEEK_V4
from tokexplorer.gui.panels.chat import ChatView
from tokexplorer.gui.services.server_link import ServerLink
from tokexplorer.gui.state import AppState

NORMAL = ("{{ bos_token }}{% for m in messages %}<｜{{ m.role | capitalize }}｜>{{ m.content }}"
          "{% endfor %}{% if add_generation_prompt %}<｜Assistant｜>{% endif %}")


def tokenizer_with(tmp_path, template: str):
    folder = tmp_path / str(abs(hash(template)))
    folder.mkdir()
    shutil.copy(DEEPSEEK_V4.location(), folder / "tokenizer.json")
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>",
        "chat_template": template}), encoding="utf-8")
    return folder / "tokenizer.json"


@pytest.fixture
def view(qtbot):
    state = AppState()
    state.server = ServerLink()
    state.set_tokenizer("cl100k_base")
    view = ChatView(state)
    qtbot.addWidget(view)
    view.show()
    return view


def use(qtbot, view, path) -> None:
    opened = []
    view.state.add_tokenizer_file(path, on_done=opened.append, on_error=opened.append)
    qtbot.waitUntil(lambda: bool(opened), timeout=30_000)
    view.state.set_tokenizer(opened[0])


@pytest.mark.parametrize("template, message", [
    ("{{ 'a' * 10**10 }}", "would be 10,000,000,000 long"),
    ("{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}",
     "loops too long|took longer than 5 s"),
])
def test_a_hostile_template_shows_its_message_and_the_next_count_works(qtbot, view, tmp_path, template, message):
    import re

    use(qtbot, view, tokenizer_with(tmp_path, template))
    qtbot.waitUntil(lambda: re.search(message, view.summary.text()) is not None, timeout=30_000)
    assert view.summary.text().startswith("⚠")
    assert view.rendered.toPlainText() == "" and view.table.rowCount() == 0

    use(qtbot, view, tokenizer_with(tmp_path, NORMAL))
    view.set_messages([Message("user", "Hi")])
    qtbot.waitUntil(lambda: view.count is not None and view.up_to_date, timeout=30_000)
    assert view.count.text == "<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜>"
    assert "tokens" in view.summary.text() and not view.summary.text().startswith("⚠")
