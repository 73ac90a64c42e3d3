"""Which tokens one laid-out line shows, and where: Qt-free arithmetic on UTF-16 positions.

Holds the ranges a view paints on a line: the result's tokens clipped to the line, moved through
the edits made since the result's text (so nothing flickers between a keystroke and its tokens),
the text the split pattern dropped, and boundaries inside a grapheme cluster moved to its end.
Does not hold the painting itself (`token_paint`) nor the view that asks (`token_view`).

subtle: every position here is a UTF-16 unit, as Qt counts; the result's spans come converted by
the worker (`Tokenized.starts16`).
"""

from __future__ import annotations

import bisect

import numpy as np

from tokexplorer.core.positions import Edit, cluster_bounds16
from tokexplorer.gui.widgets.colours import CLUSTER_SPLIT
from tokexplorer.server.tokenized import DROPPED, Tokenized

# (start, end, colour index, flags, cut): cut is where the token really ended when its end was
# moved to the end of a grapheme cluster, else None
Range = tuple[int, int, int, int, int | None]


def line_ranges(result: Tokenized | None, edits: list[Edit], lo: int, hi: int, text: str) -> list[Range]:
    """The tokens of `result` in UTF-16 range [lo, hi) of one line whose text is `text`, clipped
    to it, with boundaries inside a grapheme cluster moved to its end.

    `edits`: the edits made since the result's text, oldest first; the result's tokens are moved
    through them (a provisional picture until the new text's tokens arrive).
    """
    if result is None or hi <= lo:
        return []
    old_lo, old_hi = lo, hi  # the same range in the result's text
    for e in reversed(edits):
        old_lo, old_hi = e.back(old_lo), e.back(old_hi)
    starts, ends = result.starts16, result.ends16
    colours, flags = result.colours, result.flags
    ranges = []
    near = result.range16(old_lo - 1 if edits else old_lo, old_hi + 1 if edits else old_hi)
    i, j = near.start, near.stop
    for s, t, colour, flag in zip(starts[i:j].tolist(), ends[i:j].tolist(), colours[i:j].tolist(),
                                  flags[i:j].tolist()):
        for e in edits:
            s, t = e.start(s), e.end(t)
        s, t = max(s, lo), min(t, hi)
        if t > s:
            ranges.append((s, t, colour, flag))
    dropped = result.dropped16
    if dropped is not None:  # text the split pattern left out: a piece of its own, no colour
        k0 = int(np.searchsorted(dropped[:, 1], old_lo, side="right"))
        k1 = int(np.searchsorted(dropped[:, 0], old_hi, side="left"))
        for s, t in dropped[k0:k1].tolist():
            for e in edits:
                s, t = e.start(s), e.end(t)
            s, t = max(s, lo), min(t, hi)
            if t > s:
                ranges.append((s, t, 0, DROPPED))
    return snap_to_clusters(lo, text, ranges)


def snap_to_clusters(lo: int, text: str, ranges: list[tuple[int, int, int, int]]) -> list[Range]:
    """Move token boundaries that fall inside a grapheme cluster to the cluster's end.

    Such a cluster takes the colour of the token it starts in and is marked (a dotted
    underline, and a short tick under it where Qt places the real boundary); the tooltip and the
    token-id view still show every token. The text itself is never split: shaping does not
    depend on tokens.

    >>> snap_to_clusters(10, "e\\u0301x", [(10, 11, 1, 0), (11, 13, 2, 0)])[0][:2]
    (10, 12)
    """
    if text.isascii():
        return [(s, t, c, f, None) for s, t, c, f in ranges]
    bounds = [lo + b for b in cluster_bounds16(text)]
    snapped = []
    for s, t, colour, flags in ranges:
        k = bisect.bisect_left(bounds, s)
        s2 = bounds[k] if k < len(bounds) else s
        k = bisect.bisect_left(bounds, t)
        t2 = bounds[k] if k < len(bounds) else t
        if t2 > s2:
            snapped.append((s2, t2, colour, flags | CLUSTER_SPLIT if t2 != t else flags,
                            t if t2 != t else None))
    return snapped
