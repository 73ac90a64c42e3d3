"""The token at the caret: one rule for every view that shows it.

A caret sits between two characters, so at a token boundary two tokens touch it ("Comb|ining").
The rule: the token that holds the character after the caret (the one starting there, at a
boundary); where no token holds it (at the end of the text, or before text the split pattern
dropped), the token that holds the character before it; else none. Where several tokens share
the character (byte-level pieces of one emoji), the first of them.

The window's editor reports it (in UTF-16 units) to `AppState.caret`, which the Token IDs table,
the merge tree, the encode trace and the inspector follow; the inspector's caret range
(`selection.caret_range`, in code points) is the same rule. Positions may be code points or
UTF-16 units, as long as they are the same as the spans'.
"""

from __future__ import annotations

import numpy as np


def token_at_caret(starts: np.ndarray, ends: np.ndarray, position: int) -> int | None:
    """Index of the token at a caret at `position`, given the tokens' sorted spans.

    >>> starts, ends = np.array([0, 4]), np.array([4, 9])  # "Comb" "ining"
    >>> token_at_caret(starts, ends, 4), token_at_caret(starts, ends, 9), token_at_caret(starts, ends, 2)
    (1, 1, 0)
    >>> token_at_caret(np.array([], dtype=int), np.array([], dtype=int), 0) is None
    True
    """
    for p in (position, position - 1):
        if p < 0:
            break
        i = int(ends.searchsorted(p, side="right"))  # the first token ending after p
        if i < len(ends) and starts[i] <= p:
            return i
    return None


def tokens_in_selection(starts: np.ndarray, ends: np.ndarray, start: int, end: int) -> range:
    """Indices of the tokens a selection [start, end) touches (empty for an empty selection), given
    the tokens' sorted spans; the selection's counterpart of `token_at_caret`.

    >>> starts, ends = np.array([0, 4, 9]), np.array([4, 9, 10])  # "Comb" "ining" "."
    >>> tokens_in_selection(starts, ends, 2, 5), tokens_in_selection(starts, ends, 4, 9)
    (range(0, 2), range(1, 2))
    >>> tokens_in_selection(starts, ends, 5, 5)
    range(0, 0)
    """
    if end <= start:
        return range(0)
    first = int(ends.searchsorted(start, side="right"))
    last = int(starts.searchsorted(end, side="left"))
    return range(first, max(first, last))
