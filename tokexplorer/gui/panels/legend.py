"""What the editor's colours and marks mean, one glance away: the View > Token Colours menu
(soft, strong, boundaries only) and a compact legend strip under the editor whose entries are
drawn as the editor draws them, each with a tooltip in plain words (the boxed label of an invisible
character among them, always shown, so the strip never moves when a text holds one)."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize
from PySide6.QtGui import QAction, QActionGroup, QFontMetricsF, QPainter, QPalette
from PySide6.QtWidgets import QMenu, QSizePolicy, QWidget

from tokexplorer.core.encoding import TokenFlag
from tokexplorer.gui.widgets.colours import CLUSTER_SPLIT, SCHEMES, TokenPalette
from tokexplorer.gui.widgets.flow_layout import FlowLayout
from tokexplorer.gui.state import AppState
from tokexplorer.gui.editor.invisibles import PAD, Drawn, box_width, marker_font, paint_invisibles, room
from tokexplorer.gui.editor.token_paint import Piece, paint_backgrounds, paint_markers
from tokexplorer.server.tokenized import DROPPED, REFUSED


def token_colours_menu(state: AppState, parent) -> QMenu:
    """View > Token Colours: one checkable entry per scheme, following the state both ways."""
    menu = QMenu("Token &Colours", parent)
    menu.setObjectName("token_colours_menu")
    group = QActionGroup(menu)
    actions: dict[str, QAction] = {}
    for scheme, label in SCHEMES.items():
        action = menu.addAction(label)
        action.setCheckable(True)
        action.setData(scheme)
        action.triggered.connect(lambda checked=False, s=scheme: state.set_token_colours(s))
        group.addAction(action)
        actions[scheme] = action
    actions[state.token_colours].setChecked(True)
    state.token_colours_changed.connect(lambda s: actions[s].setChecked(True))
    return menu


# (what, sample text, colour indices and flags of its two tokens, tooltip)
ENTRIES = [
    ("tokens", ("to", "ken"), ((0, 0), (5, 0)),
     "Each token is painted in a colour that follows its id, so a token keeps its colour while you "
     "edit elsewhere; two tokens side by side never share a colour. Hover a token for its id and bytes."),
    ("special", ("<|eot|>",), ((0, TokenFlag.SPECIAL),),
     "A special token such as <|endoftext|>: one id that ordinary text never produces. It is only "
     "encoded as special when the special-token policy allows it."),
    ("part of a character", ("👋",), ((2, TokenFlag.PARTIAL),),
     "Wavy underline: the token holds only some of a character's UTF-8 bytes, so the character is "
     "split across tokens (common for emoji and non-Latin scripts under byte-level BPE such as GPT-2)."),
    ("byte fallback", ("á",), ((3, TokenFlag.BYTE_FALLBACK),),
     "Dashed underline: the character is not in the SentencePiece vocabulary, so it is spelled as its "
     "raw UTF-8 bytes, one <0x..> piece per byte."),
    ("boundary in a character", ("e\u0301",), ((4, CLUSTER_SPLIT),),
     "Dotted underline and tick: a token boundary falls inside what is drawn as one character (an "
     "accent, a conjunct, a syllable, an emoji sequence). The text is drawn whole, coloured as the token "
     "it starts in; the tick shows where the boundary falls. Hover it for each token."),
    ("normalised", ("Å",), ((7, TokenFlag.NORMALIZED),),
     "Blue overline: the tokenizer changed this text before splitting it (Qwen's NFC, a lowercasing or "
     "accent-stripping tokenizer.json, or an unknown character): the token's bytes are not the text "
     "under it, and decoding gives the changed text back."),
    ("dropped", (", ",), ((0, DROPPED),),
     "Struck through, uncoloured: text the tokenizer's split pattern does not match (a custom pattern "
     "such as [a-z]+). minbpe and tiktoken give it no token at all: the ids skip it."),
    ("refused", ("<|e|>",), ((6, REFUSED),),
     "Red bars: text that spells a special token, which the “refuse” policy will not encode. It is "
     "shown tokenized as plain text; the banner offers to encode it as special or as text."),
]


class LegendEntry(QWidget):
    """One entry: a sample drawn exactly as the editor draws it, and a short label."""

    def __init__(self, label: str, sample: tuple[str, ...], tokens, tip: str, palette: TokenPalette):
        super().__init__()
        self.label, self.sample, self.tokens = label, sample, tokens
        self.palette_ = palette
        self.setToolTip(tip)
        self.setObjectName(f"legend_{label.split()[0]}")
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        fm = self.fontMetrics()
        width = sum(fm.horizontalAdvance(s) for s in self.sample) + fm.horizontalAdvance(" " + self.label) + 6
        return QSize(width, fm.height() + 6)

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        fm = self.fontMetrics()
        top, height, baseline = 2.0, fm.height() + 2.0, 3.0 + fm.ascent()
        x, pieces = 2.0, []
        for text, (colour, flags) in zip(self.sample, self.tokens):
            width = fm.horizontalAdvance(text)
            pieces.append(Piece(x, x + width, top, height, baseline, colour, int(flags),
                                x + width / 2 if flags & CLUSTER_SPLIT else None))
            x += width
        paint_backgrounds(painter, pieces, self.palette_)
        painter.setPen(self.palette().color(QPalette.ColorRole.Text))
        x = 2.0
        for text in self.sample:
            painter.drawText(QPointF(x, baseline), text)
            x += fm.horizontalAdvance(text)
        paint_markers(painter, pieces, self.palette_)
        painter.setPen(self.palette().color(QPalette.ColorRole.WindowText))
        painter.drawText(QPointF(x + fm.horizontalAdvance(" "), baseline), self.label)
        painter.end()


INVISIBLE_TIP = ("RLO, PDF, ZWSP, SHY, BOM … in a small box: an invisible or bidi-control character. It "
                 "draws nothing (or reorders the text around it: red, with a dashed line under what it "
                 "turns around), but it is in the text and costs tokens; the text makes room for its box. "
                 "Hover the box for the character's name.")


class InvisibleEntry(LegendEntry):
    """The entry of the invisible characters' boxes: "a", a zero-width space's box, "b"."""

    LABEL = "ZWSP"

    def __init__(self, palette: TokenPalette, dark: bool):
        super().__init__("invisible character", ("a", "b"), ((0, 0), (0, 0)), INVISIBLE_TIP, palette)
        self.dark = dark

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        return QSize(hint.width() + room(QFontMetricsF(marker_font(self.font())), self.LABEL), hint.height())

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        fm = self.fontMetrics()
        metrics = QFontMetricsF(marker_font(self.font()))
        top, height, baseline = 2.0, fm.height() + 2.0, 3.0 + fm.ascent()
        painter.setPen(self.palette().color(QPalette.ColorRole.Text))
        x = 2.0
        painter.drawText(QPointF(x, baseline), "a")
        x += fm.horizontalAdvance("a")
        box_h = min(height - 2, metrics.height() + 2)
        box = QRectF(x + PAD / 2, top + (height - box_h) / 2, box_width(metrics, self.LABEL), box_h)
        paint_invisibles(painter, [Drawn(box, x, top, height, self.LABEL, "", False, None)], self.font(), self.dark)
        x += room(metrics, self.LABEL)
        painter.setFont(self.font())
        painter.setPen(self.palette().color(QPalette.ColorRole.Text))
        painter.drawText(QPointF(x, baseline), "b")
        x += fm.horizontalAdvance("b")
        painter.setPen(self.palette().color(QPalette.ColorRole.WindowText))
        painter.drawText(QPointF(x + fm.horizontalAdvance(" "), baseline), self.label)
        painter.end()


class Legend(QWidget):
    """A strip of legend entries under the editor, on more lines when the window is narrow;
    follows the state's theme and colours."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.setObjectName("legend")
        policy = QSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.state = state
        layout = FlowLayout(self, horizontal=12, vertical=2)
        layout.setContentsMargins(4, 1, 4, 1)
        palette = TokenPalette(state.dark, state.token_colours)
        self.entries = [LegendEntry(label, sample, tokens, tip, palette) for label, sample, tokens, tip in ENTRIES]
        self.entries.append(InvisibleEntry(palette, state.dark))
        for entry in self.entries:
            layout.addWidget(entry)
        # Only some tokenizers leave text out (a custom split pattern): said while it happens.
        self._dropped = next(e for e in self.entries if e.label == "dropped")
        self._dropped.setVisible(False)
        state.tokenized.connect(self._on_result)
        state.dark_changed.connect(self._on_palette)
        state.token_colours_changed.connect(self._on_palette)

    def _on_result(self, result) -> None:
        shown = result is not None and result.dropped16 is not None
        if shown != self._dropped.isVisibleTo(self):
            self._dropped.setVisible(shown)
            self.layout().invalidate()

    def _on_palette(self, *_) -> None:
        palette = TokenPalette(self.state.dark, self.state.token_colours)
        for entry in self.entries:
            entry.palette_ = palette
            if isinstance(entry, InvisibleEntry):
                entry.dark = self.state.dark
            entry.update()
