"""Positions at the GUI boundary: the core counts code points, Qt counts UTF-16 code units.

Conversions (`astral_prefix`, `to_utf16`, `utf16_len`), how positions move through an edit
(`Edit`), the worker's copy of the editor's text kept from Qt's edits (`TextMirror`), grapheme
cluster bounds in UTF-16 (`cluster_bounds16`).

Also what the editor can hold: a QTextDocument turns "\\r\\n", "\\r", U+2029 and Qt's frame
markers U+FDD0 / U+FDD1 into block breaks and drops lone surrogates, so text is normalised once,
on its way in (`editor_text`), and the user is told what changed.

No Qt here: plain Python and numpy, testable without a display.

subtle: every astral character (emoji, 𝕏, 𠀀, most flags) is one code point but two UTF-16 units, so
every position after one shifts by one per such character.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.tokenizer import clean_text
from ..core.unicode_info import graphemes


def astral_prefix(text: str) -> np.ndarray:
    """prefix[i] = number of astral characters in text[:i] (int64, length len(text) + 1).

    >>> astral_prefix("a😀b").tolist()
    [0, 0, 1, 1]
    """
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    out = np.zeros(len(cps) + 1, dtype=np.int64)
    np.cumsum(cps > 0xFFFF, dtype=np.int64, out=out[1:])  # dtype: 10x faster than a cast
    return out


def to_utf16(text: str, positions: np.ndarray, prefix: np.ndarray | None = None) -> np.ndarray:
    """Code-point positions of `text` as UTF-16 positions.

    >>> to_utf16("😀x", np.array([0, 1, 2])).tolist()
    [0, 2, 3]
    """
    if prefix is None:
        prefix = astral_prefix(text)
    return positions + prefix[positions]


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units.

    >>> utf16_len("a😀")
    3
    """
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def cluster_bounds16(text: str) -> list[int]:
    """UTF-16 offsets where grapheme clusters (what renders as one character) start, and the end.

    >>> cluster_bounds16("ab👍🏽क्ष")  # the emoji and its skin tone, the conjunct: one cluster each
    [0, 1, 2, 6, 9]
    """
    bounds = [0]
    for start, end in graphemes(text):
        bounds.append(bounds[-1] + utf16_len(text[start:end]))
    return bounds


class TextMirror:
    """A Python copy of the editor's text, kept up to date from Qt's edits (UTF-16 positions), so
    the worker need not ask Qt for the whole text after every keystroke (that costs the UI thread
    several milliseconds on a 1 MB text).

    >>> m = TextMirror("a😀c")
    >>> m.apply(3, 1, "xy")  # replace "c": UTF-16 position 3 is code point 2
    >>> m.text, m.len16
    ('a😀xy', 5)
    """

    def __init__(self, text: str = ""):
        self.reset(text)

    def reset(self, text: str) -> None:
        self.text = text
        self.len16 = utf16_len(text)
        self._astral = self.len16 != len(text)  # may stay True after the last one is deleted

    def apply(self, position16: int, removed16: int, inserted: str) -> None:
        """Replace removed16 UTF-16 units at position16 by `inserted`."""
        text = self.text
        if self._astral:
            # subtle: Qt counts an astral character as two units; find the code-point positions.
            units = text.encode("utf-16-le", "surrogatepass")
            start = len(units[: 2 * position16].decode("utf-16-le", "surrogatepass"))
            end = start + len(units[2 * position16: 2 * (position16 + removed16)].decode("utf-16-le", "surrogatepass"))
        else:
            start, end = position16, position16 + removed16
        self.text = text[:start] + inserted + text[end:]
        added16 = utf16_len(inserted)
        self.len16 += added16 - removed16
        self._astral = self._astral or added16 != len(inserted)


@dataclass(frozen=True)
class EditorText:
    """Text ready for the editor, and what had to change to get there."""

    text: str
    newline: str  # the line ending to write back on save: "\n", "\r\n" or "\r"
    notes: tuple[str, ...]  # one sentence per change, for the banner


_BLOCK_BREAKS = {"\u2029": "PARAGRAPH SEPARATOR", "\ufdd0": "U+FDD0", "\ufdd1": "U+FDD1"}


def editor_text(text: str) -> EditorText:
    """Normalise text for a QTextDocument, remembering the line ending for saving.

    >>> t = editor_text("a\\r\\nb\\r\\n")
    >>> t.text, t.newline, t.notes[0].startswith("CRLF")
    ('a\\nb\\n', '\\r\\n', True)
    >>> editor_text("a\\ud83db\\u2029").notes[0].startswith("1 lone surrogate")
    True
    """
    notes: list[str] = []
    cleaned = clean_text(text)
    if cleaned is not text:
        n = sum(1 for a, b in zip(text, cleaned) if a != b)
        notes.append(f"{n} lone surrogate(s) (not encodable as UTF-8) shown as U+FFFD")
    text = cleaned
    crlf, cr_total = text.count("\r\n"), text.count("\r")
    lone_cr = cr_total - crlf
    lf_only = text.count("\n") - crlf
    newline = "\n"
    if crlf and not lone_cr and not lf_only:
        newline = "\r\n"
    elif lone_cr and not crlf and not lf_only:
        newline = "\r"
    elif cr_total:
        notes.append("mixed line endings (\\n, \\r\\n, \\r) are shown and tokenized as \\n; "
                     "saving writes \\n")
    if newline != "\n":
        notes.append(f"{'CRLF' if newline == chr(13) + chr(10) else 'CR'} line endings are shown and "
                     "tokenized as \\n; saving writes them back")
    if cr_total:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    for ch, name in _BLOCK_BREAKS.items():
        n = text.count(ch)
        if n:
            notes.append(f"{n} {name} character(s) become line breaks in the editor (Qt cannot hold them)")
            text = text.replace(ch, "\n")
    longest = longest_line(text, SLOW_LINE)
    if longest:
        notes.append(f"a line of {longest:,} characters: Qt lays out a whole line again on every edit, "
                     "so typing in it is slow (about half a second a key at a million characters); "
                     "its tokens are exact")
    return EditorText(text, newline, tuple(notes))


SLOW_LINE = 100_000  # characters: editing a line this long in Qt takes a noticeable time


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
