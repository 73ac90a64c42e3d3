"""Token spans and flags against a slow, obviously correct reference, for all four built-ins."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numpy as np

from tokexplorer.core.encoding import Encoding, TokenFlag
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.tokenizer import clean_text

from ..conftest import BUILTINS
from ..strategies import with_surrogates
from .library_peers import sentencepiece_processor


def reference_spans(text: str, token_bytes: list[bytes], lead: int) -> list[tuple[int, int, bool]]:
    """(start, end, partial) per token, walking the bytes one by one.

    `lead` bytes at the front of the token stream belong to no character (SentencePiece's dummy
    prefix). A token covers every character one of its bytes belongs to.
    """
    owner: list[int] = []  # byte offset -> index of the character it belongs to
    first: list[bool] = []  # byte offset -> is the first byte of its character
    for i, ch in enumerate(text):
        n = len(ch.encode("utf-8"))
        owner += [i] * n
        first += [True] + [False] * (n - 1)
    assert b"".join(token_bytes)[lead:] == text.encode("utf-8")
    out = []
    pos = -lead
    for tb in token_bytes:
        start, end = max(pos, 0), pos + len(tb)
        pos = end
        if end <= start:  # SentencePiece's lone dummy-prefix '▁': covers no character
            at = owner[start] if start < len(owner) else len(text)
            out.append((at, at, False))
            continue
        partial = not first[start] or (end < len(owner) and not first[end])
        out.append((owner[start], owner[end - 1] + 1, partial))
    return out


def check(tok, text: str, allowed_special="none") -> Encoding:
    enc = tok.encode(text, allowed_special=allowed_special)
    lead = 1 if tok.family == "sentencepiece" and text else 0
    expected = reference_spans(enc.text, enc.token_bytes, lead)
    got = [(s, e, bool(f & TokenFlag.PARTIAL)) for (s, e), f in zip(enc.spans, enc.flags)]
    assert got == expected
    return enc


@pytest.mark.parametrize("name", BUILTINS)
def test_spans_and_partial_flags_on_tricky_strings(name, tricky_strings):
    tok = get_builtin(name)
    for label, text in tricky_strings:
        if tok.family == "sentencepiece":
            text = text.replace("\u2581", "")
        check(tok, text)


@given(text=with_surrogates, policy=st.sampled_from(["none", "all"]))
def test_spans_on_generated_text(text, policy):
    for name in BUILTINS:
        tok = get_builtin(name)
        if tok.family == "sentencepiece":  # a special token starts a new sentence: see below
            check(tok, text.replace("\u2581", ""))
        else:
            check(tok, text, allowed_special=policy)


def test_sentencepiece_spans_agree_with_its_own_offsets(tricky_strings):
    """Whole-character tokens: our spans equal sentencepiece's own byte offsets."""
    sp = sentencepiece_processor()
    tok = get_builtin("llama-sp")
    for label, text in tricky_strings:
        text = text.replace("\u2581", "")
        enc = tok.encode(text, allowed_special="none")
        proto = sp.encode(text, out_type="proto")
        raw = text.encode("utf-8")
        for (s, e), f, piece in zip(enc.spans, enc.flags, proto.pieces):
            if f & TokenFlag.PARTIAL or piece.begin == piece.end:
                continue
            assert (s, e) == (len(raw[: piece.begin].decode("utf-8")), len(raw[: piece.end].decode("utf-8"))), label


def test_emoji_split_across_gpt2_tokens_is_partial():
    enc = get_builtin("gpt2").encode("hi 👋")
    assert enc.spans == [(0, 2), (2, 4), (3, 4)]
    assert [bool(f & TokenFlag.PARTIAL) for f in enc.flags] == [False, True, True]


def test_byte_fallback_pieces_are_flagged():
    enc = get_builtin("llama-sp").encode("👋")
    byte_pieces = [bool(f & TokenFlag.BYTE_FALLBACK) for f in enc.flags]
    assert byte_pieces.count(True) == 4  # F0 9F 91 8B, one piece each
    assert all(enc.token_bytes[i] in (b"\xf0", b"\x9f", b"\x91", b"\x8b") for i, b in enumerate(byte_pieces) if b)
    assert all(span == (0, 1) for span, b in zip(enc.spans, byte_pieces) if b)


@pytest.mark.parametrize("name", BUILTINS)
def test_special_tokens_flagged_and_spanned(name):
    tok = get_builtin(name)
    special = "<|endoftext|>" if tok.family == "tiktoken" else "</s>"
    text = f"a 👋{special}b"
    enc = tok.encode(text, allowed_special="all")
    i = enc.ids.index(tok.special_tokens[special])
    assert enc.spans[i] == (3, 3 + len(special))
    assert enc.spans[i + 1:] == [(len(text) - 1, len(text))]
    if tok.family == "tiktoken":
        check(tok, text, allowed_special="all")
    else:
        # subtle: SentencePiece encodes the text after a special token as a new sentence, with
        # its own dummy-prefix space (Hugging Face calls this the "legacy" behaviour).
        assert enc.token_bytes[i + 1] == b" b"
    assert enc.flags[i] & TokenFlag.SPECIAL
    assert sum(bool(f & TokenFlag.SPECIAL) for f in enc.flags) == 1


def test_chunks_are_the_regex_split_with_special_tokens_alone():
    enc = get_builtin("cl100k_base").encode("Hello  world<|endoftext|>!!", allowed_special="all")
    assert [enc.text[a:b] for a, b in enc.chunks] == ["Hello", " ", " world", "<|endoftext|>", "!!"]
    assert get_builtin("llama-sp").encode("Hello").chunks is None


def test_token_lookup_by_position():
    enc = get_builtin("cl100k_base").encode("Hello world")
    assert enc.token_index_at(0) == 0 and enc.token_index_at(7) == 1
    assert enc.token_index_at(11) is None
    assert list(enc.token_range(3, 7)) == [0, 1]


@given(text=st.text(max_size=60), picks=st.lists(st.integers(0, 400), max_size=30),
       block=st.sampled_from([1, 2, 3, 7, 1 << 20]))
def test_utf8_positions_in_blocks_equal_a_byte_walk(text, picks, block):
    """Characters started before each byte offset, and whether one starts there, in any order
    of offsets and for any block size, against counting byte by byte."""
    import numpy as np

    from tokexplorer.core import encoding

    data = text.encode("utf-8", "replace")
    positions = np.array([p % (len(data) + 2) for p in picks], dtype=np.int64)  # past the end too
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(encoding, "SCAN_BLOCK", block)
        ((before, starts_here), (again, _)) = encoding.utf8_positions(
            np.frombuffer(data, dtype=np.uint8), positions, np.sort(positions))
    lead = [(b & 0xC0) != 0x80 for b in data]
    assert before.tolist() == [sum(lead[:p]) for p in positions.tolist()]
    assert starts_here.tolist() == [p >= len(data) or lead[p] for p in positions.tolist()]
    assert again.tolist() == sorted(before.tolist())  # several arrays in one pass


@given(text=with_surrogates, block=st.sampled_from([1, 2, 3, 7]),
       name=st.sampled_from(["gpt2", "llama-sp", "deepseek-v4"]))
def test_spans_computed_in_blocks_equal_the_reference(text, block, name):
    """The code-point spans of a long text are computed a block of tokens at a time, overwriting
    counts in place: every block size gives the byte walk's spans (partial characters under GPT-2,
    SentencePiece's dummy prefix, a backend whose byte spans need not tile)."""
    from tokexplorer.core import encoding

    tok = get_builtin(name)
    if tok.family == "sentencepiece":
        text = text.replace("\u2581", "")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(encoding, "SCAN_BLOCK", block)
        check(tok, text + " 👋🏽 é 漢字")


@given(text=with_surrogates, block=st.sampled_from([1, 2, 3, 7]))
def test_utf8_in_blocks_is_the_texts_utf8(text, block):
    from tokexplorer.core import encoding
    from tokexplorer.core.tokenizer import clean_text

    text = clean_text(text)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(encoding, "SCAN_BLOCK", block)
        assert encoding.utf8_array(text).tobytes() == text.encode("utf-8")


@pytest.mark.parametrize("name, lead", [("llama-sp", b" "), ("deepseek-v4", b"")])
@settings(max_examples=60)
@given(text=with_surrogates, block=st.sampled_from([1, 2, 3, 7, 1 << 16]), flip=st.integers(0, 10_000))
def test_tokens_are_checked_to_spell_the_text_in_blocks(name, lead, text, block, flip):
    """SentencePiece's and `tokenizers`' tokens are checked against the text a block of tokens
    at a time, as arrays (`TokenByteTable.spells`): every block size answers as joining the
    tokens' bytes does, for the text itself and for the text with one byte changed, after the
    dummy prefix's space (llama-sp) or nothing (DeepSeek)."""
    tok = get_builtin(name)
    text = clean_text(text).replace("\u2581", "") + " 👋🏽 é 漢字"
    enc = tok.encode(text, allowed_special="none")
    ids = np.asarray(enc.id_array, dtype=np.int64)
    joined = b"".join(tok.token_bytes(i) for i in ids.tolist())
    raw = text.encode("utf-8")
    changed = bytearray(raw)
    changed[flip % len(raw)] ^= 0x01
    for data in (raw, bytes(changed)):
        assert tok._table.spells(ids, data, lead, block=block) == (joined == lead + data)
    assert tok._table.spells(ids, raw, lead)  # as the encode found: its spans came from the lengths
