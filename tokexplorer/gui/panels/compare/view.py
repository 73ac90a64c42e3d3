"""The compare view: the window's text in 2 to 4 tokenizers side by side, one document for all.

The first pane is the window's own editor (its tokenizer is the window's, which the docks show);
the others are `ComparePane`s, each a token view on the same QTextDocument fed by its own
`TokenizeService` (incremental re-tokenization, the generation rule), so typing in any pane edits
all and each paints its own tokenizer's tokens. Above the panes a summary row says which tokenizer
is cheapest (and, for a sample that compares parts, what each part costs); each pane's header
(`header`) has its picker, its counts, the difference to the first pane and what the selection
costs. Short ticks under the text (`marks`) show the token boundaries a pane has and another lacks
(red where one falls inside a character's UTF-8 bytes). Scrolling and the caret move in step;
hovering a token highlights the tokens covering it in every pane.

What is shown is computed by `core.analysis.compare` and `core.analysis.selection`; this module
lays the columns out, keeps them in step and says when marks and counts are computed. While the
view is off (editor mode) only the first pane shows and the other panes' services do nothing.

Over 400 lines: the panes' results, the counts, the marks and the scroll sync all turn on one
question, whether every pane has the tokens of the text as it is now (`_current`).
"""

from __future__ import annotations

import html
import time

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QPainter, QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from tokexplorer.core.analysis.compare import Counts, compare_counts, covered_span, part_counts, summary
from tokexplorer.core.analysis.quirks import Quirk
from tokexplorer.core.analysis.selection import selection_counts
from tokexplorer.core.positions import Edit
from tokexplorer.core.registry import builtin_names
from tokexplorer.gui.editor.editor import TokenEditor
from tokexplorer.gui.editor.selection import selection_forms, utf16_at
from tokexplorer.gui.editor.token_view import TokenView
from tokexplorer.gui.widgets.fitting_label import FittingLabel
from tokexplorer.gui.panels.compare.header import Column, count_forms, ratio_forms, summary_forms
from tokexplorer.gui.panels.compare.marks import Marks16, compute_marks, paint_marks, same_marks, shifted
from tokexplorer.gui.panels.compare.pane import ComparePane
from tokexplorer.gui.services.worker import TokenizeService
from tokexplorer.gui.state import AppState
from tokexplorer.server.tokenized import Tokenized

MAX_PANES = 4
ALL = (-1, -1)  # every position


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
        self._marks: tuple | None = None  # (result ids, lo16, hi16, {view: Marks16}) around the visible text
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
        self.legend.setToolTip("Ticks under the text: where this pane's tokenizer ends a token and "
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
    def panes(self) -> list[TokenView]:
        """The token views shown, the window's editor first."""
        return [c.view for c in self.columns]

    @property
    def names(self) -> list[str]:
        """The tokenizers shown, the window's first."""
        return [c.name for c in self.columns]

    def add_pane(self, name: str | None = None) -> TokenView | None:
        """Show one more pane and return its view (None when there are four already); by default
        with a built-in not shown yet."""
        if len(self.columns) >= MAX_PANES:
            return None
        if name is None:
            unused = [n for n in builtin_names() if n not in self.names]
            name = unused[0] if unused else self.state.catalog.names()[0]
        column = self.spare.pop() if self.spare else self._new_column()
        column.name, column.message = name, ""
        column.view.set_result(None)
        column.header.fill(self.state.catalog.names(), name)
        self.columns.append(column)
        self.row.addWidget(column, 1)
        column.setVisible(self.active)
        column.pane.following = self.active
        self._after_panes_changed()
        if self.active:
            column.service.submit(full=True)
        return column.view

    def remove_pane(self, view: TokenView) -> None:
        """Take the pane of this view away (the first, and the last two, stay)."""
        column = next((c for c in self.columns[1:] if c.view is view), None)
        if column is None or len(self.columns) <= 2:
            return
        self.columns.remove(column)
        self.row.removeWidget(column)
        column.hide()
        column.pane.following = False
        column.view.set_result(None)
        self.spare.append(column)
        self._after_panes_changed()

    def set_tokenizers(self, names: list[str]) -> None:
        """Show these tokenizers, the first in the window's editor (2 to 4 names)."""
        names = list(names)[:MAX_PANES]
        self.state.set_tokenizer(names[0])
        while len(self.columns) > max(len(names), 2):
            self.remove_pane(self.columns[-1].view)
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
        column = Column(pane.view, closable=True, pane=pane)
        column.service = TokenizeService(self.state.server, self.state.catalog, pane.snapshot,
                                         lambda: (column.name, self.state.effective_policy), parent=column)
        column.service.result.connect(lambda result: self._on_pane_result(column, result))
        column.service.refused.connect(
            lambda exc: self._on_pane_problem(column, f"refused: the text spells {exc.token} (see the policy)"))
        column.service.failed.connect(lambda message: self._on_pane_problem(column, message))
        # "tokenizing…" comes with every keystroke on a long text: said only while there is nothing
        # else to show, so the counts do not flicker.
        column.service.busy.connect(lambda busy: busy and (column.view.result is None or busy.startswith("loading"))
                                    and column.header.say(busy))
        pane.edited.connect(lambda: self._on_pane_edited(column))
        column.header.picker.currentTextChanged.connect(
            lambda name: name and self._set_pane_tokenizer(column, name))
        column.header.close_button.clicked.connect(lambda: self.remove_pane(pane.view))
        self._watch(pane.view)
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
                column.view.set_result(None)  # its positions stop following the text
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
            column.pane.following = self.active
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
        return all(column.message or (result is not None and column.view.tokens_current)
                   for column, result in self.shown())

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
        column.view.set_result(result)
        self._after_result(result)

    def _on_pane_problem(self, column: Column, message: str) -> None:
        column.message = message
        column.view.set_result(None)
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
        before = {pane: shifted(m, self._edit_log) for pane, m in self._marks[3].items()}
        first = self.panes[0]
        vp = first.viewport()
        self._marks = self._compute_marks(*current, first.cursorForPosition(vp.rect().topLeft()).position(),
                                          first.cursorForPosition(vp.rect().bottomRight()).position())
        self._edit_log = []
        lo, hi = stale
        for pane in self.panes:
            if not same_marks(before.get(pane), self._marks[3].get(pane), lo - 1, hi + 1):
                pane.update_range(lo, hi)

    def shown(self) -> list[tuple[Column, Tokenized | None]]:
        """Each shown column with its tokens (the first column's are the window's)."""
        return [(c, self.state.result if i == 0 else c.view.result) for i, c in enumerate(self.columns)]

    def _current(self) -> tuple[list[Column], list[Tokenized]] | None:
        """The columns that have tokens and their results, when every one of them has the tokens
        of the text as it is now (a pane that refused or failed is left out) and at least two
        do; else None."""
        columns, results = [], []
        for column, result in self.shown():
            if result is None:
                if column.message:
                    continue
                return None
            if not column.view.tokens_current:
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
        for i, (column, result) in enumerate(self.shown()):
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
        self.legend.setText(f"<span style='color:{mark}'>▲</span> a boundary others lack &nbsp; "
                            f"<span style='color:{inside}'>▲</span> inside a character ")

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

    def _watch(self, view: TokenView) -> None:
        view.verticalScrollBar().valueChanged.connect(lambda v: self._sync_scroll(view, v))
        view.cursorPositionChanged.connect(lambda: self._sync_cursor(view))
        view.viewport().installEventFilter(self)

    def _sync_scroll(self, source: TokenView, value: int) -> None:
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

    def _sync_cursor(self, source: TokenView) -> None:
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
        view = next((p for p in self.panes if p.viewport() is watched), None)
        if view is None:
            return False
        view.paintEvent(event)
        marks = self.visible_marks(view)
        if marks is not None and len(marks.positions):
            painter = QPainter(watched)
            paint_marks(view, painter, event.rect(), marks, self.state.dark)
            painter.end()
            view.painted_at = time.perf_counter()  # the benchmark counts the marks in
        return True

    def visible_marks(self, view: TokenView) -> Marks16 | None:
        """This pane's marks over the visible text: computed with every pane's current tokens, or
        the last ones moved through the edits since while some pane is still tokenizing."""
        vp = view.viewport()
        lo16 = view.cursorForPosition(vp.rect().topLeft()).position()
        hi16 = view.cursorForPosition(vp.rect().bottomRight()).position()
        current = self._current()
        marks = self._marks
        if current is not None and (marks is None or marks[0] != [id(r) for r in current[1]]
                                    or lo16 < marks[1] or hi16 > marks[2] or self._edit_log):
            self._marks = marks = self._compute_marks(*current, lo16, hi16)
            self._edit_log = []
        return shifted(None if marks is None else marks[3].get(view), self._edit_log)

    def _compute_marks(self, columns: list[Column], results: list[Tokenized], lo16: int, hi16: int) -> tuple:
        """(result ids, UTF-16 window, {view: Marks16}) for the visible text and a margin."""
        lo, hi, marks = compute_marks(results, lo16, hi16)
        return [id(r) for r in results], lo, hi, {column.view: m for column, m in zip(columns, marks)}
