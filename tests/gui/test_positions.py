"""UTF-16 <-> code points, the editor's text normalisation, edit mapping and colour splicing:
no widgets needed."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import example, given, strategies as st

from tokexplorer.core.token_colours import N_COLOURS, colour_indices, update_colours
from tokexplorer.core.positions import (LONG_LINE, SOFT_LINE, Edit, SourceMap, TextMirror, astral_prefix,
                                       code_points, editor_positions, editor_prefix, editor_text, longest_line,
                                       to_utf16, utf16_len)


@given(st.text())
def test_to_utf16_matches_python_utf16(text):
    positions = np.arange(len(text) + 1)
    expected = [utf16_len(text[:i]) for i in range(len(text) + 1)]
    assert to_utf16(text, positions).tolist() == expected
    assert astral_prefix(text)[-1] == sum(ord(c) > 0xFFFF for c in text)


def test_editor_text_keeps_what_qt_cannot_hold_in_its_source():
    t = editor_text("a\r\nb\rc\u2029d\ufdd0e\ud83d\n😀\r\nf")
    assert t.text == "a\nb\nc\nd\ne\ufffd\n😀\nf"
    assert t.source == "a\r\nb\rc\u2029d\ufdd0e\ufffd\n😀\r\nf"  # only the lone surrogate is lost
    assert t.newline == "\n" and len(t.notes) == 2
    assert t.map.source(t.text) == t.source
    assert t.map.pos16.tolist() == [1, 3, 5, 7, 13]  # the editor's UTF-16 positions of those breaks
    assert editor_text("x\ry\r").newline == "\r" and editor_text("x\ry\r").notes == ()
    plain = editor_text("plain\n")
    assert plain.notes == () and plain.text == "plain\n" and plain.map is None


def _follow(smap: SourceMap, shown: str, i: int, j: int, inserted: str) -> tuple[str, tuple[int, int, str]]:
    """Apply the edit shown[i:j] = inserted (code points) as the editor does: the new editor text
    and the source edit the map returns."""
    bounds = to_utf16(shown, np.arange(len(shown) + 1)).tolist()
    after = shown[:i] + inserted + shown[j:]
    following = after[i + len(inserted):i + len(inserted) + 1]
    edit = smap.follow(bounds[i], bounds[j] - bounds[i], inserted, breaks_before=shown[:i].count("\n"),
                       removed_breaks=shown[i:j].count("\n"), following=following)
    return after, edit


def _reference_follow(items: list[str], newline: str, i: int, j: int, inserted: str) -> None:
    """The slow model: one source string per editor character; a typed break is `newline`, or a
    CRLF right after a lone CR's break (a "\\r\\n" there would read back as one break)."""
    items[i:j] = [newline if c == "\n" else c for c in inserted]
    if 0 < i < len(items) and items[i - 1] == "\r" and items[i] == "\n":
        items[i] = "\r\n"


def _reference_items(text: str) -> tuple[list[str], str]:
    t = editor_text(text)
    items = [m.group() for m in re.finditer(r"\r\n|[\s\S]", t.source)]  # a CRLF is one break
    assert len(items) == len(t.text)
    return items, t.newline


def test_a_break_typed_after_a_lone_cr_keeps_its_line():
    """Found by hypothesis: "aaaa\\n\\raaaaa", a line break typed right after the lone CR, then
    the line break before the CR deleted: the source spelled "\\r\\n" (one line break) where the
    editor shows two."""
    t = editor_text("aaaa\n\raaaaa")
    smap, shown = t.map, t.text
    shown, edit = _follow(smap, shown, 6, 6, "\n")
    assert edit == (6, 0, "\r\n") and smap.source(shown) == "aaaa\n\r\r\naaaaa"
    shown, edit = _follow(smap, shown, 4, 5, "")
    assert smap.source(shown) == "aaaa\r\r\naaaaa" and editor_text(smap.source(shown)).text == shown
    # Deleting the text between a lone CR's break and a LF's joins them: the LF gains a CR.
    t = editor_text("a\rb\nc")
    smap, shown = t.map, t.text
    shown, edit = _follow(smap, shown, 2, 3, "")
    assert edit == (2, 1, "\r") and smap.source(shown) == "a\r\r\nc"
    assert editor_text(smap.source(shown)).text == shown == "a\n\nc"


LINE_ENDS = "ab😀\r\n\u2028\u2029\x85\ufdd0"


@given(st.text(alphabet=LINE_ENDS, max_size=30), st.lists(
    st.tuples(st.floats(0, 1), st.integers(0, 3), st.text(alphabet="x😀\n\u2028\x85", max_size=3)),
    max_size=8))
@example("\n\r", [(0.0, 0, "")])  # an empty edit at 0 of a text ending in "\r" removed the "\n"
@example("aaaa\n\raaaaa", [(0.5, 0, "\n"), (4 / 13, 1, "")])  # a typed break after a lone CR
def test_source_map_follows_edits(text, edits):
    """Random edits on mixed line endings: the map's source equals a slow model's, the worker's
    copy (TextMirror, fed the source edits) equals it, and read back as a file it gives the
    editor's text (one line break for each of the editor's)."""
    t = editor_text(text)
    smap = t.map or SourceMap(t.newline)
    shown, mirror = t.text, TextMirror(t.source)
    items, newline = _reference_items(text)
    for where, removed, inserted in edits:
        i = int(where * len(shown))
        j = min(len(shown), i + removed)
        shown, edit = _follow(smap, shown, i, j, inserted)
        _reference_follow(items, newline, i, j, inserted)
        mirror.apply(*edit)
        source = smap.source(shown)
        assert source == "".join(items)
        assert mirror.text == source and mirror.len16 == utf16_len(source)
        assert editor_text(source).text == shown


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


@given(text=st.text(alphabet="ab\n", max_size=80), at_least=st.integers(1, 12))
def test_longest_line_equals_splitting(text, at_least):
    lengths = [len(line) for line in text.split("\n") if len(line) >= at_least]
    assert longest_line(text, at_least) == max(lengths, default=0)


def test_a_very_long_line_is_pointed_out():
    assert "a line of 150,000 characters" in editor_text("x\n" + "y" * 150_000 + "\nz").notes[0]
    assert editor_text("short\n" * 50_000).notes == ()


long_lines = st.lists(st.sampled_from(["a", "é", "e\u0301", "😀", " ", "\r\n", "\r", "\n", "\u2029"]),
                      max_size=40).map(lambda parts: "".join(p * (3_000 if p in "aé😀" else 1) for p in parts))


@given(long_lines)
def test_long_lines_are_cut_into_pieces_that_stand_for_the_line(text):
    """Soft breaks: every editor line is at most SOFT_LINE characters (or a cluster more) where
    the source's was longer than LONG_LINE, the source comes back whole, no cut splits a grapheme
    cluster, and the soft breaks' positions agree in both texts."""
    t = editor_text(text)
    source = t.source
    smap = t.map or SourceMap(t.newline)
    assert smap.source(t.text) == source
    soft = [p for p, s in zip(smap.pos16.tolist(), smap.src) if s == ""]
    assert max(map(len, t.text.split("\n"))) <= LONG_LINE
    assert bool(soft) == bool(longest_line(editor_text(text, soft=False).text, LONG_LINE + 1))
    # The soft breaks as the worker gets them (source UTF-16 units), then as code points.
    shown = to_utf16(t.text, np.arange(len(t.text) + 1))
    cps = code_points(source, smap.soft16(lambda p: t.text[:int(np.searchsorted(shown, p))].count("\n")))
    prefix = editor_prefix(source, cps)
    for q, p16 in zip(cps.tolist(), soft):
        assert q + prefix[q] - 1 == p16  # the unit before code point q is the break
        cp = int(np.searchsorted(shown, p16))
        assert t.text[cp] == "\n" and t.text[cp + 1:cp + 2] != "\u0301"  # a piece starts a cluster


def test_editor_prefix_counts_soft_breaks_before_each_code_point():
    assert editor_prefix("ab", [1]).tolist() == [0, 1, 1]
    assert editor_prefix("a😀b\r\nc", [3]).tolist() == [0, 0, 1, 2, 1, 1, 1]  # the break before "\r"


@given(st.lists(st.sampled_from(["a", "é", "😀", "\r", "\n", "\r\n", "𝕏"]), max_size=30).map("".join),
       st.data(), st.sampled_from([1, 2, 3, 7, 1 << 20]))
def test_editor_positions_in_blocks_equal_the_whole_prefix(text, data, block):
    """The blockwise conversion (a huge text's spans) against the prefix of the whole text, for
    sorted and unsorted positions, with soft breaks, any block size (a "\r\n" across two blocks)."""
    n = len(text)
    soft = sorted(data.draw(st.sets(st.integers(1, n), max_size=3))) if n else []
    positions = [np.array(sorted(data.draw(st.lists(st.integers(0, n), max_size=8))), dtype=np.int64),
                 np.array(data.draw(st.lists(st.integers(0, n), max_size=8)), dtype=np.int64)]
    prefix = editor_prefix(text, soft)
    moved = editor_positions(text, soft, *positions, block=block)
    if prefix is None:
        prefix = np.zeros(n + 1, dtype=np.int64)
        assert moved is None or all(m.tolist() == p.tolist() for m, p in zip(moved, positions))
    else:
        assert moved is not None
    if moved is not None:
        assert [m.tolist() for m in moved] == [(p + prefix[p]).tolist() for p in positions]


def test_editor_positions_leave_a_text_without_shifts_alone():
    assert editor_positions("naïve\r\u2029", [], np.array([0, 3])) is None  # (a lone CR moves nothing)
    assert editor_positions("ab", [1], np.array([0, 1, 2]))[0].tolist() == [0, 2, 3]


def test_an_undo_gives_a_removed_break_its_meaning_back():
    """"ab|cd" (a soft break) and "cd\\ref" (a lone CR in a file of "\\n"): deleted together, typed
    back (a plain line break each) or undone (what they were)."""
    def fresh():
        return SourceMap("\n", [2, 5], ["", "\r"])
    editor = "ab\ncd\nef"
    m = fresh()
    assert m.follow(1, 6, "", breaks_before=0, removed_breaks=2, following="f") == (1, 5, "")
    assert m.follow(1, 0, "b\ncd\ne", breaks_before=0, removed_breaks=0, following="f", undo=True) == (1, 0, "bcd\re")
    assert m.source(editor) == fresh().source(editor) == "abcd\ref"
    m = fresh()
    m.follow(1, 6, "", breaks_before=0, removed_breaks=2, following="f")
    assert m.follow(1, 0, "b\ncd\ne", breaks_before=0, removed_breaks=0, following="f") == (1, 0, "b\ncd\ne")
    assert m.source(editor) == "ab\ncd\nef"  # typed: plain line breaks
