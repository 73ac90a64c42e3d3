"""What an incremental encoder keeps between edits, and what its locality rules share.

`State` is an Encoding with, for the regex rules, the bounds of its chunks (or `PendingChunks`:
a split still running in another thread). `first_token` finds a chunk's first token, `tiled`
checks that chunks tile a text, `next_special` finds the next allowed special token. `NotLocal` and
`Abandoned` are how a rule says that a window cannot be proved exact, or that nothing wants a
split any more.

It holds no rule and encodes nothing.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Sequence

import numpy as np

from tokexplorer.core.encoding import Encoding

Changed = tuple[int, int]  # (start, end) code points of the new text whose tokens changed


class NotLocal(Exception):
    """A window's split met what the rule does not model: encode the whole text instead."""


class Abandoned(Exception):
    """Nothing wants the chunks of a split still running (its text was replaced): it stops."""


class PendingChunks:
    """A text's regex chunks as a split running in another thread finds them (`RegexRule.bounds`);
    read on first use. `bounds` and `spans` (the (starts, ends) arrays an Encoding keeps) wait for
    the split, and raise what it raised; both are None when the chunks do not tile the text."""

    def __init__(self, split: Future):
        self._split = split

    @property
    def bounds(self) -> np.ndarray | None:
        return self._split.result()

    def spans(self) -> tuple[np.ndarray, np.ndarray] | None:
        bounds = self.bounds
        return None if bounds is None else (bounds[:-1], bounds[1:])


class State:
    """An Encoding and, for the regex rules, its chunks: chunk i spans code points
    chunk_bounds[i] to chunk_bounds[i + 1] (the chunks tile the text, so one array splices for
    both ends), or a split still running (`PendingChunks`). A chunk's first token is the first that
    starts at or after the chunk's start: a search, not another array to splice."""

    __slots__ = ("enc", "_chunks")

    def __init__(self, enc: Encoding, chunk_bounds: np.ndarray | PendingChunks | None = None):
        self.enc = enc
        self._chunks = chunk_bounds

    @property
    def chunk_bounds(self) -> np.ndarray | None:  # int64 [m + 1]
        if isinstance(self._chunks, PendingChunks):
            # A split that failed raises here once; the edits after it encode the whole text.
            chunks, self._chunks = self._chunks, None
            self._chunks = chunks.bounds
        return self._chunks

    @property
    def chunk_starts(self) -> np.ndarray:
        return self.chunk_bounds[:-1]

    @property
    def chunk_ends(self) -> np.ndarray:
        return self.chunk_bounds[1:]


def tiled(starts: np.ndarray, ends: np.ndarray, n: int) -> np.ndarray | None:
    """The bounds of chunks that tile text[0:n] one after another, or None if they do not.

    >>> tiled(np.array([0, 2]), np.array([2, 5]), 5).tolist(), tiled(np.array([0]), np.array([2]), 5)
    ([0, 2, 5], None)
    """
    if not len(starts):
        return np.zeros(1, dtype=np.int64) if n == 0 else None
    if starts[0] != 0 or ends[-1] != n or not np.array_equal(starts[1:], ends[:-1]):
        return None
    return np.append(starts, n).astype(np.int64, copy=False)


def first_token(state: State, chunk: int) -> int:
    """Index of the first token of a chunk (the number of tokens past the last chunk): tokens
    never cross a chunk's start, so it is the first token starting at or after it."""
    starts = state.chunk_starts
    if chunk >= len(starts):
        return len(state.enc.ids)
    return int(state.enc.starts.searchsorted(starts[chunk], side="left"))


def next_special(text: str, pos: int, end: int, order: Sequence[str]) -> tuple[int, str | None]:
    """The leftmost allowed special token in text[pos:end], ties to the earliest in `order` (as a
    regex alternation in that order finds it): (start, token), or (end, None)."""
    best, found = end, None
    for token in order:
        at = text.find(token, pos, end)
        if 0 <= at < best:
            best, found = at, token
    return best, found
