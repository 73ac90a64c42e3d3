"""Token colours and the application palettes, light and dark.

A token's colour is keyed on its id, so it survives edits: inserting text recolours only the tokens
that changed, never every later token (a scheme keyed on the token's index would). Neighbours
never share a colour: a token whose id hashes to its left neighbour's colour takes the colour
opposite it in the palette (index + N_COLOURS, drawn as colour (c + N_COLOURS / 2) mod N_COLOURS).
A token's colour depends only on its id and its left neighbour's colour, so after an edit the
colours are recomputed only until they agree with the old ones again (`update_colours`).

Three schemes (`SCHEMES`), each in a light and a dark variant: "soft" pastels, "strong" (the
Okabe-Ito colours, told apart with the common kinds of colour blindness, with a thin line at each
boundary) and "boundaries" (no backgrounds, a thin line at each boundary). Special tokens,
byte-fallback pieces and partial-character tokens get their own look on top (a purple box, a
dashed or a wavy underline); a dotted underline marks a cluster with a token boundary inside it.
This module computes colours; it does not decide what to highlight, nor paint.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette, QTextCharFormat

from tokexplorer.core.encoding import TokenFlag
from tokexplorer.core.token_colours import N_COLOURS, drawn_colour

# A GUI-only flag beside the TokenFlag bits: a token boundary falls inside this grapheme cluster,
# which is drawn in one colour (see editor._snap_to_clusters).
CLUSTER_SPLIT = 0x80
SCHEMES = {"soft": "Soft", "strong": "Strong (colour-blind safe)", "boundaries": "Boundaries Only"}
DEFAULT_SCHEME = "soft"


# The Okabe-Ito colours and a grey, ordered so that entry i and entry i + 4 (a token and a shifted
# neighbour) stay far apart with protanopia and deuteranopia too (orange / sky blue, grey /
# vermillion, reddish purple / yellow, blue / bluish green); mixed with the theme's background so
# that text on them stays readable.
_OKABE_ITO = ["#e69f00", "#999999", "#cc79a7", "#0072b2", "#56b4e9", "#d55e00", "#f0e442", "#009e73"]


def _mix(colour: str, towards: str, amount: float) -> QColor:
    a, b = QColor(colour), QColor(towards)
    return QColor.fromRgbF(*(x + (y - x) * amount for x, y in
                             zip((a.redF(), a.greenF(), a.blueF()), (b.redF(), b.greenF(), b.blueF()))))


def _backgrounds(scheme: str, dark: bool) -> list[QColor]:
    if scheme == "strong":
        return [_mix(c, "#000000", 0.6) if dark else _mix(c, "#ffffff", 0.35) for c in _OKABE_ITO]
    if scheme == "soft":
        # Eight hues round the wheel; entries next to each other on it differ in lightness too.
        return [QColor.fromHslF(i / N_COLOURS, 0.5 if dark else 0.8,
                                (0.19 if i % 2 else 0.26) if dark else (0.87 if i % 2 else 0.79))
                for i in range(N_COLOURS)]
    return []


class TokenPalette:
    """The colours the editor paints under and over the text, for one scheme and theme: token
    backgrounds by colour index, boundary lines, the looks of flagged tokens, and the extra
    format of the hovered token."""

    def __init__(self, dark: bool, scheme: str = DEFAULT_SCHEME):
        self.dark = dark
        self.scheme = scheme if scheme in SCHEMES else DEFAULT_SCHEME
        self._backgrounds = _backgrounds(self.scheme, dark)
        # A thin line at every token start: alone it shows the tokens; with strong colours it
        # keeps boundaries visible to those who cannot tell two colours apart.
        self.boundary: QColor | None = None if self.scheme == "soft" else (
            QColor("#9e9e9e") if dark else QColor("#616161"))

    def background(self, colour_index: int) -> QColor | None:
        """A token's background; None in the boundaries-only scheme."""
        if not self._backgrounds:
            return None
        return self._backgrounds[drawn_colour(colour_index)]

    def special(self) -> tuple[QColor, QColor]:
        """(background, outline) of a special token."""
        if self.dark:
            return QColor("#4a148c"), QColor("#ce93d8")
        return QColor("#e1bee7"), QColor("#7b1fa2")

    def marker(self, flag: int) -> QColor:
        """The line colour of a flag's marker: PARTIAL, BYTE_FALLBACK, NORMALIZED or CLUSTER_SPLIT."""
        light, dark = {TokenFlag.PARTIAL: ("#d50000", "#ff8a80"),
                       TokenFlag.BYTE_FALLBACK: ("#e65100", "#ffb74d"),
                       TokenFlag.NORMALIZED: ("#1565c0", "#90caf9"),
                       CLUSTER_SPLIT: ("#37474f", "#cfd8dc")}[flag]
        return QColor(dark if self.dark else light)

    def refused(self) -> QColor:
        """The marks of text that spells a special token the policy refused."""
        return QColor("#ff5252") if self.dark else QColor("#d50000")

    def marked(self) -> QTextCharFormat:
        """The extra format of each occurrence of the token picked in the merge tree."""
        fmt = QTextCharFormat()
        fmt.setBackground(QColor("#80deea") if not self.dark else QColor("#00838f"))
        fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
        fmt.setUnderlineColor(QColor("#006064") if not self.dark else QColor("#e0f7fa"))
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
