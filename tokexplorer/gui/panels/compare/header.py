"""The compare view's texts: each pane's header (tokenizer picker, counts, ratios, the selection's
cost), the column that stacks a header over its pane, and the forms each line takes as the pane
narrows (fullest first; a `FittingLabel` shows the fullest that fits).

Does not hold the panes (`pane`), the counting (`core.analysis.compare`) or the view that lays the
columns out and keeps them in step (`view`).
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from tokexplorer.core.analysis.compare import Counts, cheapest, summary
from tokexplorer.core.registry import BUILTINS
from tokexplorer.gui.editor.token_view import TokenView
from tokexplorer.gui.services.worker import TokenizeService
from tokexplorer.gui.widgets.fitting_label import FittingLabel


def count_forms(c: Counts, reference: str | None) -> list[str]:
    """A pane's tokens and its difference to the first pane (`reference`; None for the first
    pane itself), as rich text from the fullest to the shortest; every form keeps both.

    >>> count_forms(Counts("b", 8404, 9, 9, 5.4, 1.9, -35746, -80.97), "gpt2")[1:]
    ['<b>8,404</b> tokens · -35,746 (-81.0%)', '<b>8,404</b> · -35,746 (-81.0%)', '<b>8,404</b> tokens · -81.0%', '<b>8,404</b> · -81.0%']
    """
    n = f"<b>{c.tokens:,}</b>"
    if reference is None:
        return [f"{n} tokens · the reference", f"{n} tokens", n]
    delta = c.delta_label()
    pct = "±0" if c.delta == 0 else f"{c.delta_pct:+.1f}%"
    forms = [f"{n} tokens · {delta} vs {html.escape(reference)}", f"{n} tokens · {delta}", f"{n} · {delta}",
             f"{n} tokens · {pct}", f"{n} · {pct}"]
    return list(dict.fromkeys(forms))


def ratio_forms(c: Counts, refused: str | None, colour: str) -> list[str]:
    """A pane's second line as rich text, fullest first: a refused special token (counted as
    text) when there is one, which stays; then bytes and characters per token as room allows.

    >>> ratio_forms(Counts("b", 4, 9, 9, 2.25, 2.25, -2, -33.3), None, "red")[-1]
    '2.25 B/tok'
    """
    ratios = [f"{c.bytes_per_token:.2f} bytes/token · {c.chars_per_token:.2f} chars/token",
              f"{c.bytes_per_token:.2f} B/tok · {c.chars_per_token:.2f} ch/tok", f"{c.bytes_per_token:.2f} B/tok"]
    if refused is None:
        return ratios
    said = f"<span style='color:{colour}'>{html.escape(refused)} refused: counted as text</span>"
    short = f"<span style='color:{colour}'>{html.escape(refused)} refused</span>"
    return [f"{said} · {r}" for r in ratios] + [said, short]


def summary_forms(counts: list[Counts]) -> list[str]:
    """The summary row, fullest first (`core.compare.summary`'s line); every form names the
    cheapest tokenizer.

    >>> summary_forms([Counts("gpt2", 6, 18, 18, 3, 3, 0, 0.0), Counts("cl100k_base", 4, 18, 18, 4.5, 4.5, -2, -33.3)])[1:]
    ['cheapest: cl100k_base, 4 tokens', 'cheapest: cl100k_base']
    """
    if not counts:
        return []
    best = cheapest(counts)
    least = counts[best[0]].tokens
    if len(best) == len(counts):
        return [summary(counts), f"all cost the same: {least:,} tokens", "all cost the same"]
    winners = " = ".join(counts[i].name for i in best)
    return [summary(counts), f"cheapest: {winners}, {least:,} tokens", f"cheapest: {winners}"]


class PaneHeader(QWidget):
    """Above a pane: its tokenizer picker, its counts (two lines: tokens and the difference to the
    first pane; ratios), the selection's cost and a close button. Each line shows the fullest of
    its forms that fits the pane."""

    def __init__(self, closable: bool, parent=None):
        super().__init__(parent)
        self.picker = QComboBox()
        self.picker.setObjectName("compare_picker")
        self.picker.setMinimumContentsLength(12)
        self.picker.setToolTip("The tokenizer of this pane")
        # A narrow pane shows shorter forms, never cut ones.
        self.counts = FittingLabel(rich=True)
        self.counts.setObjectName("compare_counts")
        self.ratios = FittingLabel(rich=True)
        self.ratios.setObjectName("compare_ratios")
        self.selection = FittingLabel()
        self.selection.setObjectName("compare_selection")
        # subtle: a label asks for the width of its text, which would make the panes unequal;
        # equal panes keep one line wrapping width for the document they share.
        for label in (self.counts, self.ratios, self.selection):
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        # One line each whatever they say ("tokenizing…" or the counts): a header that changed
        # height would resize its pane, and lay out and repaint all of it, on every keystroke.
        for label in (self.counts, self.ratios):
            label.setFixedHeight(label.fontMetrics().lineSpacing() + 1)
        self.close_button = QToolButton()
        self.close_button.setText("×")
        self.close_button.setToolTip("Remove this pane")
        self.close_button.setVisible(closable)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.picker, 1)
        top.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(1)
        layout.addLayout(top)
        layout.addWidget(self.counts)
        layout.addWidget(self.ratios)
        layout.addWidget(self.selection)

    def say(self, text: str) -> None:
        """Instead of the counts: why there are none ("tokenizing…", a refusal, an error)."""
        self.counts.set_forms([html.escape(text)], tip=text)
        self.ratios.set_forms([])

    def fill(self, names: list[str], current: str) -> None:
        self.picker.blockSignals(True)
        self.picker.clear()
        for name in names:
            self.picker.addItem(name)
            info = BUILTINS.get(name)
            if info is not None:
                self.picker.setItemData(self.picker.count() - 1,
                                        f"{info.description} · {info.n_vocab:,} tokens · {info.family}",
                                        Qt.ItemDataRole.ToolTipRole)
        self.picker.setCurrentText(current)
        self.picker.blockSignals(False)


class Column(QWidget):
    """One pane's token view with its header; the first column holds the window's editor (and
    no `pane`: the window's own service tokenizes its text)."""

    def __init__(self, view: TokenView, closable: bool, pane=None, parent=None):
        super().__init__(parent)
        self.view = view
        self.pane = pane  # the ComparePane around `view`, None for the window's editor
        self.header = PaneHeader(closable)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.header)
        layout.addWidget(view)
        self.name = ""  # the tokenizer (for the first column: the window's)
        self.service: TokenizeService | None = None
        self.message = ""  # why the pane has no tokens (its tokenizer failed), or ""
