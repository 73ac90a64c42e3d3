"""UTF-16 <-> code points, the editor's text normalisation, edit mapping and colour splicing:
no widgets needed."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from tokexplorer.gui.colours import N_COLOURS, colour_indices, update_colours
from tokexplorer.gui.positions import Edit, astral_prefix, editor_text, longest_line, to_utf16, utf16_len


@given(st.text())
def test_to_utf16_matches_python_utf16(text):
    positions = np.arange(len(text) + 1)
    expected = [utf16_len(text[:i]) for i in range(len(text) + 1)]
    assert to_utf16(text, positions).tolist() == expected
    assert astral_prefix(text)[-1] == sum(ord(c) > 0xFFFF for c in text)


def test_editor_text_normalises_what_qt_cannot_hold():
    t = editor_text("a\r\nb\rc\u2029d\ufdd0e\ud83d")
    assert t.text == "a\nb\nc\nd\ne\ufffd"
    assert t.newline == "\n" and len(t.notes) == 4
    assert editor_text("x\ry\r").newline == "\r"
    plain = editor_text("plain\n")
    assert plain.notes == () and plain.text == "plain\n"


@given(st.integers(0, 20), st.integers(0, 5), st.integers(0, 5), st.integers(0, 30), st.integers(1, 30))
def test_edit_mapping_moves_tokens_with_their_text(pos, removed, added, s, length):
    e = Edit(pos, removed, added)
    t = s + length
    if t <= pos:  # before the edit: unchanged
        assert (e.start(s), e.end(t)) == (s, t)
    elif s >= pos + removed:  # after it: shifted
        assert (e.start(s), e.end(t)) == (s + added - removed, t + added - removed)
    elif s < pos and t > pos + removed:  # around it: grows or shrinks with it
        assert (e.start(s), e.end(t)) == (s, t + added - removed)
    assert e.back(e.start(s)) <= max(s, pos + removed)


@settings(max_examples=200)
@given(st.lists(st.integers(0, 40), max_size=60), st.data())
def test_update_colours_equals_recomputing(ids, data):
    old = colour_indices(np.array(ids, dtype=np.int64))
    first = data.draw(st.integers(0, len(ids)))
    removed = data.draw(st.integers(0, len(ids) - first))
    inserted = data.draw(st.lists(st.integers(0, 40), max_size=5))
    new = ids[:first] + inserted + ids[first + removed:]
    got, lo, hi = update_colours(old, new, first, first + len(inserted))
    assert got.tolist() == colour_indices(np.array(new, dtype=np.int64)).tolist()
    assert lo <= first and hi >= min(first + len(inserted), len(new))
    shift = len(new) - len(old)
    assert got[:lo].tolist() == old[:lo].tolist() and got[hi:].tolist() == old[hi - shift:].tolist()
    assert all(0 <= c < 2 * N_COLOURS for c in got.tolist())


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab\n", max_size=80), at_least=st.integers(1, 12))
def test_longest_line_equals_splitting(text, at_least):
    lengths = [len(line) for line in text.split("\n") if len(line) >= at_least]
    assert longest_line(text, at_least) == max(lengths, default=0)


def test_a_very_long_line_is_pointed_out():
    assert "a line of 150,000 characters" in editor_text("x\n" + "y" * 150_000 + "\nz").notes[0]
    assert editor_text("short\n" * 50_000).notes == ()
