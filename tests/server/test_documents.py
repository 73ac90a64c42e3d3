"""The server's side of a document and the window's splice of its answers, without a process:
after any edits, what the window holds equals a fresh encode of the text (ids, spans, the editor's
UTF-16 spans, flags, colours, bytes), and each answer carries only what changed."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

from tokexplorer.core.positions import editor_prefix, utf16_len
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.token_colours import colour_indices
from tokexplorer.core.tokenizer import DisallowedSpecialError, special_spans
from tokexplorer.server.document_tokens import DocumentTokens, OutOfStep
from tokexplorer.server import protocol as p
from tokexplorer.core.training.bpe import train
from tokexplorer.server.columns import ARRAYS, REFUSED, TokenColumns, splice
from tokexplorer.server.documents import Document, token_columns

BUILTINS = ["gpt2", "cl100k_base", "o200k_base", "llama-sp", "qwen2.5", "deepseek-v4"]
PIECES = st.sampled_from(list("abv  \n\t.'1😀é𝕏l") + ["<|endoftext|>", "<s>", "\r\n", "👋🏽", "कि"])


def texts(max_size: int):
    return st.lists(PIECES, max_size=max_size).map("".join)


class Session:
    """A server document and the window's copy, talking by records as over the pipe."""

    def __init__(self, name: str, policy: str = "refuse"):
        self.tok, self.name, self.policy = get_builtin(name), name, policy
        self.server, self.window = Document(1), DocumentTokens()
        self.generation, self.text = 0, ""

    def send(self, delta: p.TextDelta):
        self.generation += 1
        request = p.Tokenize(1, self.generation, self.name, self.policy, delta)
        self.window.sent(self.generation, delta)
        assert self.server.apply(request)
        answer = self.server.tokenize(request, self.tok)
        return answer, self.window.apply(answer)

    def open(self, text: str):
        self.text = text
        return self.send(p.TextDelta(text, None, 0, utf16_len(text)))

    def edit(self, at: int, removed: int, inserted: str):
        """Replace `removed` code points at code point `at` (sent as UTF-16 positions)."""
        at16 = utf16_len(self.text[:at])
        removed16 = utf16_len(self.text[at:at + removed])
        self.text = self.text[:at] + inserted + self.text[at + removed:]
        return self.send(p.TextDelta(None, [(at16, removed16, inserted)], 0, utf16_len(self.text)))


def check_fresh(result, tok, text: str, policy: str) -> None:
    fresh = tok.encode(text, allowed_special="none" if policy == "refuse" else policy)
    enc = result.encoding
    assert enc.text == text
    assert list(enc.ids) == list(fresh.ids)
    assert enc.spans == fresh.spans
    assert list(enc.token_bytes) == list(fresh.token_bytes)
    assert enc.flags.tolist() == fresh.flags.tolist()
    flags = fresh.flags.copy()  # and the tokens over a special token the policy refuses
    for s, e in (special_spans(tok.special_tokens, text) if policy == "refuse" else ()):
        flags[np.searchsorted(fresh.ends, s, side="right"):np.searchsorted(fresh.starts, e, side="left")] |= REFUSED
    assert result.flags.tolist() == flags.tolist()
    assert result.colours.tolist() == colour_indices(fresh.id_array).tolist()
    prefix = editor_prefix(text, [])
    if prefix is None:
        prefix = np.zeros(len(text) + 1, dtype=np.int64)
    assert result.starts16.tolist() == (fresh.starts + prefix[fresh.starts]).tolist()
    assert result.ends16.tolist() == (fresh.ends + prefix[fresh.ends]).tolist()


def check_columns(session: Session) -> None:
    """Every column the window holds (byte spans and offsets too) is the one the server makes of
    a fresh encode of the whole text."""
    tok, text, policy = session.tok, session.text, session.policy
    fresh = tok.encode(text, allowed_special="none" if policy == "refuse" else policy)
    refused = special_spans(tok.special_tokens, text) if policy == "refuse" else ()
    want, _, _ = token_columns(fresh, colour_indices(fresh.id_array), np.zeros(0, dtype=np.int64), refused)
    held = session.window.columns
    for name in ARRAYS:
        assert getattr(held, name).tolist() == getattr(want, name).tolist(), name
    assert held.blob == want.blob


@pytest.mark.parametrize("name", BUILTINS)
@given(start=texts(30), edits=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 3), texts(3)), min_size=1,
                                       max_size=5))
def test_the_windows_splice_equals_a_fresh_encode(name, start, edits):
    session = Session(name)
    _, result = session.open(start)
    check_fresh(result, session.tok, start, "refuse")
    for where, removed, inserted in edits:
        at = int(where * len(session.text))
        answer, result = session.edit(at, removed, inserted)
        check_fresh(result, session.tok, session.text, "refuse")
        check_columns(session)
        assert answer.removed is not None  # a delta, not the whole text again


@pytest.mark.parametrize("name", ["gpt2", "llama-sp"])
@given(start=texts(30), batches=st.lists(st.lists(st.tuples(st.floats(0, 1), st.integers(0, 3),
                                                            st.sampled_from(["", "\r", "\n", "\r\n", "a", "😀"])),
                                                  min_size=1, max_size=4), min_size=1, max_size=4))
def test_several_edits_in_one_request_and_line_breaks_made_and_broken(name, start, batches):
    """Edits coalesced into one request (a paste, an undo), among them CRs and LFs that make and
    break "\r\n" pairs: the window's UTF-16 spans, which count a pair as one unit, stay right."""
    session = Session(name)
    session.open(start)
    for batch in batches:
        edits = []
        for where, removed, inserted in batch:
            at = int(where * len(session.text))
            removed = min(removed, len(session.text) - at)
            edits.append((utf16_len(session.text[:at]), utf16_len(session.text[at:at + removed]), inserted))
            session.text = session.text[:at] + inserted + session.text[at + removed:]
        _, result = session.send(p.TextDelta(None, edits, 0, utf16_len(session.text)))
        check_fresh(result, session.tok, session.text, "refuse")


@pytest.mark.parametrize("name", ["cl100k_base", "llama-sp"])
@given(start=texts(20), steps=st.lists(st.one_of(
    st.tuples(st.just("edit"), st.floats(0, 1), st.integers(0, 2), st.sampled_from(list("<|endoftext>s/ x"))),
    st.tuples(st.just("policy"), st.sampled_from(["refuse", "none", "all"])),
    st.tuples(st.just("tokenizer"), st.sampled_from(["gpt2", "cl100k_base", "llama-sp"]))), min_size=1, max_size=12))
def test_typing_a_special_token_and_switching_keeps_the_flags(name, start, steps):
    """A special token typed a character at a time (refused once whole), policies and tokenizers
    switched between edits: the window's flags are those of a fresh encode, REFUSED included."""
    session = Session(name)
    _, result = session.open(start)
    for step in steps:
        if step[0] == "edit":
            _, where, removed, inserted = step
            _, result = session.edit(int(where * len(session.text)), removed, inserted)
        else:
            if step[0] == "policy":
                session.policy = step[1]
            else:
                session.name, session.tok = step[1], get_builtin(step[1])
            _, result = session.send(p.TextDelta(None, [], 0, utf16_len(session.text)))
        if isinstance(result, p.Refused):
            continue
        check_fresh(result, session.tok, session.text, session.policy)


def test_a_keystroke_in_a_book_sends_a_few_tokens(corpora, monkeypatch):
    text = (corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:200_000]
    session = Session("cl100k_base")
    session.open(text)
    from tokexplorer.server import documents

    monkeypatch.setattr(documents, "token_columns", None)  # (made for the edited tokens only)
    from tokexplorer.core.incremental import encoder

    monkeypatch.setattr(encoder, "text_edit", None)  # (the keystroke as the editor made it: no diff of the texts)
    answer, result = session.edit(100_000, 0, "x")
    # the server's copy of the text is the encoder's: the 200 KB text is not put together twice
    assert session.server.retokenizer._encoder.encoding.text is session.server.mirror.text
    assert 1 <= len(answer.new) <= 40 and answer.removed <= 40  # a few tokens around the edit
    assert answer.shift == (1, 1, 1)
    check_fresh(result, session.tok, session.text, "refuse")


@pytest.mark.parametrize("name", ["gpt2", "llama-sp"])
def test_edits_after_crlf_lines_and_emoji_are_placed_in_editor_units(name):
    """A new token's editor position is counted from the text before it: one unit more per
    astral character, one less per "\\r\\n" (counted from whichever end of the text is nearer)."""
    session = Session(name, policy="none")
    session.open("".join(f"line {i} 👋🏽 naïve\r\n" if i % 3 else f"line {i}\n" for i in range(300)))
    n = len(session.text)
    crlf = [session.text.find("\r\n", a) for a in (n // 4, 3 * n // 4)]  # a line break in each half
    for at, removed, inserted in [(n // 5, 0, "x"), (4 * n // 5, 3, "y\r\n😀"), (n // 2, 0, "\r"),
                                  (n // 2 + 1, 0, "\n"), (n - 2, 0, "z"), (10, 1, ""),
                                  *((k + d, 0, "w") for k in crlf for d in (1, 2, 3))]:
        answer, result = session.edit(at, removed, inserted)
        assert answer.removed is not None and answer.first > 0  # only the tokens around the edit were sent
        check_columns(session)
    check_fresh(result, session.tok, session.text, "none")


def editor_positions_of(text: str) -> list[int]:
    prefix = editor_prefix(text, [])
    return list(range(len(text) + 1)) if prefix is None else (np.arange(len(text) + 1) + prefix).tolist()


@given(text=texts(40), order=st.randoms(use_true_random=False),
       edit=st.tuples(st.floats(0, 1), st.integers(0, 3), st.sampled_from(["", "\r", "\n", "\r\n", "a😀"])))
@example(text="ab\r\ncd\r\n", order=random.Random(0), edit=(0.0, 0, ""))  # (a pair in each half)
@example(text="😀\r\n👋🏽a\r\r\n\n😀\r\n", order=random.Random(1), edit=(0.5, 1, "\r\n"))
def test_a_code_points_editor_position_is_the_whole_texts(text, order, edit):
    """`Document.position16` (a search, and a count from the last position counted or the nearer
    end) against the editor's positions of every code point, found by a pass over the whole
    text, asked in any order, before and after an edit."""
    session = Session("gpt2")
    session.open(text)
    for _ in range(2):
        points = list(range(len(session.text) + 1))
        order.shuffle(points)
        want = editor_positions_of(session.text)
        assert [session.server.position16(p) for p in points] == [want[p] for p in points]
        where, removed, inserted = edit
        session.edit(int(where * len(session.text)), removed, inserted)


def test_an_edit_at_the_last_position_counted_counts_again():
    """Deleting the "\n" of a "\r\n" at the code point `position16` last counted from: the pair
    before it is gone, so the count from there is stale."""
    session = Session("gpt2")
    session.open("ab\r\ncd\r\nef")
    assert session.server.position16(3) == 2  # (the "\n" is where its "\r" is)
    session.edit(3, 1, "")
    assert [session.server.position16(p) for p in range(len(session.text) + 1)] == editor_positions_of(session.text)


POSITIONS = ("starts", "ends", "starts16", "ends16", "byte_starts", "byte_ends")


def test_a_books_positions_and_offsets_stay_one_array_through_keystrokes(corpora):
    """An ASCII book by a byte-level tokenizer: its tokens tile the text, UTF-16 and UTF-8
    positions are the code points, and each token's bytes are its text's, so the window's seven
    positional columns stay views of one array (spliced once a keystroke), equal to a fresh encode's."""
    session = Session("cl100k_base")
    session.open((corpora / "en/tinyshakespeare.txt").read_text("utf-8"))
    middle = len(session.text) // 2
    for at, removed, inserted in [(middle, 0, "x"), (middle + 1, 0, "y z"), (middle, 2, ""), (0, 0, "\n"),
                                  (len(session.text), 0, " end"), (len(session.text) - 2, 2, "")]:
        answer, _ = session.edit(at, removed, inserted)
        assert answer.removed is not None  # a delta, spliced in
        held = session.window.columns
        bounds = held.offsets
        assert len(bounds) == len(held) + 1
        for name in POSITIONS:
            assert getattr(held, name).base is bounds and np.shares_memory(getattr(held, name), bounds), name
        assert held.starts is held.starts16 is held.byte_starts and held.ends is held.ends16 is held.byte_ends
    check_columns(session)


def sharing(columns: TokenColumns) -> set[tuple[str, str]]:
    """The pairs of columns that share memory."""
    return {(a, b) for i, a in enumerate(ARRAYS) for b in ARRAYS[i + 1:]
            if np.shares_memory(getattr(columns, a), getattr(columns, b))}


@pytest.mark.parametrize("case", ["astral", "dropped", "sentencepiece"])
def test_columns_that_cannot_share_are_spliced_apart_and_equal_a_fresh_encode(case):
    """UTF-16 positions that are not the code points once an emoji is typed; spans with gaps
    between them (a split pattern that drops text); token bytes that are not the text's
    (SentencePiece's "▁"): the window's columns still equal a fresh encode's."""
    session = Session("llama-sp" if case == "sentencepiece" else "cl100k_base")
    if case == "dropped":
        session.tok = train("hi there, the other thing there. hi there! " * 20, 270, pattern="[a-z]+", name="az")
    session.open("hi there, the other thing. " * 40)
    if case == "astral":  # (an ASCII text until the emoji is typed)
        assert {("starts", "offsets"), ("ends", "byte_ends")} <= sharing(session.window.columns)
    for at, removed, inserted in [(30, 0, "😀"), (31, 0, "a, b"), (200, 3, "x\r\ny"), (5, 1, "")]:
        answer, _ = session.edit(at, removed, inserted)
        assert answer.removed is not None
        check_columns(session)
    shares = sharing(session.window.columns)
    if case == "astral":
        assert ("starts", "starts16") not in shares and ("byte_starts", "offsets") in shares
    elif case == "dropped":
        assert ("starts", "ends") not in shares and ("byte_starts", "offsets") not in shares
    else:
        assert ("byte_starts", "offsets") not in shares and ("starts", "ends") in shares


def test_refused_special_tokens_are_flagged_and_named():
    session = Session("cl100k_base")
    _, result = session.open("one <|endoftext|> two")
    assert result.refused == ((4, 17),)
    assert result.refusal.token == "<|endoftext|>" and result.refusal.position == 4
    marked = [result.encoding.token(i).text for i, f in enumerate(result.flags.tolist()) if f & REFUSED]
    assert "".join(marked).strip() == "<|endoftext|>"


def test_an_answer_against_other_tokens_than_the_windows_is_out_of_step():
    session = Session("gpt2")
    session.open("hello world")
    session.window.columns = splice(session.window.columns, 0, 1, TokenColumns.empty(), (0, 0, 0))  # lost one
    _, result = session.edit(0, 0, "x")
    assert isinstance(result, OutOfStep) and session.window.columns is None


def test_a_server_copy_with_other_text_of_the_same_length_asks_for_the_whole_text():
    document = Document(1)
    first = p.Tokenize(1, 1, "gpt2", "refuse", p.TextDelta("abc", None, 0, 3))
    assert document.apply(first)
    drifted = p.Tokenize(1, 2, "gpt2", "refuse", p.TextDelta(None, [(2, 1, "x")], 0, 3, probes=((2, "d"),)))
    assert not document.apply(drifted)  # the window says "d" is there


@pytest.mark.parametrize("name", ["gpt2", "llama-sp", "o200k_base"])
def test_refused_text_is_encoded_as_plain_text_and_pointed_at(name):
    tok = get_builtin(name)
    special = sorted(tok.special_tokens)[0]
    text = f"one {special} two {special}"
    with pytest.raises(DisallowedSpecialError) as refusal:
        tok.encode(text)
    session = Session(name)
    _, result = session.open(text)
    assert list(result.encoding.ids) == tok.encode(text, allowed_special="none").ids  # the picture is kept
    assert result.refused[0] == (refusal.value.position, refusal.value.position + len(special))
    assert [text[s:e] for s, e in result.refused] == [special, special]
    assert result.refusal.token == special and result.refusal.position == refusal.value.position
    marked = [result.encoding.token(i).text for i, f in enumerate(result.flags.tolist()) if f & REFUSED]
    assert "".join(marked).count(special.strip("<>|[]")) == 2  # the tokens spelling it, twice
    assert not Session(name, "all").open(text)[1].refused


@pytest.mark.parametrize("name", ["gpt2", "llama-sp", "deepseek-v4"])
@pytest.mark.parametrize("text", ["one 😀 two\r\nthree 𝕏\r\n", "plain ascii\r\nwith crlf\r\n", "naïve café 😀"])
def test_tokens_in_editor_positions(name, text):
    """The spans in the editor's units: astral characters two, "\r\n" one, a soft break one more,
    as the whole text's prefix says."""
    enc = get_builtin(name).encode(text, allowed_special="all")
    session = Session(name, "all")
    soft16 = (4 + int(editor_prefix(text, [])[4]) if editor_prefix(text, []) is not None else 4,)
    _, result = session.send(p.TextDelta(text, None, 0, utf16_len(text), soft16=soft16))
    prefix = editor_prefix(text, [4])
    assert result.starts16.tolist() == (enc.starts + prefix[enc.starts]).tolist()
    assert result.ends16.tolist() == (enc.ends + prefix[enc.ends]).tolist()
    assert result.soft16.tolist() == [4 + int(prefix[4]) - 1]
