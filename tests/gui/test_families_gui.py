"""The new families in the window: the picker lists the new built-ins, and a tokenizer.json or a
.gguf file opened with File > Open Tokenizer colours the text with the library's ids."""

from __future__ import annotations

import base64

import pytest

from tokexplorer.core.encoding import TokenFlag
from tokexplorer.core.registry import builtin_names, get_builtin

from ..core.family_peers import NEW_BUILTINS, gguf_from_tokenizer_json, train_byte_level_bpe
from .helpers import type_text, wait_settled

TEXT = "Hi wörld 👋 ok"


@pytest.fixture(scope="module")
def bpe_files(corpora, tmp_path_factory):
    folder = tmp_path_factory.mktemp("gui-families")
    bpe = train_byte_level_bpe(corpora, folder / "tokenizer.json")
    return bpe, gguf_from_tokenizer_json(bpe, folder / "model.gguf")


def test_picker_lists_every_builtin_and_a_new_one_encodes(qtbot, window):
    box = window.tokenizer_box
    assert all(box.findText(name) >= 0 for name in builtin_names())
    assert all(name in builtin_names() for name in NEW_BUILTINS)
    window.state.set_tokenizer("qwen2.5")
    type_text(window.editor, "Cafe\u0301 ok")
    wait_settled(qtbot, window)
    enc = window.state.result.encoding
    assert window.state.tokenizer == "qwen2.5" and enc.text == "Cafe\u0301 ok"
    assert any(f & TokenFlag.NORMALIZED for f in enc.flags.tolist())


@pytest.mark.parametrize("which", [0, 1], ids=["tokenizer.json", "gguf"])
def test_open_tokenizer_json_and_gguf(qtbot, window, bpe_files, which):
    from tokenizers import Tokenizer

    path = bpe_files[which]
    window.documents.open_tokenizer(path)
    shown = f"{path.name} ({path.parent.name})"  # "tokenizer.json", "model.gguf": the folder says which
    qtbot.waitUntil(lambda: window.state.tokenizer == shown, timeout=20_000)
    type_text(window.editor, TEXT)
    wait_settled(qtbot, window)
    enc = window.state.result.encoding
    assert enc.ids == Tokenizer.from_file(str(bpe_files[0])).encode(TEXT, add_special_tokens=False).ids
    assert b"".join(enc.token_bytes) == TEXT.encode("utf-8")
    assert enc.ends[-1] == len(TEXT)
    assert window.tokenizer_box.findText(shown) >= 0


def test_a_bad_tokenizer_json_is_reported(qtbot, window, tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"version": "1.0", "normalizer": null, "model": {"type": "Magic"}}')
    window.documents.open_tokenizer(bad)
    qtbot.waitUntil(lambda: window.banner.kind == "error", timeout=10_000)
    assert "tokenizer.json" not in window.state.catalog.names()


def test_a_tiktoken_file_shows_tiktokens_encode(qtbot, window, tmp_path):
    """A .tiktoken file opened in the window: what it shows is tiktoken's encode, through typing
    and edits."""
    cl100k = get_builtin("cl100k_base")
    path = tmp_path / "mine.tiktoken"
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in cl100k.mergeable_ranks.items()))
    name = window.state.add_tokenizer_file(path)
    window.state.set_tokenizer(name)
    type_text(window.editor, "    hello world!!! naïve 🙂")
    window.editor.textCursor().insertText("\nprint('x')")
    wait_settled(qtbot, window)
    result = window.state.result
    assert result.tokenizer == name
    text = result.encoding.text
    assert list(result.encoding.ids) == cl100k.tiktoken_encoding.encode(text)
