"""The compare view: the window's text in 2 to 4 tokenizers side by side, one document for all.

The first pane is the window's own editor (its tokenizer is the window's, which the docks show);
the others are `TokenEditor`s on the same QTextDocument, each fed by its own `TokenizeService`
(incremental re-tokenization, the generation rule), so typing in any pane edits all and each
paints its own tokenizer's tokens. Above the panes a summary row says which tokenizer is cheapest
(and, for a sample that compares parts, what each part costs); each pane's header has its picker,
its counts, the difference to the first pane and what the selection costs. In a narrow window
each of these lines shows the fullest of its forms that fits (`FittingLabel`): a pane always its
tokens and its difference to the first, the summary always the cheapest tokenizer. Thin marks over the text show the token boundaries a
pane has and another lacks (red where one falls inside a character's UTF-8 bytes). Scrolling and
the caret move in step; hovering a token highlights the tokens covering it in every pane.

What is shown is computed by `core.compare` and `core.selection`; this module converts positions
(code points and Qt's UTF-16 units) and draws. While the view is off (editor mode) only the first
pane shows and the other panes' services do nothing.
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QEvent, QLineF, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainter, QPen, QTextCursor
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QPlainTextEdit, QSizePolicy, QToolButton,
                               QVBoxLayout, QWidget)

from tokexplorer.core.analysis.compare import Counts, boundary_marks, cheapest, compare_counts, covered_span, part_counts, summary
from tokexplorer.core.analysis.quirks import Quirk
from tokexplorer.core.registry import BUILTINS, builtin_names
from tokexplorer.core.analysis.selection import selection_counts
from tokexplorer.gui.editor.view import TokenEditor
from tokexplorer.gui.widgets.fitting_label import FittingLabel
from tokexplorer.core.positions import Edit, astral_prefix, editor_prefix, utf16_len
from tokexplorer.gui.editor.selection import code_point_at16, selection_forms, utf16_at
from tokexplorer.gui.state import AppState
from tokexplorer.server.tokenized import Tokenized
from tokexplorer.gui.services.worker import TokenizeService

MAX_PANES = 4
ALL = (-1, -1)  # every position
MARK_MARGIN = 4000  # UTF-16 units beyond the visible text whose marks are computed with it


class SharedSource:
    """The window editor's `SourceMap` (what its line breaks stand for in the tokenized text), for
    a pane on the same document: read only, since that editor already follows every edit."""

    def __init__(self, editor: TokenEditor):
        self._editor = editor

    @property
    def editor(self) -> TokenEditor:
        """The window's editor, whose map this is (a long line pasted in the pane goes in through it)."""
        return self._editor

    def __getattr__(self, name: str):
        return getattr(self._editor._source, name)

    def edit(self, position16: int, removed: int, added: int) -> None:
        pass  # the window's editor has moved it already

    def follow(self, position16: int, removed: int, inserted: str, **_) -> tuple[int, int, str] | None:
        """The source's edit the window's editor found for this same edit (its slot runs first:
        it was connected first), without following it twice; None if it did not see this edit."""
        last = self._editor.last_source_edit
        if last is not None and last[:3] == (position16, removed, utf16_len(inserted)):
            return last[3]
        return None


@dataclass
class Marks16:
    """One pane's marks as document positions: the character each boundary is before or inside
    (UTF-16), that character's length in UTF-16 units, and how far into its bytes it falls."""

    positions: np.ndarray  # int64
    lengths: np.ndarray  # int64, 1 or 2
    fractions: np.ndarray  # float64; 0.0: at the character's start


def _same_marks(a: Marks16 | None, b: Marks16 | None, lo: int, hi: int) -> bool:
    """Whether two sets of marks agree within UTF-16 positions [lo, hi]."""
    if a is None or b is None:
        return a is b
    ka = (a.positions >= lo) & (a.positions <= hi)
    kb = (b.positions >= lo) & (b.positions <= hi)
    return (np.array_equal(a.positions[ka], b.positions[kb])
            and np.array_equal(a.fractions[ka], b.fractions[kb]))


class ComparePane(TokenEditor):
    """A pane after the first: a TokenEditor on the shared document that shows its own tokens.

    The window's hovered token index, caret, marked token and "reveal token" requests refer to the
    first pane's tokens, so this pane neither follows nor sets them; hovering here announces the hovered token's
    code-point span instead, which every pane (the first included) marks with its own tokens.
    """

    def __init__(self, state: AppState, editor: TokenEditor, parent=None):
        super().__init__(state, parent, document=editor.document(), follow_state=False)
        self.setObjectName("compare_pane")
        # subtle: a pane tokenizes the same text as the window's editor, a file's own line breaks
        # ("\r\n"...) included, or the panes could not be compared.
        self._source = SharedSource(editor)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # lines wrap
        state.hovered_changed.disconnect(self._on_hovered)
        state.reveal_token.disconnect(self.show_token)
        # subtle: the state's caret and marked token are an index into the window's tokens and an
        # id of its tokenizer; this pane's would name other tokens (and the window's editor, kept
        # in step with this caret, announces the right one).
        self.cursorPositionChanged.disconnect(self._on_caret)
        self._on_font()
        self._hover = (-1, -1)
        self.following = False  # shown in the compare view: tokenize the text as it is edited

    def _show_marks(self, *_) -> None:
        """No marked occurrences here: the marked id is the window tokenizer's (see __init__);
        like the editor's, it clears the hover."""
        self._marks = []
        self._select([])

    def _on_contents_change(self, position: int, removed: int, added: int) -> None:
        # Not shown (editor mode), or the window's editor loading a text in slices: no bookkeeping
        # per change; the pane takes the whole text when it is shown or the load has ended.
        if self.following and not self._source.editor.loading:
            super()._on_contents_change(position, removed, added)
        else:
            self._outbox = None

    def source_text(self) -> str:
        """The window editor's text: as it was loaded if no edit has changed it (each pane
        would otherwise copy a whole file out of the document)."""
        loaded = self._source.editor.text_as_loaded()
        return loaded if loaded is not None else super().source_text()

    def mouseMoveEvent(self, event) -> None:
        QPlainTextEdit.mouseMoveEvent(self, event)  # not TokenEditor's: it sets the window's index
        index = self.token_at(event.position().toPoint())
        span = (-1, -1) if index is None else covered_span(self._result.encoding, range(index, index + 1))
        self._announce(span or (-1, -1))

    def leaveEvent(self, event) -> None:
        QPlainTextEdit.leaveEvent(self, event)
        self._announce((-1, -1))

    def _announce(self, span: tuple[int, int]) -> None:
        if span != self._hover:
            self._hover = span
            self.state.set_hovered_span(*span)

    @property
    def result(self) -> Tokenized | None:
        return self._result


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
    """One pane with its header; the first column holds the window's editor."""

    def __init__(self, editor: TokenEditor, closable: bool, parent=None):
        super().__init__(parent)
        self.editor = editor
        self.header = PaneHeader(closable)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.header)
        layout.addWidget(editor)
        self.name = ""  # the tokenizer (for the first column: the window's)
        self.service: TokenizeService | None = None
        self.message = ""  # why the pane has no tokens (its tokenizer failed), or ""


class CompareView(QWidget):
    """The central area: the window's editor, and in compare mode up to three more panes."""

    active_changed = Signal(bool)
    service_added = Signal(object)  # the TokenizeService of a new pane

    def __init__(self, state: AppState, editor: TokenEditor, parent=None):
        super().__init__(parent)
        self.setObjectName("compare_view")
        self.state, self.editor = state, editor
        self.active = False
        self._parts: tuple[tuple[str, str], ...] = ()  # (label, text) of a sample's parts
        self._counts: list[Counts] = []  # of the shown panes, when all are current
        self._marks: tuple | None = None  # (result ids, lo16, hi16, {editor: Marks16}) around the visible text
        self._edit_log: list[Edit] = []  # edits since the marks were computed
        self._stale: tuple[int, int] | None = None  # UTF-16 range whose marks may be out of date, or ALL
        self._same_text_key: list[int] = []  # result ids last found to be of one text
        self._syncing = False
        self._scroll_value, self._scroll_source = 0, None  # what _sync_scroll is spreading
        self._refresh_timer = QTimer(self)  # one refresh per event-loop turn
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.timeout.connect(self._refresh)

        self.summary = FittingLabel(rich=True)  # in a narrow window: at least which one is cheapest
        self.summary.setObjectName("compare_summary")
        self.parts = QLabel("")
        self.parts.setObjectName("compare_parts")
        self.parts.setToolTip("Tokens per part of the sample (a token counts in the part it starts in)")
        self.legend = QLabel("")
        self.legend.setToolTip("Thin marks over the text: where this pane's tokenizer ends a token and "
                               "another pane's does not. Red: the boundary cuts a character's UTF-8 bytes.")
        for label in (self.summary, self.parts):
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.add_button = QToolButton()
        self.add_button.setText("+ Pane")
        self.add_button.setToolTip("Compare with one more tokenizer (up to four)")
        self.add_button.clicked.connect(lambda: self.add_pane())
        self.top = QWidget()
        top = QHBoxLayout(self.top)
        top.setContentsMargins(4, 2, 4, 2)
        texts = QVBoxLayout()
        texts.addWidget(self.summary)
        texts.addWidget(self.parts)
        top.addLayout(texts, 1)
        top.addWidget(self.legend)
        top.addWidget(self.add_button)
        self.row = QHBoxLayout()
        self.row.setContentsMargins(0, 0, 0, 0)
        self.row.setSpacing(4)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.top)
        layout.addLayout(self.row, 1)

        first = Column(editor, closable=False)
        first.name = state.tokenizer
        first.header.picker.currentTextChanged.connect(lambda name: name and state.set_tokenizer(name))
        self.columns: list[Column] = [first]  # shown in this order; the first is the editor's
        self.spare: list[Column] = []  # removed panes, kept for reuse (their workers may still run)
        self.row.addWidget(first, 1)
        self._watch(editor)

        editor.document().contentsChange.connect(self._on_contents_change)
        editor.load_started.connect(self._on_load_started)
        editor.loaded.connect(self._on_loaded)
        state.tokenized.connect(self._on_first_result)
        state.tokenizer_changed.connect(self._on_tokenizer_changed)
        state.tokenizers_changed.connect(self._fill_pickers)
        state.policy_changed.connect(lambda _: self._submit_all())
        state.hovered_changed.connect(self._on_hovered)
        state.selection_changed.connect(lambda *_: self._schedule_refresh())
        state.dark_changed.connect(lambda _: (self._show_legend(), self._update_panes()))
        self._fill_pickers()
        self._show_legend()
        self._show_active()

    # --- panes ---------------------------------------------------------------------------

    @property
    def panes(self) -> list[TokenEditor]:
        """The editors shown, the window's first."""
        return [c.editor for c in self.columns]

    @property
    def names(self) -> list[str]:
        """The tokenizers shown, the window's first."""
        return [c.name for c in self.columns]

    def add_pane(self, name: str | None = None) -> ComparePane | None:
        """Show one more pane (None when there are four already); by default with a built-in
        not shown yet."""
        if len(self.columns) >= MAX_PANES:
            return None
        if name is None:
            unused = [n for n in builtin_names() if n not in self.names]
            name = unused[0] if unused else self.state.catalog.names()[0]
        column = self.spare.pop() if self.spare else self._new_column()
        column.name, column.message = name, ""
        column.editor.set_result(None)
        column.header.fill(self.state.catalog.names(), name)
        self.columns.append(column)
        self.row.addWidget(column, 1)
        column.setVisible(self.active)
        column.editor.following = self.active
        self._after_panes_changed()
        if self.active:
            column.service.submit(full=True)
        return column.editor

    def remove_pane(self, pane: ComparePane) -> None:
        """Take a pane away (the first, and the last two, stay)."""
        column = next((c for c in self.columns[1:] if c.editor is pane), None)
        if column is None or len(self.columns) <= 2:
            return
        self.columns.remove(column)
        self.row.removeWidget(column)
        column.hide()
        column.editor.following = False
        column.editor.set_result(None)
        self.spare.append(column)
        self._after_panes_changed()

    def set_tokenizers(self, names: list[str]) -> None:
        """Show these tokenizers, the first in the window's editor (2 to 4 names)."""
        names = list(names)[:MAX_PANES]
        self.state.set_tokenizer(names[0])
        while len(self.columns) > max(len(names), 2):
            self.remove_pane(self.columns[-1].editor)
        for i, name in enumerate(names[1:], start=1):
            if i < len(self.columns):
                self._set_pane_tokenizer(self.columns[i], name)
            else:
                self.add_pane(name)

    def restore(self, panes: list[str], active: bool) -> None:
        """The panes after the first and the mode as the settings kept them (unknown names are
        skipped: a file opened last time is not open now)."""
        for name in [n for n in panes if n in self.state.catalog.names()][:MAX_PANES - 1]:
            self.add_pane(name)
        self.set_active(active)

    def _new_column(self) -> Column:
        pane = ComparePane(self.state, self.editor)
        column = Column(pane, closable=True)
        column.service = TokenizeService(self.state.server, self.state.catalog, pane.snapshot,
                                         lambda: (column.name, self.state.effective_policy), parent=column)
        column.service.result.connect(lambda result: self._on_pane_result(column, result))
        column.service.refused.connect(
            lambda exc: self._on_pane_problem(column, f"refused: the text spells {exc.token} (see the policy)"))
        column.service.failed.connect(lambda message: self._on_pane_problem(column, message))
        # "tokenizing…" comes with every keystroke on a long text: said only while there is nothing
        # else to show, so the counts do not flicker.
        column.service.busy.connect(lambda busy: busy and (column.editor.result is None or busy.startswith("loading"))
                                    and column.header.say(busy))
        pane.text_edited.connect(lambda: self._on_pane_edited(column))
        column.header.picker.currentTextChanged.connect(
            lambda name: name and self._set_pane_tokenizer(column, name))
        column.header.close_button.clicked.connect(lambda: self.remove_pane(pane))
        self._watch(pane)
        self.service_added.emit(column.service)
        return column

    def _set_pane_tokenizer(self, column: Column, name: str) -> None:
        if name == column.name:
            return
        column.name, column.message = name, ""
        column.header.fill(self.state.catalog.names(), name)
        if self.active:
            column.service.submit()
        self._schedule_refresh()

    def _after_panes_changed(self) -> None:
        self.add_button.setEnabled(len(self.columns) < MAX_PANES)
        self._marks = None
        self._schedule_refresh()
        self._update_panes()

    def _fill_pickers(self) -> None:
        names = self.state.catalog.names()
        for column in self.columns + self.spare:
            column.header.fill(names, self.state.tokenizer if column is self.columns[0] else column.name)

    # --- on and off ----------------------------------------------------------------------

    def set_active(self, on: bool) -> None:
        """Show the compare panes (on) or only the window's editor (off)."""
        if on == self.active:
            return
        self.active = on
        if on and len(self.columns) < 2:
            self.add_pane()
        self._show_active()
        if on:
            self._submit_all(full=True)
        else:
            self.state.set_hovered_span(-1, -1)
            for column in self.columns[1:]:
                column.editor.set_result(None)  # its positions stop following the text
        self.active_changed.emit(on)

    def _show_active(self) -> None:
        self.top.setVisible(self.active)
        # subtle: the panes share one layout of the text, whose wrapping width follows the widest
        # pane; one a pixel narrower must not grow a horizontal scroll bar (and scroll apart).
        self.editor.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff if self.active
                                                 else Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.columns[0].header.setVisible(self.active)
        for column in self.columns[1:]:
            column.setVisible(self.active)
            column.editor.following = self.active
        self._marks, self._edit_log = None, []
        self._schedule_refresh()
        self._update_panes()

    def _submit_all(self, full: bool = False) -> None:
        if self.active:
            for column in self.columns[1:]:
                column.message = ""
                column.service.submit(full=full)

    def open_sample(self, quirk: Quirk) -> None:
        """Show a sample's tokenizers and count its parts (the text is loaded by the window)."""
        self.set_tokenizers(list(quirk.tokenizers))
        self._parts = quirk.samples if len(quirk.samples) > 1 else ()
        self.set_active(True)
        self._schedule_refresh()

    def close_documents(self) -> None:
        """The window closes: the server forgets the panes' documents."""
        for column in self.columns[1:] + self.spare:
            column.service.close()

    def wait_for_done(self, msecs: int) -> None:
        """Wait, handling events, until every pane's tokens are answered (for tests)."""
        for column in self.columns[1:]:
            column.service.wait_for_done(msecs)

    @property
    def up_to_date(self) -> bool:
        """Every pane has the tokens of the current text (or says why not) and the counts shown
        are theirs (for screenshots and tests)."""
        if not self.active:
            return True
        return (not self._refresh_timer.isActive() and self._settled()
                and all(c.service.idle for c in self.columns[1:]))

    def _settled(self) -> bool:
        """Every pane has the tokens of the text as it is now, or says why it has none."""
        return all(column.message or (result is not None and column.editor.tokens_current)
                   for column, result in self._shown())

    # --- results -------------------------------------------------------------------------

    def _on_pane_edited(self, column: Column) -> None:
        # subtle: while the window's editor loads a text (read-only, in slices) the panes wait
        # for `loaded` and then take the whole text at once.
        if self.active and not self.editor.isReadOnly():
            column.service.schedule(self.editor.document().characterCount())

    def _on_load_started(self) -> None:
        self._marks, self._edit_log = None, []  # the old text's: no use moving them through the load

    def _on_loaded(self) -> None:
        self._parts = ()  # a sample sets its parts again after loading its text
        self._marks, self._edit_log = None, []
        self._submit_all(full=True)

    def _on_pane_result(self, column: Column, result: Tokenized) -> None:
        column.message = ""
        column.editor.set_result(result)
        self._after_result(result)

    def _on_pane_problem(self, column: Column, message: str) -> None:
        column.message = message
        column.editor.set_result(None)
        self._schedule_refresh()

    def _on_first_result(self, result: Tokenized | None) -> None:
        if self.active:
            self._after_result(result)

    def _on_tokenizer_changed(self, name: str) -> None:
        self.columns[0].name = name
        self.columns[0].header.fill(self.state.catalog.names(), name)
        self._schedule_refresh()

    def _after_result(self, result: Tokenized | None) -> None:
        """A pane's tokens changed (the pane repaints itself). The marks of every pane may change
        where they did (and where the text was edited meanwhile), but they are computed only once
        every pane is current: then each pane whose marks there really changed is repainted."""
        self._schedule_refresh()
        if result is None or result.changed is None or self._stale == ALL:
            self._stale = ALL
        else:
            lo, hi = utf16_at(result, result.changed[0]), utf16_at(result, result.changed[1])
            for e in self._edit_log:
                lo, hi = min(lo, e.position), max(hi, e.position + e.added)
            self._stale = (lo, hi) if self._stale is None else (min(lo, self._stale[0]), max(hi, self._stale[1]))
        current = self._current()
        if current is None:
            return
        stale, self._stale = self._stale, None
        if stale == ALL or self._marks is None:
            self._marks = None
            self._update_panes()
            return
        before = {pane: self._shifted(m) for pane, m in self._marks[3].items()}
        first = self.panes[0]
        vp = first.viewport()
        self._marks = self._compute_marks(*current, first.cursorForPosition(vp.rect().topLeft()).position(),
                                          first.cursorForPosition(vp.rect().bottomRight()).position())
        self._edit_log = []
        lo, hi = stale
        for pane in self.panes:
            if not _same_marks(before.get(pane), self._marks[3].get(pane), lo - 1, hi + 1):
                pane._update_range(lo, hi)

    def _shown(self) -> list[tuple[Column, Tokenized | None]]:
        """Each shown column with its tokens (the first column's are the window's)."""
        return [(c, self.state.result if i == 0 else c.editor.result) for i, c in enumerate(self.columns)]

    def _current(self) -> tuple[list[Column], list[Tokenized]] | None:
        """The columns that have tokens and their results, when every one of them has the tokens
        of the text as it is now (a pane that refused or failed is left out) and at least two
        do; else None."""
        columns, results = [], []
        for column, result in self._shown():
            if result is None:
                if column.message:
                    continue
                return None
            if not column.editor.tokens_current:
                return None
            columns.append(column)
            results.append(result)
        if not self.active or len(results) < 2:
            return None
        key = [id(r) for r in results]
        if key != self._same_text_key:
            # Each pane's worker keeps its own copy of the text; compare only what is the same text
            # (a copy out of step is resent whole by its service).
            text = results[0].encoding.text
            if any(r.encoding.text != text for r in results[1:]):
                return None
            self._same_text_key = key
        return columns, results

    # --- summary, headers, selection -----------------------------------------------------

    def _schedule_refresh(self) -> None:
        self._refresh_timer.start(0)

    def _refresh(self) -> None:
        if not self.active:
            return
        current = self._current()
        if current is not None:
            columns, results = current
            encodings = [r.encoding for r in results]
            self._counts = compare_counts([c.name for c in columns], encodings)
            self.summary.set_forms([f"<b>{html.escape(f)}</b>" for f in summary_forms(self._counts)],
                                   tip=summary(self._counts))
            parts = part_counts(encodings, self._parts) if self._parts else []
            self.parts.setText("  │  ".join(
                f"{p.label}: " + " · ".join(f"{c.name} {n:,}" for c, n in zip(self._counts, p.tokens))
                for p in parts))
            self.parts.setVisible(bool(parts))
        elif self._settled():
            self._counts = []
            self.summary.set_forms(["fewer than two panes have tokens of this text: nothing to compare",
                                    "fewer than two panes have tokens"])
            self.parts.hide()
        counts = dict(zip(current[0], self._counts)) if current is not None else {}
        start, end = self.state.selection
        for i, (column, result) in enumerate(self._shown()):
            header, c = column.header, counts.get(column)
            if column.message:
                header.say(column.message)
            elif c is not None:
                header.counts.set_forms(count_forms(c, None if i == 0 else self.columns[0].name))
                header.ratios.set_forms(ratio_forms(c, result.refusal.token if result.refused else None,
                                                    "#ff8a80" if self.state.dark else "#d50000"))
            elif result is None:
                header.say("tokenizing…")
            selected = c is not None and end > start
            if selected:
                s = selection_counts(result.encoding, start, end)
                header.selection.set_forms(selection_forms(s))
            header.selection.setVisible(selected)

    def _show_legend(self) -> None:
        mark, inside = ("#64b5f6", "#ff8a80") if self.state.dark else ("#1565c0", "#d50000")
        self.legend.setText(f"<span style='color:{mark}'><b>│</b></span> a boundary others lack &nbsp; "
                            f"<span style='color:{inside}'><b>│</b></span> inside a character ")

    def _on_hovered(self, index: int) -> None:
        """The window's editor hovers one of its tokens: every pane marks the tokens covering it."""
        result = self.state.result
        if not self.active:
            return
        if result is None or index < 0 or index >= len(result):
            self.state.set_hovered_span(-1, -1)
            return
        span = covered_span(result.encoding, range(index, index + 1))
        self.state.set_hovered_span(*span)

    # --- scrolling and the caret in step -------------------------------------------------

    def _watch(self, editor: TokenEditor) -> None:
        editor.verticalScrollBar().valueChanged.connect(lambda v: self._sync_scroll(editor, v))
        editor.cursorPositionChanged.connect(lambda: self._sync_cursor(editor))
        editor.viewport().installEventFilter(self)

    def _sync_scroll(self, source: TokenEditor, value: int) -> None:
        if not self.active:
            return
        if self._syncing:
            # subtle: a pane's value also moves when lines above it are laid out for the first time
            # (a wrapped line counts as one until then); that move must reach the others too.
            if value != self._scroll_value:
                self._scroll_source = source
            return
        self._syncing = True
        try:
            for _ in range(3):  # a few rounds settle any such move
                self._scroll_source, self._scroll_value = None, value
                for pane in self.panes:
                    if pane is not source:
                        pane.verticalScrollBar().setValue(value)
                if self._scroll_source is None:
                    break
                source = self._scroll_source
                value = source.verticalScrollBar().value()
        finally:
            self._syncing = False

    def _sync_cursor(self, source: TokenEditor) -> None:
        if self._syncing or not self.active:
            return
        self._syncing = True
        try:
            mine = source.textCursor()
            for pane in self.panes:
                if pane is not source:
                    cursor = QTextCursor(pane.document())
                    cursor.setPosition(mine.anchor())
                    cursor.setPosition(mine.position(), QTextCursor.MoveMode.KeepAnchor)
                    pane.setTextCursor(cursor)
            value = source.verticalScrollBar().value()
            for pane in self.panes:
                pane.verticalScrollBar().setValue(value)
        finally:
            self._syncing = False

    # --- boundary marks ------------------------------------------------------------------

    def _on_contents_change(self, position: int, removed: int, added: int) -> None:
        if self.active and self._marks is not None:
            self._edit_log.append(Edit(position, removed, added))

    def _update_panes(self) -> None:
        for pane in self.panes:
            pane.viewport().update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Paint a pane, then its marks over it, in the same paint event."""
        if event.type() != QEvent.Type.Paint or not self.active:
            return False
        editor = next((p for p in self.panes if p.viewport() is watched), None)
        if editor is None:
            return False
        editor.paintEvent(event)
        marks = self._visible_marks(editor)
        if marks is not None and len(marks.positions):
            painter = QPainter(watched)
            self._paint_marks(editor, painter, event.rect(), marks)
            painter.end()
            editor.painted_at = time.perf_counter()  # the benchmark counts the marks in
        return True

    def _visible_marks(self, editor: TokenEditor) -> Marks16 | None:
        """This pane's marks over the visible text: computed with every pane's current tokens, or
        the last ones moved through the edits since while some pane is still tokenizing."""
        vp = editor.viewport()
        lo16 = editor.cursorForPosition(vp.rect().topLeft()).position()
        hi16 = editor.cursorForPosition(vp.rect().bottomRight()).position()
        current = self._current()
        marks = self._marks
        if current is not None and (marks is None or marks[0] != [id(r) for r in current[1]]
                                    or lo16 < marks[1] or hi16 > marks[2] or self._edit_log):
            self._marks = marks = self._compute_marks(*current, lo16, hi16)
            self._edit_log = []
        return self._shifted(None if marks is None else marks[3].get(editor))

    def _shifted(self, m: Marks16 | None) -> Marks16 | None:
        """Marks moved through the edits since they were computed."""
        if m is None or not self._edit_log:
            return m
        positions = m.positions
        for e in self._edit_log:  # Edit.start, on an array
            p = e.position
            positions = np.where(positions < p, positions, np.where(
                positions >= p + e.removed, positions + e.added - e.removed, p + e.added))
        return Marks16(positions, m.lengths, m.fractions)

    def _compute_marks(self, columns: list[Column], results: list[Tokenized], lo16: int, hi16: int) -> tuple:
        """(result ids, UTF-16 window, {editor: Marks16}) for the visible text and a margin."""
        first = results[0]
        text = first.encoding.text
        c0 = code_point_at16(first, max(lo16 - MARK_MARGIN, 0))
        c1 = code_point_at16(first, hi16 + MARK_MARGIN)
        w16 = utf16_at(first, c0)
        window = text[c0:c1]
        soft = first.soft[(first.soft > c0) & (first.soft <= c1)] - c0  # w16 counts one at c0
        prefix = editor_prefix(window, soft)
        if prefix is None:
            prefix = np.zeros(len(window) + 1, dtype=np.int64)
        astral = astral_prefix(window)
        out = {}
        for column, m in zip(columns, boundary_marks([r.encoding for r in results], c0, c1)):
            local = m.chars - c0
            out[column.editor] = Marks16(w16 + local + prefix[local],
                                         1 + astral[local + 1] - astral[local], m.fraction)
        return [id(r) for r in results], w16, utf16_at(first, c1), out

    def _paint_marks(self, editor: TokenEditor, painter: QPainter, rect, marks: Marks16) -> None:
        dark = self.state.dark
        lines: dict[bool, list[QLineF]] = {False: [], True: []}  # inside a character -> ticks
        positions = marks.positions
        for block, line, origin in editor._visible_lines(rect):
            start = block.position()
            lo = start + line.textStart()
            a, b = np.searchsorted(positions, [lo, lo + line.textLength()])
            if a == b:
                continue
            top, h, x0 = origin.y() + line.y(), line.height(), origin.x()
            for p, f, n in zip(positions[a:b].tolist(), marks.fractions[a:b].tolist(), marks.lengths[a:b].tolist()):
                rel = p - start
                x = line.cursorToX(rel)[0]
                if f > 0:
                    x += f * (line.cursorToX(rel + n)[0] - x)
                x += x0
                # A tick above and one below the glyphs: the text between them stays readable
                # where nearly every character is cut (a byte-level tokenizer on Myanmar).
                lines[f > 0] += [QLineF(x, top + 1, x, top + h * 0.28), QLineF(x, top + h * 0.72, x, top + h - 1)]
        # One call per colour: a pen change and a call per tick cost more than the drawing.
        for inside, colour in ((False, "#64b5f6" if dark else "#1565c0"), (True, "#ff8a80" if dark else "#d50000")):
            if lines[inside]:
                painter.setPen(QPen(QColor(colour), 1.5))
                painter.drawLines(lines[inside])
