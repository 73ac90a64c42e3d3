"""Unicode normalisation a tokenizer applies before splitting, mapped back to the user's text.

Qwen's tokenizers encode the NFC form of the text. Tokens are found on that form, but a view shows
them on the text the user typed, so every token's place there is needed. NFC changes only short
runs of the text (a letter and the combining marks after it, a Hangul syllable spelled as jamo, a
compatibility character such as U+212B ANGSTROM SIGN); `nfc_alignment` finds those runs, and
`Alignment.to_text` maps byte offsets in the normalised text back to byte offsets in the user's.

This module does not tokenize; it knows nothing of any family.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import numpy as np
import regex

# A character that may change under NFC, or be changed by what follows it: one that is not
# NFC_Quick_Check=Yes, or that has a non-zero combining class (marks may be reordered).
_MAY_CHANGE = regex.compile(r"[^\p{NFC_QC=Y}]|\P{ccc=0}")
_MAY_CHANGE_RUN = regex.compile(r"(?:[^\p{NFC_QC=Y}]|\P{ccc=0})+")


def _stable(ch: str) -> bool:
    """NFC never joins text across a boundary just before a starter that is NFC_QC=Yes."""
    return unicodedata.combining(ch) == 0 and not _MAY_CHANGE.match(ch)


@dataclass(frozen=True)
class Alignment:
    """Where NFC changed the text: parallel arrays of UTF-8 byte ranges, in the user's text
    ([text_starts, text_ends)) and in the normalised text ([norm_starts, norm_ends))."""

    normalized: str
    text_starts: np.ndarray
    text_ends: np.ndarray
    norm_starts: np.ndarray
    norm_ends: np.ndarray

    def to_text(self, offsets: np.ndarray, *, end: bool) -> np.ndarray:
        """Byte offsets in the normalised text -> byte offsets in the user's text. An offset
        inside a changed run goes to the run's start (`end` False) or end (`end` True), so a token
        that covers part of a run covers all of it in the user's text.

        >>> a = nfc_alignment("ae\\u0301b")  # "e" + COMBINING ACUTE (3 bytes) -> "é" (2 bytes)
        >>> a.to_text(np.array([0, 1, 2, 3, 4]), end=False).tolist()
        [0, 1, 1, 4, 5]
        """
        offsets = np.asarray(offsets, dtype=np.int64)
        # k: the last run that starts before the offset.
        k = np.searchsorted(self.norm_starts, offsets, side="right") - 1
        out = offsets.copy()
        has = k >= 0
        kk = np.where(has, k, 0)
        inside = has & (offsets < self.norm_ends[kk]) & (offsets > self.norm_starts[kk])
        # After run k (or at its start): shift by how much the runs up to k changed the length.
        shift = np.concatenate([[0], np.cumsum((self.text_ends - self.text_starts)
                                               - (self.norm_ends - self.norm_starts))])
        after = has & (offsets >= self.norm_ends[kk])
        out = np.where(after, offsets + shift[kk + 1], offsets + np.where(has, shift[kk], 0))
        at_start = has & (offsets == self.norm_starts[kk])
        out = np.where(at_start, self.text_starts[kk], out)
        target = self.text_ends if end else self.text_starts
        return np.where(inside, target[kk], out)

    def touched(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Whether each user-text byte range [start, end) overlaps a changed run (bool array)."""
        k = np.searchsorted(self.text_starts, ends, side="left") - 1  # last run starting before end
        kk = np.where(k >= 0, k, 0)
        return (k >= 0) & (self.text_ends[kk] > starts) & (ends > starts)


def nfc_stable_window(text: str, start: int, end: int) -> tuple[int, int]:
    """The smallest [lo, hi) around text[start:end] that NFC normalises on its own: both ends lie
    just before a stable character (or at an end of the text). If the text outside an edit was NFC,
    the whole is NFC exactly when this window of the edited text is.

    >>> nfc_stable_window("abe\u0301\u0301c", 3, 4)
    (2, 5)
    """
    lo = min(start, len(text))
    while lo > 0 and (lo == len(text) or not _stable(text[lo])):
        lo -= 1
    hi = max(end, lo)
    while hi < len(text) and not _stable(text[hi]):
        hi += 1
    return lo, hi


def nfc_alignment(text: str) -> Alignment | None:
    """None if `text` is already NFC; else its NFC form and the runs NFC changed.

    >>> a = nfc_alignment("Cafe\\u0301 \\u1100\\u1161")
    >>> a.normalized == "Café 가", a.text_starts.tolist(), a.norm_starts.tolist()
    (True, [3, 7], [3, 6])
    """
    if unicodedata.is_normalized("NFC", text):
        return None
    runs: list[tuple[int, int]] = []  # code-point runs [l, r) to normalise on their own
    for m in _MAY_CHANGE_RUN.finditer(text):
        p, q = m.span()
        if runs and p < runs[-1][1]:
            continue
        l = p - 1
        while l > 0 and not _stable(text[l]):
            l -= 1
        l = max(l, 0)
        if runs and l < runs[-1][1]:
            l = runs.pop()[0]
        r = q
        while r < len(text) and not _stable(text[r]):
            r += 1
        runs.append((l, r))
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    nstarts: list[int] = []
    nends: list[int] = []
    pos = ubyte = nbyte = 0
    for l, r in runs:
        same = text[pos:l]
        pieces.append(same)
        n = len(same.encode("utf-8"))
        ubyte += n
        nbyte += n
        original, changed = text[l:r], unicodedata.normalize("NFC", text[l:r])
        pieces.append(changed)
        ulen, nlen = len(original.encode("utf-8")), len(changed.encode("utf-8"))
        if original != changed:
            starts.append(ubyte)
            ends.append(ubyte + ulen)
            nstarts.append(nbyte)
            nends.append(nbyte + nlen)
        ubyte += ulen
        nbyte += nlen
        pos = r
    pieces.append(text[pos:])
    normalized = "".join(pieces)
    if normalized != unicodedata.normalize("NFC", text):  # not expected; stay right regardless
        whole = unicodedata.normalize("NFC", text)
        starts, ends, nstarts, nends = [0], [len(text.encode("utf-8"))], [0], [len(whole.encode("utf-8"))]
        normalized = whole
    as_array = lambda v: np.array(v, dtype=np.int64)  # noqa: E731
    return Alignment(normalized, as_array(starts), as_array(ends), as_array(nstarts), as_array(nends))
