"""Text a custom split pattern leaves out is shown as dropped in the editor: no token's colour,
struck through, and every token painted over its own text."""

from __future__ import annotations

from tokexplorer.core.training.bpe import train
from tokexplorer.core.files.minbpe import save_minbpe
from tokexplorer.server.tokenized import DROPPED

from .helpers import wait_settled


def test_dropped_text_is_painted_as_dropped_and_tokens_over_their_text(qtbot, window, tmp_path):
    tok = train("hi there, the other thing there. hi there! " * 20, 270, pattern="[a-z]+", name="az")
    save_minbpe(tok, tmp_path / "az")
    window.documents.open_tokenizer(tmp_path / "az.model")
    qtbot.waitUntil(lambda: window.state.tokenizer.startswith("az"), timeout=10_000)
    window.documents.set_text("hi, there!")
    wait_settled(qtbot, window)
    result = window.state.result
    assert result.encoding.dropped == ((2, 4), (9, 10))
    drawn = window.editor.drawn_tokens()
    assert sorted((s, t) for s, t, _, f in drawn if f & DROPPED) == [(2, 4), (9, 10)]
    text = "hi, there!"
    tokens = [(s, t) for s, t, _, f in drawn if not f & DROPPED]
    assert "".join(text[s:t] for s, t in tokens) == "hithere"  # "there" painted at 4:9, not 2:7
    window.editor.viewport().grab()  # painted with the dropped marks
    dropped_entry = next(e for e in window.legend.entries if e.label == "dropped")
    assert dropped_entry.isVisible()  # the legend says what the strike means while it is shown
    window.state.set_tokenizer("cl100k_base")
    wait_settled(qtbot, window)
    assert not dropped_entry.isVisible()
