"""Positions at the GUI boundary: the core counts code points, Qt counts UTF-16 code units.

Conversions (`astral_prefix`, `to_utf16`, `utf16_len`, `editor_prefix` from the tokenized text to
the editor's, `editor_positions` the same for arrays of positions in a huge text), how positions
move through an edit (`Edit`), the worker's copy of the tokenized text kept from Qt's edits
(`TextMirror`), grapheme cluster bounds in UTF-16 (`cluster_bounds16`).

Also what the editor can hold: a QTextDocument turns "\\r\\n", "\\r", U+2029 and Qt's frame
markers U+FDD0 / U+FDD1 into block breaks and drops lone surrogates. The editor holds a line break
for each of those, and a `SourceMap` remembers what each break stands for, so that the text that
is tokenized and saved is the file's own (the same tokens as the command line). `editor_text`
builds both once, on the way in, and says what the editor shows differently.

A line longer than LONG_LINE is held as pieces of SOFT_LINE characters: each piece ends in a
"soft" line break that stands for nothing ("") in the source. Qt lays out a whole block again on
every edit of it (a quarter of a second a key in a line of a million characters, and most of a
millisecond for each position looked up in it); pieces bound that to a few milliseconds, and the
tokens and the saved file are the line's own.

No Qt here: plain Python and numpy, testable without a display.

subtle: every astral character (emoji, 𝕏, 𠀀, most flags) is one code point but two UTF-16 units, so
every position after one shifts by one per such character.

It runs past 400 lines because the text mirror, the source map of soft breaks and the UTF-16
conversions are one contract between the editor and the core, tested together.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np
import regex

from tokexplorer.core.encoding import SCAN_BLOCK
from tokexplorer.core.tokenizer import clean_text
from tokexplorer.core.analysis.unicode_info import graphemes


def astral_prefix(text: str) -> np.ndarray:
    """prefix[i] = number of astral characters in text[:i] (int64, length len(text) + 1).

    >>> astral_prefix("a😀b").tolist()
    [0, 0, 1, 1]
    """
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    out = np.zeros(len(cps) + 1, dtype=np.int64)
    np.cumsum(cps > 0xFFFF, dtype=np.int64, out=out[1:])  # dtype: 10x faster than a cast
    return out


def editor_prefix(text: str, soft=()) -> np.ndarray | None:
    """prefix[i] = the editor's UTF-16 position of code point i of source `text`, minus i: one
    more per astral character before it, one less per "\\r\\n" (one line break there), one
    more per soft break at or before it (`soft`: the code points the editor's soft breaks come
    before, sorted); None when every position is the same in both.

    >>> editor_prefix("a😀\\r\\nb").tolist(), editor_prefix("abc", [2]).tolist()
    ([0, 0, 1, 0, 0, 0], [0, 0, 1, 1])
    """
    # Most texts have neither; checking is a tenth of the cost of the prefix sums.
    if not len(soft) and "\r" not in text and not has_astral(text):
        return None
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    out = np.zeros(len(cps) + 1, dtype=np.int64)
    step = (cps > 0xFFFF).astype(np.int64)
    step[:-1] -= (cps[:-1] == 13) & (cps[1:] == 10)
    np.cumsum(step, out=out[1:])
    if len(soft):  # the break before code point q moves q and everything after it
        bump = np.zeros(len(cps) + 1, dtype=np.int64)
        bump[np.asarray(soft, dtype=np.int64)] = 1
        out += np.cumsum(bump)
    return out if out.any() else None


def editor_positions(text: str, soft, *positions: np.ndarray, block: int = SCAN_BLOCK
                     ) -> list[np.ndarray] | None:
    """Each array of code-point `positions` of source `text` as the editor's UTF-16 positions
    (`p + editor_prefix(text, soft)[p]`); None when the text has nothing that moves a position
    (no astral character, "\\r\\n" or soft break).

    subtle: the text is read `block` code points at a time with buffers reused, never as one
    array as long as it: on 50 MB of text the whole prefix and its steps are 800 MB, which made
    the window's peak (`Tokenized.build`).

    >>> [p.tolist() for p in editor_positions("a😀\\r\\nb", [], np.array([0, 2, 5]), np.array([6]))]
    [[0, 3, 5], [6]]
    """
    soft = np.asarray(soft, dtype=np.int64)
    if not len(soft) and "\r" not in text and not has_astral(text):
        return None
    queries = []  # [sorted positions, their order or None, editor positions, next to fill]
    for p in positions:
        p = np.asarray(p, dtype=np.int64)
        order = None
        if len(p) > 1 and not (p[1:] >= p[:-1]).all():
            order = np.argsort(p, kind="stable")
            p = p[order]
        queries.append([p, order, np.empty(len(p), dtype=np.int64), 0])
    n = len(text)
    size = max(min(n, block), 1)
    step = np.empty(size, dtype=np.int64)
    shift = np.zeros(size + 1, dtype=np.int64)  # shift[j]: the prefix at code point a + j
    base, moves = 0, bool(len(soft))
    for a in range(0, n, block):
        m = min(block, n - a)
        # one code point past the block, for a "\r" that ends it
        cps = np.frombuffer(text[a : a + m + 1].encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        after = cps[1:] if len(cps) > m else np.append(cps[1:], np.uint32(0))
        step[:m] = cps[:m] > 0xFFFF
        step[:m] -= (cps[:m] == 13) & (after == 10)
        moves = moves or bool(step[:m].any())
        np.cumsum(step[:m], out=shift[1 : m + 1])
        shift[0] = 0
        shift[: m + 1] += base
        for q in queries:
            p, _, out, lo = q
            hi = lo + int(np.searchsorted(p[lo:], a + m, side="left"))
            np.take(shift, p[lo:hi] - a, out=out[lo:hi])
            q[3] = hi
        base = int(shift[m])
    if not moves:  # a lone "\r" moves nothing
        return None
    results = []
    for p, order, out, lo in queries:
        out[lo:] = base
        out += p
        if len(soft):  # a break before code point q moves q and everything after it
            out += np.searchsorted(soft, p, side="right")
        if order is not None:
            out[order] = out.copy()
        results.append(out)
    return results


def code_points(text: str, positions16) -> np.ndarray:
    """UTF-16 positions of `text` as code-point positions (the inverse of `to_utf16`).

    >>> code_points("😀x", [0, 2, 3]).tolist()
    [0, 1, 2]
    """
    positions16 = np.asarray(positions16, dtype=np.int64)
    if text.isascii() or not len(positions16):
        return positions16
    return np.searchsorted(to_utf16(text, np.arange(len(text) + 1)), positions16)


def to_utf16(text: str, positions: np.ndarray, prefix: np.ndarray | None = None) -> np.ndarray:
    """Code-point positions of `text` as UTF-16 positions.

    >>> to_utf16("😀x", np.array([0, 1, 2])).tolist()
    [0, 2, 3]
    """
    if prefix is None:
        prefix = astral_prefix(text)
    return positions + prefix[positions]


_ASTRAL = regex.compile("[\U00010000-\U0010FFFF]")


def has_astral(text: str) -> bool:
    """Whether a code point of `text` takes two UTF-16 units. A search: 40 ms on a 50 MB text,
    where encoding it took 100 ms and a copy.

    >>> has_astral("naïve"), has_astral("a😀")
    (False, True)
    """
    return not text.isascii() and _ASTRAL.search(text) is not None


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units.

    >>> utf16_len("a😀"), utf16_len("naïve")
    (3, 5)

    subtle: the astral characters are found a block at a time (`astral_units`), never with a
    copy of the whole text: encoding a 50 MB text as UTF-16 in one call took 95 ms and 100 MB.
    """
    return len(text) + len(astral_units(text))  # (which looks for one first: `has_astral`)


def cluster_bounds16(text: str) -> list[int]:
    """UTF-16 offsets where grapheme clusters (what renders as one character) start, and the end.

    >>> cluster_bounds16("ab👍🏽क्ष")  # the emoji and its skin tone, the conjunct: one cluster each
    [0, 1, 2, 6, 9]
    """
    bounds = [0]
    for start, end in graphemes(text):
        bounds.append(bounds[-1] + utf16_len(text[start:end]))
    return bounds


def astral_units(text: str) -> np.ndarray:
    """The UTF-16 positions of the astral characters of `text` (sorted, int64), found a block of
    the text at a time (no UTF-32 copy of the whole text: 200 MB for 50 MB of text).

    >>> astral_units("a😀b😀").tolist()
    [1, 4]
    """
    if not has_astral(text):
        return np.zeros(0, dtype=np.int64)
    found, before = [], 0  # before: astral characters in the blocks before
    for a in range(0, len(text), SCAN_BLOCK):
        cps = np.frombuffer(text[a : a + SCAN_BLOCK].encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        at = np.flatnonzero(cps > 0xFFFF)
        found.append(at + (a + before) + np.arange(len(at)))  # the k-th is one unit further per one before it
        before += len(at)
    return np.concatenate(found)


class TextMirror:
    """A Python copy of the editor's text, kept up to date from Qt's edits (UTF-16 positions), so
    the worker need not ask Qt for the whole text after every keystroke (that costs the UI thread
    several milliseconds on a 1 MB text).

    It keeps where the text's astral characters are, so that a UTF-16 position becomes a code
    point by a search: encoding the text as UTF-16 for each edit took about 100 ms a keystroke
    on 50 MB of text with an emoji in it.

    >>> m = TextMirror("a😀c")
    >>> m.apply(3, 1, "xy")  # replace "c": UTF-16 position 3 is code point 2
    (2, 1)
    >>> m.text, m.len16
    ('a😀xy', 5)
    """

    def __init__(self, text: str = ""):
        self.reset(text)

    def reset(self, text: str) -> None:
        self.text = text
        self._astral16 = astral_units(text)
        self.len16 = len(text) + len(self._astral16)

    def _code_point(self, position16: int) -> int:
        """The code point at UTF-16 position `position16`: one unit less per astral character before."""
        return position16 - int(self._astral16.searchsorted(position16)) if len(self._astral16) else position16

    def utf16_position(self, p: int) -> int:
        """The UTF-16 position of code point `p`: one unit more per astral character before it
        (a search, as `_code_point`'s).

        >>> TextMirror("a😀b😀c").utf16_position(4)
        6
        """
        astral = self._astral16  # the k-th astral character is code point astral[k] - k
        return p + bisect.bisect_left(range(len(astral)), p, key=lambda k: int(astral[k]) - k)

    def apply(self, position16: int, removed16: int, inserted: str) -> tuple[int, int]:
        """Replace removed16 UTF-16 units at position16 by `inserted`; returns the edit in code
        points: (start, characters removed)."""
        start, end = self._code_point(position16), self._code_point(position16 + removed16)
        text = self.text  # (joined: one copy of the text fewer than `+` makes)
        self.text = "".join((text[:start], inserted, text[end:]))
        new = astral_units(inserted)
        added16 = len(inserted) + len(new)
        old = self._astral16
        if len(old) or len(new):
            i, j = old.searchsorted(position16), old.searchsorted(position16 + removed16)
            self._astral16 = np.concatenate([old[:i], new + position16, old[j:] + (added16 - removed16)])
        self.len16 += added16 - removed16
        return start, end - start

    def agrees(self, probes) -> bool:
        """Whether the copy holds each probe's text at its UTF-16 position: (position16, text).

        >>> TextMirror("a😀c").agrees([(1, "😀"), (3, "c")]), TextMirror("abc").agrees([(1, "x")])
        (True, False)
        """
        for p, t in probes:
            at = self._code_point(p)
            if self.text[at : at + len(t)] != t:
                return False
        return True


# What a line break of the editor may stand for, as its marker says it.
BREAK_NAMES = {"\n": "LF", "\r\n": "CRLF", "\r": "CR", "\u2029": "PS", "\ufdd0": "FDD0", "\ufdd1": "FDD1"}


class SourceMap:
    """What the editor's line breaks stand for in the text that is tokenized and saved (the
    "source"): the document's `newline`, except at the UTF-16 positions `pos16`, where each
    stands for its string in `src` (a lone "\\r" in a file of "\\n", a U+2029...). Follows the
    editor's edits (`follow`); a typed or pasted line break stands for `newline`, except one
    right after a lone CR, which stands for a CRLF.

    A soft break (src "") stands for nothing: the editor cut a long line there. A break an edit
    removes is remembered, so that the undo (or redo) that puts it back (`follow(undo=True)`)
    gives it its meaning again instead of the usual line ending's.

    The source, read back as a file (`editor_text`), always gives the editor's text again: one
    line break for each of the editor's (soft breaks aside: a long line is cut afresh).

    subtle: a "\\n" right after a lone "\\r" would spell "\\r\\n", which reads back as ONE line
    break, not two: the source would lose a line (and the worker's copy would tokenize a CRLF
    where the editor shows two lines). Spelling that break "\\r\\n" keeps both, and changes no
    other break (a "\\r" would join the next "\\n" in turn).

    >>> m = SourceMap("\\r\\n", [5], ["\\u2029"])
    >>> m.source("ab\\ncd\\ne"), m.extra(4, 1), m.extra(7, 2)
    ('ab\\r\\ncd\\u2029e', 1, 1)
    """

    def __init__(self, newline: str = "\n", pos16=(), src=()):
        self.newline = newline
        self.pos16 = np.asarray(pos16, dtype=np.int64)
        self.src = list(src)
        # (position16, units removed, offsets, src) of the last edits that removed breaks
        self._gone: list[tuple[int, int, list[int], list[str]]] = []
        self._index()

    def _index(self) -> None:
        self._extra = np.zeros(len(self.src) + 1, dtype=np.int64)  # prefix sums of units beyond 1
        np.cumsum([utf16_len(s) - 1 for s in self.src], out=self._extra[1:])

    @property
    def identity(self) -> bool:
        """The source is the editor's text itself."""
        return self.newline == "\n" and not self.src

    @property
    def tracking(self) -> bool:
        """Whether edits must be followed: it holds breaks, or remembers removed ones."""
        return not self.identity or bool(self._gone)

    def break_at(self, position16: int) -> str | None:
        """What the editor's line break at `position16` stands for ("" for a soft break), or None
        where it is the document's `newline` (or there is no break there).

        >>> m = SourceMap("\\n", [3, 9], ["\\u2029", ""])
        >>> m.break_at(3), m.break_at(9), m.break_at(5)
        ('\\u2029', '', None)
        """
        k = int(np.searchsorted(self.pos16, position16, side="left"))
        return self.src[k] if k < len(self.src) and self.pos16[k] == position16 else None

    def extra(self, position16: int, breaks_before: int) -> int:
        """UTF-16 units the source holds beyond the editor's before editor position16, given the
        number of line breaks before it."""
        k = int(np.searchsorted(self.pos16, position16, side="left"))
        return int(self._extra[k]) + (len(self.newline) - 1) * (breaks_before - k)

    def removed(self, position16: int, removed: int, breaks: int) -> int:
        """The source's UTF-16 units behind `removed` editor units at position16 that hold
        `breaks` line breaks (before the edit is followed)."""
        k0, k1 = np.searchsorted(self.pos16, [position16, position16 + removed], side="left").tolist()
        return removed + int(self._extra[k1] - self._extra[k0]) + (len(self.newline) - 1) * (breaks - (k1 - k0))

    def edit(self, position16: int, removed: int, added: int) -> None:
        """Follow an edit of the editor's text: breaks removed with the text go."""
        if not self.src:
            return
        keep = (self.pos16 < position16) | (self.pos16 >= position16 + removed)
        if not keep.all():
            self._gone.append((position16, removed, (self.pos16[~keep] - position16).tolist(),
                               [s for s, k in zip(self.src, keep.tolist()) if not k]))
            del self._gone[:-UNDO_MEMORY]
            self.src = [s for s, k in zip(self.src, keep.tolist()) if k]
            self.pos16 = self.pos16[keep]
            self._index()
        self.pos16[self.pos16 >= position16 + removed] += added - removed

    def follow(self, position16: int, removed: int, inserted: str, *, breaks_before: int,
               removed_breaks: int, following: str, undo: bool = False, soft=()) -> tuple[int, int, str]:
        """Follow an edit of the editor's text, and return it as an edit of the source: (UTF-16
        position, units removed, text inserted).

        `inserted`: the editor's new text there, line breaks as "\\n"; `breaks_before`: the line
        breaks before position16; `removed_breaks`: those in the removed text; `following`: the
        editor's character after the edit ("\\n" for a line break, "" at the end); `undo`: the
        edit undoes or redoes one, so breaks it puts back where an edit removed them mean what
        they meant; `soft`: the UTF-16 offsets in `inserted` of soft breaks (a long line pasted).

        >>> m = SourceMap("\\n", [1], ["\\r"])  # the editor's "a\\nb" is "a\\rb"
        >>> m.follow(2, 0, "\\n", breaks_before=1, removed_breaks=0, following="b")
        (2, 0, '\\r\\n')
        >>> m.source("a\\n\\nb")  # the typed break stands for a CRLF: two line breaks
        'a\\r\\r\\nb'
        """
        start = position16 + self.extra(position16, breaks_before)
        units = self.removed(position16, removed, removed_breaks)
        self.edit(position16, removed, utf16_len(inserted))
        if len(soft):
            self._insert(position16 + np.asarray(soft, dtype=np.int64), [""] * len(soft))
            return start, units, self.source(inserted, position16)
        if undo and self._restore(position16, inserted):
            return start, units, self.source(inserted, position16)
        text = inserted.replace("\n", self.newline)
        if self._joins(position16, (inserted or following)[:1] == "\n"):
            k = int(np.searchsorted(self.pos16, position16))
            self.pos16 = np.insert(self.pos16, k, position16)
            self.src.insert(k, "\r\n")
            self._index()
            # The break there (inserted, or the file's own after a deletion) gains a CR.
            text = "\r" + text
        return start, units, text

    def _restore(self, position16: int, inserted: str) -> bool:
        """Give the breaks of `inserted` (just followed) back the meanings the last edit that
        removed that many units there took away; whether there was one."""
        length16 = utf16_len(inserted)
        units = inserted.encode("utf-16-le", "surrogatepass")
        for i in range(len(self._gone) - 1, -1, -1):
            position, removed, offsets, src = self._gone[i]
            if position == position16 and removed == length16 and all(
                    units[2 * o:2 * o + 2] == b"\n\x00" for o in offsets):
                del self._gone[i]
                self._insert(position16 + np.asarray(offsets, dtype=np.int64), src)
                return True
        return False

    def _insert(self, pos16: np.ndarray, src: list[str]) -> None:
        """Add breaks standing for `src` at editor positions `pos16` (already in the text)."""
        pos16 = np.concatenate([self.pos16, pos16])
        order = np.argsort(pos16, kind="stable")
        every = self.src + src
        self.pos16, self.src = pos16[order], [every[k] for k in order.tolist()]
        self._index()

    def soft16(self, breaks_before: Callable[[int], int]) -> np.ndarray:
        """The source's UTF-16 positions of the soft breaks (where the editor cut a long line);
        `breaks_before(position16)`: the editor's line breaks before position16 (asked only when
        the usual line ending is not "\\n").

        >>> SourceMap("\\n", [1, 3, 5], ["", "\\r\\n", ""]).soft16(None).tolist()  # "a|b¶c|d"
        [1, 5]
        """
        k = np.flatnonzero(np.array([s == "" for s in self.src], dtype=bool))
        out = self.pos16[k] + self._extra[k]
        if self.newline != "\n" and len(k):
            out += (len(self.newline) - 1) * (np.array([breaks_before(int(p)) for p in self.pos16[k]]) - k)
        return out

    def _joins(self, position16: int, is_break: bool) -> bool:
        """The line break at position16 stands for "\\n" right after a lone CR's."""
        if not is_break or self.newline != "\n" or not self.src:
            return False
        k = int(np.searchsorted(self.pos16, position16 - 1))
        return (k < len(self.src) and self.pos16[k] == position16 - 1 and self.src[k] == "\r"
                and (k + 1 == len(self.src) or self.pos16[k + 1] != position16))

    def source(self, text: str, start16: int = 0) -> str:
        """The source of the editor's text `text`, found at editor position start16.

        >>> m = SourceMap("\\n", [1, 3], ["\\r", "\\u2029"])
        >>> m.source("b\\nc", 2), m.source("a", 0)
        ('b\\u2029c', 'a')
        """
        if not self.src:
            return text if self.newline == "\n" else text.replace("\n", self.newline)
        # subtle: only the breaks inside the text (a text at 0 too: the map's later breaks are not its)
        k0, k1 = np.searchsorted(self.pos16, [start16, start16 + utf16_len(text)]).tolist()
        pos16, src = self.pos16[k0:k1] - start16, self.src[k0:k1]
        cps = pos16
        if len(text) != utf16_len(text):  # UTF-16 positions to code points
            cps = np.searchsorted(to_utf16(text, np.arange(len(text) + 1)), pos16)
        parts, last = [], 0
        for cp, s in zip(cps.tolist(), src):
            parts += [text[last:cp].replace("\n", self.newline), s]
            last = cp + 1
        parts.append(text[last:].replace("\n", self.newline))
        return "".join(parts)


@dataclass(frozen=True)
class EditorText:
    """Text ready for the editor, the source it stands for, and what the editor shows differently."""

    text: str
    newline: str  # the document's usual line ending: "\n", "\r\n" or "\r"
    notes: tuple[str, ...]  # one sentence per difference, for the banner
    # The source's length in UTF-16 units, counted where the text is read (0.1 s for 50 MB: in
    # documents.read_text's worker, not on the UI thread).
    length16: int
    source: str = ""  # the text as tokenized and saved (the file's own)
    map: SourceMap | None = None  # how `text` stands for `source`; None: it is `text` itself


_BLOCK_BREAKS = {"\u2029": "PARAGRAPH SEPARATOR", "\ufdd0": "U+FDD0", "\ufdd1": "U+FDD1"}


def editor_text(text: str, *, soft: bool = True) -> EditorText:
    """The editor's text for `text` (line breaks for what Qt cannot hold, and with `soft`, soft
    breaks in lines longer than LONG_LINE), and the map back.

    >>> t = editor_text("a\\r\\nb\\r\\n")
    >>> t.text, t.newline, t.source, t.notes
    ('a\\nb\\n', '\\r\\n', 'a\\r\\nb\\r\\n', ())
    >>> t = editor_text("a\\nb\\rc\\u2029d")
    >>> t.text, t.map.source(t.text) == t.source, t.notes[0].startswith("2 line break(s)")
    ('a\\nb\\nc\\nd', True, True)
    >>> editor_text("a\\ud83db").notes[0].startswith("1 lone surrogate")
    True
    """
    notes: list[str] = []
    cleaned = clean_text(text)
    if cleaned is not text:
        n = sum(1 for a, b in zip(text, cleaned) if a != b)
        notes.append(f"{n} lone surrogate(s) (not encodable as UTF-8) shown as U+FFFD")
    source = text = cleaned
    crlf, cr_total = text.count("\r\n"), text.count("\r")
    lone_cr = cr_total - crlf
    lf_only = text.count("\n") - crlf
    newline = "\n"
    if crlf and not lone_cr and not lf_only:
        newline = "\r\n"
    elif lone_cr and not crlf and not lf_only:
        newline = "\r"
    # Line breaks that stand for something else than the usual ending: found in the source, as
    # code points, then moved to the editor's UTF-16 positions.
    others = "[\u2029\ufdd0\ufdd1]" if newline != "\n" or not cr_total else "\r\n?|[\u2029\ufdd0\ufdd1]"
    found = [(m.start(), m.group()) for m in re.finditer(others, text)] if cr_total or any(
        ch in text for ch in _BLOCK_BREAKS) else []
    if cr_total:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    for ch in _BLOCK_BREAKS:
        text = text.replace(ch, "\n")
    pos16: list[int] = []
    src = [s for _, s in found]
    if found:
        cps = np.array([p for p, _ in found], dtype=np.int64)
        units = to_utf16(source, cps)
        if crlf:  # each "\r\n" before is one unit in the editor
            code = np.frombuffer(source.encode("utf-16-le", "surrogatepass"), dtype=np.uint16)
            crlf_at = np.flatnonzero((code[:-1] == 13) & (code[1:] == 10))
            units = units - np.searchsorted(crlf_at, units)
        pos16 = units.tolist()
        names = {}
        for _, s in found:
            names[s] = names.get(s, 0) + 1
        notes.append(f"{len(found)} line break(s) stand for " + ", ".join(
            f"{n} {BREAK_NAMES[s]}" for s, n in names.items()) + " (marked at the line end; Qt cannot hold "
            "them): tokenized and saved as they are")
    longest = longest_line(text, LONG_LINE + 1)
    cuts = soft_breaks(text) if soft and longest else []
    if cuts:
        cut16 = to_utf16(text, np.array(cuts, dtype=np.int64))
        text = "\n".join(text[a:b] for a, b in zip([0] + cuts, cuts + [len(text)]))
        # Each soft break moves the breaks after it by one unit.
        pos16 = (np.array(pos16, dtype=np.int64) + np.searchsorted(cut16, pos16)).tolist()
        pos16, src = zip(*sorted(zip(pos16 + (cut16 + np.arange(len(cuts))).tolist(), src + [""] * len(cuts))))
        notes.append(f"a line of {longest:,} characters: shown in pieces of {SOFT_LINE:,} characters "
                     "(a small arrow at the end of each piece), so that editing it stays quick; it is "
                     "tokenized and saved as one line")
    elif longest:
        notes.append(f"a line of {longest:,} characters: lines wrap anywhere, not between words")
    smap = SourceMap(newline, pos16, src)
    return EditorText(text, newline, tuple(notes), utf16_len(source), source, None if smap.identity else smap)


LONG_LINE = 10_000  # characters: a longer line is held in the editor as pieces of SOFT_LINE
SOFT_LINE = 4_000
CUT_AFTER = " ,;}]>"  # a piece preferably ends after one of these...
CUT_REACH = 100  # ...found within this many characters before SOFT_LINE
UNDO_MEMORY = 100  # edits that removed line breaks whose meanings an undo can give back


def soft_breaks(text: str) -> list[int]:
    """The code points of `text` before which the editor cuts its lines longer than LONG_LINE:
    every SOFT_LINE characters, moved back after a space or a separator of minified data within
    CUT_REACH characters if there is one (easier to read), and to the start of a grapheme cluster
    (a cut inside one would change how it is drawn).

    >>> soft_breaks("ab\\n" + "x" * 10_001), soft_breaks("é" * 3_999 + "e\\u0301" * 4_000)
    ([4003, 8003], [3999, 7999])
    >>> soft_breaks("abcdef," * 1_800)  # after a comma
    [3997, 7994, 11991]
    """
    cuts = []
    start = 0
    while start + LONG_LINE < len(text):  # lines found as in `longest_line`
        last = text.rfind("\n", start, start + LONG_LINE + 1)
        if last >= 0:
            start = last + 1
            continue
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        cut = start + SOFT_LINE
        while cut < end:
            after = max(text.rfind(ch, max(start, cut - CUT_REACH), cut) for ch in CUT_AFTER)
            cut = cut if after < 0 else after + 1
            if not (text[cut - 1].isascii() and text[cut].isascii()):
                lo = max(start, cut - 64)
                bounds = [lo + m.start() for m in regex.finditer(r"\X", text[lo:cut + 1]) if m.start()]
                cut = max([b for b in bounds if b <= cut], default=cut)
            cuts.append(cut)
            cut += SOFT_LINE
        start = end + 1
    return cuts


def longest_line(text: str, at_least: int) -> int:
    """The length of the longest line of at least `at_least` characters, or 0 if there is none.

    Reads windows of `at_least` characters from line starts, jumping past the last newline in each,
    so a text of short lines costs len(text) / at_least steps.

    >>> longest_line("ab\\nabcdef\\nabc", 4), longest_line("ab\\nabc", 4)
    (6, 0)
    """
    longest = pos = 0
    while pos + at_least <= len(text):
        last = text.rfind("\n", pos, pos + at_least)
        if last >= 0:
            pos = last + 1
            continue
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        longest = max(longest, end - pos)
        pos = end + 1
    return longest


@dataclass(frozen=True)
class Edit:
    """A change of the editor's text in UTF-16 units: at `position`, `removed` units replaced by
    `added` units."""

    position: int
    removed: int
    added: int

    def start(self, p: int) -> int:
        """Where a token starting at old position p starts now (text inserted at p goes before it)."""
        if p < self.position:
            return p
        if p >= self.position + self.removed:
            return p + self.added - self.removed
        return self.position + self.added

    def end(self, p: int) -> int:
        """Where a token ending at old position p ends now (text inserted at p goes after it)."""
        if p <= self.position:
            return p
        if p >= self.position + self.removed:
            return p + self.added - self.removed
        return self.position

    def back(self, p: int) -> int:
        """An approximate old position for the new position p (inside the insertion: its start)."""
        if p <= self.position:
            return p
        if p >= self.position + self.added:
            return p - self.added + self.removed
        return self.position
