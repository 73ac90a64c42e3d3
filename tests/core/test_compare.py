"""Comparing tokenizers on one text: counts against tiktoken's own encoders, boundary marks against
a slow reference built from the token bytes, hover and part counts."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokexplorer.core.analysis.compare import (
    boundary_marks, byte_offset, cheapest, compare_counts, covered_span, covering, locate_parts,
    part_counts, summary,
)
from tokexplorer.core.analysis.quirks import quirk, sample_text
from tokexplorer.core.registry import get_builtin

from ..conftest import BUILTINS
from .library_peers import tiktoken_encoding

HELLO = "    hello world!!!"


def encode_all(text: str, names=BUILTINS):
    return [get_builtin(n).encode(text) for n in names]


def reference_marks(encodings) -> list[list[tuple[int, int, float]]]:
    """(byte, char, fraction) of each encoding's boundaries that another lacks, from the token
    bytes and the text walked one character at a time."""
    text = encodings[0].text
    n = len(text.encode("utf-8"))
    char_of, first_byte = [], []  # byte offset -> its character; character -> its first byte
    for i, ch in enumerate(text):
        first_byte.append(len(char_of))
        char_of += [i] * len(ch.encode("utf-8"))
    sets = []
    for enc in encodings:
        ends, pos = set(), -(len(b"".join(enc.token_bytes)) - n)  # SentencePiece's dummy prefix
        for tb in enc.token_bytes:
            pos += len(tb)
            if 0 < pos < n:
                ends.add(pos)
        sets.append(ends)
    common = set.intersection(*sets)
    out = []
    for own in sets:
        marks = []
        for b in sorted(own - common) if len(sets) > 1 else []:
            c = char_of[b]
            size = len(text[c].encode("utf-8"))
            marks.append((b, c, (b - first_byte[c]) / size))
        out.append(marks)
    return out


def as_tuples(marks):
    return [list(zip(m.bytes.tolist(), m.chars.tolist(), m.fraction.tolist())) for m in marks]


def test_hello_world_counts_match_tiktoken(tmp_path):
    want = {n: len(tiktoken_encoding(n, tmp_path).encode(HELLO)) for n in ("gpt2", "cl100k_base")}
    assert want == {"gpt2": 6, "cl100k_base": 4}  # the lecture's numbers
    counts = compare_counts(["gpt2", "cl100k_base"], encode_all(HELLO, ["gpt2", "cl100k_base"]))
    assert [c.tokens for c in counts] == [6, 4]
    assert (counts[1].delta, round(counts[1].delta_pct, 1)) == (-2, -33.3)
    assert counts[1].delta_label() == "-2 (-33.3%)" and counts[0].delta_label() == "±0"
    assert counts[0].bytes_per_token == 18 / 6 and counts[1].chars_per_token == 18 / 4
    assert cheapest(counts) == [1]
    assert summary(counts) == "cheapest: cl100k_base, 4 tokens (gpt2 1.50x)"


def test_python_indentation_counts_match_tiktoken(tmp_path):
    code = dict(quirk("python-indentation").samples)["Python"]
    names = ["gpt2", "cl100k_base"]
    counts = compare_counts(names, encode_all(code, names))
    assert [c.tokens for c in counts] == [len(tiktoken_encoding(n, tmp_path).encode(code)) for n in names]
    assert counts[1].delta < -10


def test_hello_world_marks():
    gpt2, cl100k = encode_all(HELLO, ["gpt2", "cl100k_base"])
    marks = boundary_marks([gpt2, cl100k])
    # GPT-2: ␣|␣|␣|␣hello|␣world|!!!  cl100k: ␣␣␣|␣hello|␣world|!!!
    assert marks[0].bytes.tolist() == [1, 2] and marks[1].bytes.tolist() == []
    assert not marks[0].inside.any()


def test_gpt2_boundary_inside_an_emoji_is_marked(tmp_path):
    text = "hi 😀 and 😂"  # o200k_base has each emoji whole; GPT-2 cuts both after three bytes
    gpt2 = tiktoken_encoding("gpt2", tmp_path)
    ends, pos = set(), 0
    for i in gpt2.encode(text):
        pos += len(gpt2.decode_single_token_bytes(i))
        ends.add(pos)
    marks = boundary_marks(encode_all(text, ["gpt2", "o200k_base"]))
    for emoji in "😀😂":
        first = len(text[:text.index(emoji)].encode())
        inside = [b for b in ends if first < b < first + 4]
        assert inside, "tiktoken's GPT-2 no longer cuts the emoji: choose another"
        for b in inside:
            assert (b, text.index(emoji), (b - first) / 4) in as_tuples(marks)[0]
    assert marks[0].inside.sum() == 2 and not marks[1].inside.any()


@pytest.mark.parametrize("names", [BUILTINS, ["gpt2", "llama-sp"], ["o200k_base", "cl100k_base"]],
                         ids=lambda n: "+".join(n))
def test_marks_equal_the_reference_on_tricky_strings(tricky_strings, names):
    for _, text in tricky_strings[:400]:
        text = text.encode("utf-8", "replace").decode("utf-8")
        encodings = encode_all(text, names)
        assert as_tuples(boundary_marks(encodings)) == reference_marks(encodings), text


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab  \n\t!1éअ्क😀👋🏽\u200d한")), max_size=40),
       st.integers(0, 40), st.integers(0, 40))
def test_windows_hold_the_marks_inside_them(text, a, b):
    encodings = encode_all(text)
    whole = as_tuples(boundary_marks(encodings))
    start, end = sorted((min(a, len(text)), min(b, len(text))))
    window = as_tuples(boundary_marks(encodings, start, end))
    lo, hi = byte_offset(encodings[0], start), byte_offset(encodings[0], end)
    assert window == [[m for m in ms if lo <= m[0] < hi] for ms in whole]


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab \n!é😀👋🏽\u200d한")), max_size=30))
def test_byte_offset_equals_encoding_the_prefix(text):
    for enc in encode_all(text):
        assert [byte_offset(enc, p) for p in range(len(text) + 1)] == [
            len(text[:p].encode("utf-8")) for p in range(len(text) + 1)]


def test_whole_book_marks_equal_the_reference(corpora):
    text = (corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:300_000]
    encodings = encode_all(text, ["gpt2", "cl100k_base", "o200k_base"])
    assert as_tuples(boundary_marks(encodings)) == reference_marks(encodings)


def test_covering_links_tokens_across_encodings():
    gpt2, cl100k = encode_all(HELLO, ["gpt2", "cl100k_base"])
    # The second space: GPT-2's token 1 (' '), cl100k's token 0 ('   ').
    assert covering([gpt2, cl100k], 1, 2) == [range(1, 2), range(0, 1)]
    # cl100k's '   ' spans GPT-2's first three tokens.
    span = covered_span(cl100k, range(0, 1))
    assert span == (0, 3) and covering([gpt2, cl100k], *span) == [range(0, 3), range(0, 1)]
    assert covering([gpt2], 8, 8) == [range(3, 4)]  # a point: the token at it (" hello")


def test_part_counts_add_up_for_json_vs_yaml():
    q = quirk("json-vs-yaml")
    text = sample_text(q)
    encodings = encode_all(text)
    parts = part_counts(encodings, q.samples)
    assert [p.label for p in parts] == ["JSON", "YAML"]
    for i, enc in enumerate(encodings):
        json_n, yaml_n = parts[0].tokens[i], parts[1].tokens[i]
        assert json_n + yaml_n == len(enc)  # the parts tile the text
        assert yaml_n < json_n
    # Close to each part encoded on its own (a token may straddle the join).
    cl100k = get_builtin("cl100k_base")
    for p, (_, part) in zip(parts, q.samples):
        assert abs(p.tokens[1] - len(cl100k.encode(part))) <= 1


def test_parts_edited_away_are_dropped():
    assert locate_parts("YAML only", [("JSON", "{}"), ("YAML", "YAML")]) == [("YAML", 0, 4)]


def test_different_texts_are_refused():
    with pytest.raises(ValueError, match="same text"):
        compare_counts(["a", "b"], [get_builtin("gpt2").encode("a"), get_builtin("gpt2").encode("b")])


def test_a_million_characters_in_windows_is_what_the_whole_gives(corpora):
    text = (corpora / "en/tinyshakespeare.txt").read_text("utf-8")
    encodings = encode_all(text, ["gpt2", "cl100k_base"])
    whole = boundary_marks(encodings)
    rng = random.Random(0)
    for _ in range(20):
        start = rng.randrange(len(text))
        end = min(len(text), start + rng.randrange(1, 5000))
        got = boundary_marks(encodings, start, end)
        lo, hi = byte_offset(encodings[0], start), byte_offset(encodings[0], end)
        for w, m in zip(got, whole):
            keep = (m.bytes >= lo) & (m.bytes < hi)
            assert w.bytes.tolist() == m.bytes[keep].tolist()
            assert w.chars.tolist() == m.chars[keep].tolist()
