"""Book-sized arrays handed out again once nothing but the recycler holds them.

Each edit of a book builds new per-token columns (ids, byte and code-point bounds, flags, chunk
bounds: about 12 MB for a 1 MB text with an emoji in it) and drops the previous edit's. Freed and
allocated again at every keystroke, blocks that size stay resident in the allocator: glibc serves
them from the editing thread's arena once a large block has been freed, and keeps what is freed at
the top of a thread's arena. The tokenizing server grew by 50 to 130 MB over 10,000 edits so, with
the memory it held growing by 10 to 30 (November 2026). Recycled, an edit writes its columns into
those of the edit before the last, and the arrays a document needs are made once.

An array is free when the recycler's own reference is the only one left: any Encoding, State or
reader in another thread that still holds a column holds a view of its array, so the array is not
handed out while anything can read it. Small arrays come from numpy as usual.

This module chooses nothing about what is allocated: the incremental encoder's splice asks it for
arrays. Not thread-safe: one encoder's edits run one at a time.
"""

from __future__ import annotations

import sys

import numpy as np

SMALL = 1 << 15  # entries: shorter arrays are not recycled (the allocator reuses blocks that small)
KEPT = 8  # free arrays kept at most (an edit's columns of every kind)


def _room(n: int) -> int:
    """Entries made beyond `n`, so that the next edits' arrays (a few tokens more or fewer) fit."""
    return n // 64 + 1024


def _free_references() -> int:
    """The references an array has in `Recycler.empty`'s loop when nothing else holds it: the
    recycler's list, the loop's name, `getrefcount`'s argument (measured, as Python counts them)."""
    arrays = [np.empty(1)]
    for array in arrays:
        return sys.getrefcount(array)
    raise AssertionError


FREE = _free_references()


class Recycler:
    """Arrays for an encoder's edits, each one made again only when no free one fits.

    >>> recycler = Recycler()
    >>> a = recycler.empty(100_000, np.int64)
    >>> address = a.ctypes.data
    >>> b = recycler.empty(100_000, np.int64)  # `a` is still held: another array
    >>> b.ctypes.data != address
    True
    >>> del a
    >>> recycler.empty(100_010, np.int64).ctypes.data == address  # free again: handed out again
    True
    """

    def __init__(self) -> None:
        self._arrays: list[np.ndarray] = []  # oldest first

    def empty(self, n: int, dtype) -> np.ndarray:
        """An uninitialised array of `n` entries of `dtype` (a view of a recycled one, if one is
        free and fits)."""
        dtype = np.dtype(dtype)
        if n < SMALL:
            return np.empty(n, dtype=dtype)
        room = _room(n)
        for array in self._arrays:
            if array.dtype == dtype and n <= len(array) <= n + 2 * room and sys.getrefcount(array) == FREE:
                return array[:n]
        array = None  # (the loop's name holds the last array: `_drop` would not see it free)
        made = np.empty(n + room, dtype=dtype)
        self._arrays.append(made)
        self._drop(KEPT)
        return made[:n]

    def clear(self) -> None:
        """Forget every array (those in use stay with their users): for an encoder kept aside."""
        self._arrays = []

    def _drop(self, kept: int) -> None:
        """Forget the oldest free arrays beyond `kept`."""
        free = []
        for array in self._arrays:
            if sys.getrefcount(array) == FREE:
                free.append(id(array))
        surplus = set(free[:max(0, len(free) - kept)])
        if surplus:
            self._arrays = [array for array in self._arrays if id(array) not in surplus]
