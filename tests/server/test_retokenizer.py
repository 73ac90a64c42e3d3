"""The server's re-tokenization without widgets or a process: every result equals a full encode, colours equal
a full recolouring, and nothing outside the reported changed range differs from before."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tokexplorer.core.registry import get_builtin
from tokexplorer.core.token_colours import colour_indices
from tokexplorer.core.positions import TextMirror, utf16_len
from tokexplorer.core.tokenizer import special_spans
from tokexplorer.server.documents import Retokenizer


BUILTINS = ["gpt2", "cl100k_base", "o200k_base", "llama-sp"]
ALPHABET = st.sampled_from(list("abv  \n\t.'1😀é𝕏l"))
# Pieces of text, some spelling special tokens (or parts of them): refused under "refuse".
PIECES = st.sampled_from(list("abv  \n\t.'1😀é𝕏l") + ["<|endoftext|>", "<s>", "</s>", "<|", "|>"])


def texts(max_size: int):
    return st.lists(PIECES, max_size=max_size).map("".join)


@pytest.mark.parametrize("name", BUILTINS)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=texts(40), edits=st.lists(
    st.tuples(st.floats(0, 1), st.integers(0, 3), texts(4)), min_size=1, max_size=6))
def test_retokenizer_equals_full_encode(name, start, edits):
    tok = get_builtin(name)
    retok = Retokenizer()
    old, old_colours, _, _ = retok.run(tok, "refuse", start)
    text = start
    for where, removed, inserted in edits:
        p = int(where * len(text))
        text = text[:p] + inserted + text[p + removed:]
        enc, colours, changed, refused = retok.run(tok, "refuse", text)
        full = tok.encode(text, allowed_special="none")
        assert refused == special_spans(tok.special_tokens, text)  # found again near the edit only
        assert enc.ids == full.ids and enc.spans == full.spans
        assert colours.tolist() == colour_indices(np.array(full.ids, dtype=np.int64)).tolist()
        if changed is not None:  # tokens (and colours) outside the range are the old ones, shifted
            # (Tokens that cover no character, such as SentencePiece's lone dummy-prefix "▁" at
            # the start, are never painted, so they do not count.)
            c0, c1 = changed
            new_tokens = [(i, s, e, c) for i, (s, e), c in zip(enc.ids, enc.spans, colours.tolist()) if e > s]
            old_tokens = [(i, s, e, c) for i, (s, e), c in zip(old.ids, old.spans, old_colours.tolist()) if e > s]
            assert [t for t in new_tokens if t[2] <= c0] == [t for t in old_tokens if t[2] <= c0]
            shift = len(text) - len(old.text)
            moved = [(i, s + shift, e + shift, c) for i, s, e, c in old_tokens if s + shift >= c1]
            assert [t for t in new_tokens if t[1] >= c1] == moved
        old, old_colours = enc, colours


@given(st.text(ALPHABET, max_size=30), st.lists(st.tuples(st.floats(0, 1), st.integers(0, 3), st.text(ALPHABET, max_size=3)), max_size=8))
def test_text_mirror_follows_utf16_edits(text, edits):
    mirror = TextMirror(text)
    for where, removed, inserted in edits:
        p = int(where * len(text))
        q = min(len(text), p + removed)
        p16, q16 = utf16_len(text[:p]), utf16_len(text[:q])
        text = text[:p] + inserted + text[q:]
        mirror.apply(p16, q16 - p16, inserted)
        assert mirror.text == text and mirror.len16 == utf16_len(text)
        # its probes find the text where Qt's positions say it is, and nothing else there
        k = int(where * len(text))
        assert mirror.agrees([(utf16_len(text[:k]), text[k:k + 3]), (utf16_len(text[:p]), text[p:p + 2])])
        assert not mirror.agrees([(utf16_len(text[:k]), text[k:k + 3] + "\x00")])


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=30, deadline=None)
@given(start=texts(40), steps=st.lists(st.tuples(
    st.sampled_from(["gpt2", "cl100k_base", "llama-sp", "o200k_base"]), st.sampled_from(["refuse", "all"]),
    st.floats(0, 1), st.integers(0, 3), texts(4)), min_size=1, max_size=8))
def test_switching_back_reuses_a_tokenizers_encoder(monkeypatch, start, steps):
    """Switching tokenizers (or policies) back and forth, with edits between: every result equals
    a fresh encode with its colours, and a tokenizer switched back to is brought up to date by its
    kept encoder: the whole text is encoded only for a (tokenizer, policy) not among the last
    three switched away from."""
    from tokexplorer.server import documents as worker

    made = []

    class Counted(worker.IncrementalEncoder):
        def __init__(self, tok, text, **kw):
            made.append((tok.name, kw.get("allowed_special")))
            super().__init__(tok, text, **kw)

    monkeypatch.setattr(worker, "IncrementalEncoder", Counted)
    retok, text = Retokenizer(), start
    expected, current, kept = [], None, []  # the whole encodes due; the pair shown; the ones kept
    for name, policy, where, removed, inserted in steps:
        pair = (name, "none" if policy == "refuse" else "all")
        if pair != current:
            if pair in kept:
                kept.remove(pair)
            else:
                expected.append(pair)
            if current is not None:
                kept = (kept + [current])[-3:]
            current = pair
        p = int(where * len(text))
        text = text[:p] + inserted + text[p + removed:]
        tok = get_builtin(name)
        enc, colours, _, refused = retok.run(tok, policy, text)
        full = tok.encode(text, allowed_special="none" if policy == "refuse" else "all")
        assert enc.ids == full.ids and enc.spans == full.spans, (name, policy)
        assert colours.tolist() == colour_indices(full.id_array).tolist()
        assert refused == (special_spans(tok.special_tokens, text) if policy == "refuse" else ())
    assert made == expected


def test_the_special_token_finder_is_made_once_per_tokenizer():
    """Grouping DeepSeek's ~800 special tokens took about 1 ms: made at each keystroke, it was a
    third of the server's keystroke."""
    retok = Retokenizer()
    deepseek, tekken = get_builtin("deepseek-v4"), get_builtin("tekken")
    finder = retok.finder(deepseek)
    text = "a <｜begin▁of▁sentence｜> b"
    retok.run(deepseek, "refuse", text)
    retok.run(deepseek, "refuse", text + "c")
    assert retok.finder(deepseek) is finder
    assert finder.longest == max(map(len, deepseek.special_tokens))
    assert finder.spans(text) == special_spans(deepseek.special_tokens, text) == ((2, 23),)
    assert retok.finder(tekken) is not finder  # another vocabulary: its own finder
    assert retok.finder(tekken).spans("<s>x</s>") == special_spans(tekken.special_tokens, "<s>x</s>")
