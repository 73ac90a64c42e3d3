"""Each token's colour index, keyed on its id so that it survives edits.

A token's colour depends only on its id and its left neighbour's colour: neighbours never share a
colour (a token whose id hashes to its left neighbour's colour takes the one opposite it in the
palette, index + N_COLOURS). After an edit the colours are recomputed only until they agree with
the old ones again (`update_colours`). Numbers only: the palettes that draw them live in the GUI.
"""

from __future__ import annotations

import numpy as np

N_COLOURS = 8  # colours per palette; a colour index is below 2 * N_COLOURS


def colour_indices(ids: np.ndarray) -> np.ndarray:
    """Per token (uint8): its id's colour in [0, N_COLOURS), or that plus N_COLOURS where it would
    have had its left neighbour's colour (then it is drawn in the opposite colour).

    A long text's ids are coloured COLOUR_BLOCK at a time (a few megabytes of temporaries, not
    hundreds for 13 million tokens), each block carrying on from the last token of the one before.

    >>> colour_indices(np.array([5, 5, 5])).tolist() == [c := int(colour_indices(np.array([5]))[0]), c + 8, c]
    True
    """
    ids = np.asarray(ids)
    out = np.empty(len(ids), dtype=np.uint8)
    shifted_before = False  # the token before the block is drawn opposite its own colour
    for a in range(0, len(ids), COLOUR_BLOCK):
        b = min(a + COLOUR_BLOCK, len(ids))
        lo = max(a - 1, 0)  # from the token before the block: the chain runs on through it
        h = _hashed(ids[lo:b])
        shifted = _shifted(h, shifted_before and a > 0)
        np.add(h[a - lo:], shifted[a - lo:] * np.uint8(N_COLOURS), out=out[a:b])
        shifted_before = bool(shifted[-1])
    return out


COLOUR_BLOCK = 1 << 20  # tokens coloured at a time


def _hashed(ids: np.ndarray) -> np.ndarray:
    """Each id's colour (uint8) in [0, N_COLOURS), by Knuth's multiplicative hash: nearby ids
    (common in BPE vocabularies) get unrelated colours."""
    ids = ids.astype(np.uint64)
    ids *= np.uint64(2654435761)
    ids &= np.uint64(0xFFFFFFFF)
    ids >>= np.uint64(16)
    return (ids % np.uint64(N_COLOURS)).astype(np.uint8)


def _shifted(h: np.ndarray, first: bool) -> np.ndarray:
    """Which tokens are drawn opposite their colour (bool), given their colours `h` and whether the
    first is.

    shifted[i] (token i drawn opposite) = h[i] equals the colour drawn for token i - 1. With
    d = h[i] - h[i-1] (mod N): after an unshifted token that is d == 0, after a shifted one
    d == N/2; any other d resets the chain. Within a chain of d in {0, N/2}, shifted[i] =
    shifted[i-1] xor (d == 0): a running parity of the zeros since the chain began.
    """
    n = len(h)
    d = (h[1:].astype(np.int16) - h[:-1]) % N_COLOURS
    count = np.zeros(n, dtype=np.int32)  # zeros of d up to each token
    np.cumsum(d == 0, dtype=np.int32, out=count[1:])
    reset = np.ones(n, dtype=bool)
    reset[1:] = (d != 0) & (d != N_COLOURS // 2)
    at_reset = np.maximum.accumulate(np.where(reset, np.arange(n, dtype=np.int32), 0))
    shifted = ((count - count[at_reset]) & 1).astype(bool)
    if first:  # the chain the first token began runs on from a shifted token
        shifted[at_reset == 0] ^= True
    return shifted


def drawn_colour(index: int) -> int:
    """The palette entry an index is drawn with: neighbours' entries always differ.

    >>> drawn_colour(3), drawn_colour(3 + N_COLOURS)
    (3, 7)
    """
    return (index + N_COLOURS // 2) % N_COLOURS if index >= N_COLOURS else index


def update_colours(old: np.ndarray, ids: np.ndarray | list[int], first: int, stop: int,
                   empty=np.empty) -> tuple[np.ndarray, int, int]:
    """The colours of `ids` after an edit, recomputing only near it; also the range of tokens
    recomputed (every colour outside it is the old one).

    `old` are the colours before the edit; tokens before `first` are unchanged and every token from
    `stop` on equals old token i - (len(ids) - len(old)). Recomputing starts at a token that began a
    shade run (so its colour cannot depend on what came before) and stops once a recomputed colour
    equals the old one past the edit: everything after that follows identically. The new colours
    are written into `empty(n, dtype)` (an encoder's recycled arrays, `core.incremental.recycler`).

    >>> ids = [5, 5, 5, 7, 8, 9]
    >>> new = ids[:1] + [3] + ids[1:]
    >>> colours, lo, hi = update_colours(colour_indices(np.array(ids)), new, 1, 2)
    >>> colours.tolist() == colour_indices(np.array(new)).tolist(), lo <= 1, hi >= 2
    (True, True, True)
    """
    shift = len(ids) - len(old)
    start = max(first - 1, 0)
    while start > 0 and old[start] >= N_COLOURS:
        start -= 1
    end = stop + 8
    while True:
        end = min(end, len(ids))
        mid = colour_indices(np.asarray(ids[start:end], dtype=np.int64))
        if end == len(ids) or (end > stop and mid[-1] == old[end - 1 - shift]):
            out = empty(len(ids), dtype=np.uint8)
            out[:start], out[start:end], out[end:] = old[:start], mid, old[end - shift:]
            return out, start, end
        end = stop + 2 * (end - stop)
