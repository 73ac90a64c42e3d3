"""Token colours and the application palettes, light and dark.

A token's colour is keyed on its id, so it survives edits: inserting text recolours only the tokens
that changed, never every later token (a scheme keyed on the token's index would). Two neighbours
whose ids hash to the same hue are told apart by alternating a lighter and a darker shade along
such a run; a run ends at the first different hue, so this too stays local to an edit.

Special tokens, byte-fallback pieces and partial-character tokens get their own look on top of the
hue (a strong purple, a dashed or a wavy underline), so they read differently in both themes; a
dotted underline marks a grapheme cluster with a token boundary inside it.
This module computes colours and formats; it does not decide what to highlight.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette, QTextCharFormat

from ..core.encoding import TokenFlag

N_HUES = 10
# A GUI-only flag beside the TokenFlag bits: a token boundary falls inside this grapheme cluster,
# which is drawn in one colour so that Qt shapes it whole (see editor._snap_to_clusters).
CLUSTER_SPLIT = 0x80
# Hue angles spread round the wheel, ordered so that neighbouring indices are far apart.
_HUES = [0.58, 0.08, 0.33, 0.83, 0.14, 0.47, 0.95, 0.25, 0.70, 0.40]


def colour_indices(ids: np.ndarray) -> np.ndarray:
    """Per token (uint8): hue index in [0, N_HUES) plus N_HUES on every other token of a same-hue
    run.

    >>> c = colour_indices(np.array([5, 5, 5]))
    >>> bool(c[1] == c[0] + N_HUES and c[2] == c[0])
    True
    """
    ids = np.asarray(ids, dtype=np.uint64)
    # Knuth's multiplicative hash: nearby ids (common in BPE vocabularies) get unrelated hues.
    hue = (((ids * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)) >> np.uint64(16)) % np.uint64(N_HUES)
    hue = hue.astype(np.uint8)  # uint8: below 2 * N_HUES, and a book has a million of them
    if len(hue) < 2:
        return hue
    run_start = np.ones(len(hue), dtype=bool)
    run_start[1:] = hue[1:] != hue[:-1]
    start_index = np.maximum.accumulate(np.where(run_start, np.arange(len(hue)), 0))
    odd = ((np.arange(len(hue)) - start_index) & 1).astype(bool)
    hue[odd] += N_HUES
    return hue


def update_colours(old: np.ndarray, ids: list[int], first: int, stop: int) -> tuple[np.ndarray, int, int]:
    """The colours of `ids` after an edit, recomputing only near it; also the range of tokens
    recomputed (every colour outside it is the old one).

    `old` are the colours before the edit; tokens before `first` are unchanged and every token from
    `stop` on equals old token i - (len(ids) - len(old)). Recomputing starts at a token that began a
    shade run (so its colour cannot depend on what came before) and stops once a recomputed colour
    equals the old one past the edit: everything after that follows identically.

    >>> ids = [5, 5, 5, 7, 8, 9]
    >>> new = ids[:1] + [3] + ids[1:]
    >>> colours, lo, hi = update_colours(colour_indices(np.array(ids)), new, 1, 2)
    >>> colours.tolist() == colour_indices(np.array(new)).tolist(), lo <= 1, hi >= 2
    (True, True, True)
    """
    shift = len(ids) - len(old)
    start = max(first - 1, 0)
    while start > 0 and old[start] >= N_HUES:
        start -= 1
    end = stop + 8
    while True:
        end = min(end, len(ids))
        mid = colour_indices(np.fromiter(ids[start:end], dtype=np.int64, count=end - start))
        if end == len(ids):
            return np.concatenate([old[:start], mid]), start, end
        if end > stop and mid[-1] == old[end - 1 - shift]:
            return np.concatenate([old[:start], mid, old[end - shift:]]), start, end
        end = stop + 2 * (end - stop)


class TokenPalette:
    """The colours the editor paints under and over the text, for one theme: token backgrounds
    by colour index, the looks of flagged tokens, and the extra formats (hover, refusal)."""

    def __init__(self, dark: bool):
        self.dark = dark

    def background(self, colour_index: int) -> QColor:
        hue = _HUES[colour_index % N_HUES]
        shade = colour_index // N_HUES  # 0 or 1: the alternate shade of a same-hue run
        if self.dark:
            return QColor.fromHslF(hue, 0.45, 0.26 + 0.08 * shade)
        return QColor.fromHslF(hue, 0.75, 0.86 - 0.07 * shade)

    def special(self) -> tuple[QColor, QColor]:
        """(background, outline) of a special token."""
        if self.dark:
            return QColor("#4a148c"), QColor("#ce93d8")
        return QColor("#e1bee7"), QColor("#7b1fa2")

    def marker(self, flag: int) -> QColor:
        """The line colour of a flag's underline: PARTIAL, BYTE_FALLBACK or CLUSTER_SPLIT."""
        light, dark = {TokenFlag.PARTIAL: ("#d50000", "#ff8a80"),
                       TokenFlag.BYTE_FALLBACK: ("#e65100", "#ffb74d"),
                       CLUSTER_SPLIT: ("#37474f", "#cfd8dc")}[flag]
        return QColor(dark if self.dark else light)

    def refused(self) -> QTextCharFormat:
        """The extra format of a special token that the policy refused."""
        fmt = QTextCharFormat()
        fmt.setBackground(QColor("#ffcdd2") if not self.dark else QColor("#7f1d1d"))
        fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        fmt.setUnderlineColor(QColor("#d50000") if not self.dark else QColor("#ff8a80"))
        return fmt

    def hover(self) -> QTextCharFormat:
        """The extra format of the token under the mouse (or picked in the token-id view)."""
        fmt = QTextCharFormat()
        fmt.setBackground(QColor("#ffd54f") if not self.dark else QColor("#8d6e00"))
        return fmt


def application_palette(dark: bool) -> QPalette:
    """The Fusion palette for the light or dark theme."""
    p = QPalette()
    if not dark:
        return p
    window, base, text = QColor(45, 45, 48), QColor(30, 30, 30), QColor(220, 220, 220)
    p.setColor(QPalette.ColorRole.Window, window)
    p.setColor(QPalette.ColorRole.WindowText, text)
    p.setColor(QPalette.ColorRole.Base, base)
    p.setColor(QPalette.ColorRole.AlternateBase, window)
    p.setColor(QPalette.ColorRole.ToolTipBase, base)
    p.setColor(QPalette.ColorRole.ToolTipText, text)
    p.setColor(QPalette.ColorRole.Text, text)
    p.setColor(QPalette.ColorRole.Button, window)
    p.setColor(QPalette.ColorRole.ButtonText, text)
    p.setColor(QPalette.ColorRole.Highlight, QColor(38, 79, 120))
    p.setColor(QPalette.ColorRole.HighlightedText, Qt.GlobalColor.white)
    p.setColor(QPalette.ColorRole.PlaceholderText, QColor(140, 140, 140))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor(120, 120, 120))
    return p
