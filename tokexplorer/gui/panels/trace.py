"""The encode trace: how BPE encoded the chunk under the caret, merge by merge. A slider (and step
buttons) walks through the merges; the sequence after the current step is drawn as coloured parts,
the part just made underlined; the list of every merge (pair, new token, rank) sits beside it.
The last line compares the trace's final ids with the tokenizer's own for that chunk.

Two modes (the switch at the top): "each merge", one step per occurrence merged (the lowest rank
first, leftmost on ties), and "by rule", the lecture's encode loop: one step per merge rule
applied, every occurrence of its pair at once, with the places it applied and the length after
(`core.rule_trace`; on a text a Basic BPE learned 20 merges from, 20 steps where "each merge"
takes thousands). The server computes both for the chunk (`TraceAnswer.rules`), so switching
asks nothing; a tokenizer without ranked rules (SentencePiece) says why in that mode.

The trace is the core's reference (`encode_trace.trace_at`), computed by the tokenizing server
on its copy of the text (`TraceAt`, with the chunk's tokens and their ids) under the generation
rule (a chunk of 64 KB, the core's bound, takes seconds in pure Python); the panel keeps the last
trace while an edit is tokenized, and an answer of None (the server's text has moved on: a newer
result, and the caret with it, follows) changes nothing. A long chunk has tens of thousands of steps and parts:
the list of merges is a model that formats only the rows on screen, and the sequence shows a page
of PAGE_PARTS parts around the part the step made. It never calls another panel.
"""

from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import QAbstractListModel, QModelIndex, QSize, Qt
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QListView, QSlider, QSplitter, QToolButton,
                               QVBoxLayout, QWidget)

from tokexplorer.core.analysis.encode_trace import EncodeTrace, Part
from tokexplorer.core.analysis.rule_trace import RuleTrace
from tokexplorer.core.token_colours import colour_indices
from tokexplorer.gui.widgets.colours import TokenPalette
from tokexplorer.gui.widgets.elided_rows import elide_rows
from tokexplorer.gui.widgets.fitting_label import FittingLabel
from tokexplorer.gui.state import AppState
from tokexplorer.core.analysis.unicode_info import token_label
from tokexplorer.server.protocol import TraceAnswer, TraceAt

PAGE_PARTS = 240  # parts of the sequence drawn at once (a long chunk's page around the new part)
SHOWN_CHUNK_BYTES = 120  # of a long chunk, the title shows the start
SHOWN_IDS = 24  # of a long list of ids, the verdict shows the start
SHOWN_PLACES = 8  # of a rule's places, a row of the list shows the first
MODES = {"each merge": "occurrence", "by rule (the lecture's loop)": "rule"}  # the switch's items -> mode


def _ids(ids: list[int]) -> str:
    """A list of ids as Python writes it, or its start and how many there are."""
    if len(ids) <= SHOWN_IDS:
        return str(ids)
    return f"[{', '.join(map(str, ids[:SHOWN_IDS]))}, … ({len(ids):,} ids)]"


class StepsModel(QAbstractListModel):
    """The trace's merges, one row each, formatted when a row is shown."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.trace: EncodeTrace | None = None
        self.rules: RuleTrace | None = None  # shown instead of the trace's steps, when set

    def show(self, trace: EncodeTrace | None, rules: RuleTrace | None = None) -> None:
        self.beginResetModel()
        self.trace, self.rules = trace, rules
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:
        if parent.isValid():
            return 0
        if self.rules is not None:
            return len(self.rules.rules)
        return 0 if self.trace is None else len(self.trace.steps)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        # the tooltip is the row whole, where the list elides it
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole) or (
                self.trace is None and self.rules is None):
            return None
        k = index.row()
        if self.rules is not None:
            return rule_line(k, self.rules.rules[k])
        s = self.trace.steps[k]
        return (f"{k + 1}. {token_label(s.left.bytes)} + {token_label(s.right.bytes)} → "
                f"{token_label(s.left.bytes + s.right.bytes)}  (id {s.new_id}, rank {s.rank})")


def rule_line(k: int, rule) -> str:
    """One rule of the loop as a row: the pair, its new id, where it applied, the length after."""
    places = ", ".join(map(str, rule.positions[:SHOWN_PLACES]))
    if len(rule.positions) > SHOWN_PLACES:
        places += f", … ({len(rule.positions):,} places)"
    return (f"{k + 1}. ({rule.pair[0]}, {rule.pair[1]}) → {rule.new_id}  {token_label(rule.left)} + "
            f"{token_label(rule.right)}  at [{places}] → length {rule.length:,}")


class StepsList(QListView):
    """The list of merges, keeping its current row (the slider's step) in view.

    subtle: the list's height changes after the step is scrolled to: a new trace's title and
    verdict re-wrap to more lines, and the panel's layout gives the list its new height only
    when the posted layout request is handled, after `_show` returns (measured: scrolled with a
    196 px viewport, shown at 161 px, the current row just below the bottom). So the list scrolls
    to its current row again whenever its height changes, by a new trace's text or the user's
    resizing the dock.
    """

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)  # updates the scroll bars to the new height first
        current = self.currentIndex()
        if current.isValid():
            self.scrollTo(current)


class TracePanel(QWidget):
    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.setObjectName("trace_panel")
        self.state = state
        self.trace: EncodeTrace | None = None
        self.rules: RuleTrace | None = None  # the same chunk by rule, or None with `rules_message`
        self.rules_message = ""
        self.mode = "occurrence"  # or "rule": the lecture's loop (the switch)
        self.expected: list[int] = []  # the tokenizer's own ids for the traced chunk
        self._key: tuple | None = None  # (result, first, stop): the tokens traced or being traced
        self._generation = 0
        self._answered = 0  # the latest generation whose trace (or reason) is shown
        self.title = QLabel("Put the caret in the text to see how its chunk was encoded.")
        self.title.setObjectName("trace_title")
        self.title.setWordWrap(True)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("trace_slider")
        self.slider.setToolTip("The merges applied so far")
        # one line: the step whole where it fits, else its number (whole in the tooltip)
        self.step_label = FittingLabel()
        self.step_label.setObjectName("trace_step")
        self.sequence = QLabel("")
        self.sequence.setObjectName("trace_sequence")
        self.sequence.setWordWrap(True)
        self.sequence.setTextFormat(Qt.TextFormat.RichText)
        self.sequence.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.steps_model = StepsModel(self)
        self.steps = StepsList()
        self.steps.setObjectName("trace_steps")
        self.steps.setModel(self.steps_model)
        self.steps.setUniformItemSizes(True)  # a long chunk's 50,000 rows are not measured one by one
        elide_rows(self.steps)  # whole in its tooltip: the list never scrolls sideways
        self.verdict = QLabel("")
        self.verdict.setObjectName("trace_verdict")
        self.verdict.setWordWrap(True)
        self.mode_box = QComboBox()
        self.mode_box.setObjectName("trace_mode")
        self.mode_box.addItems(list(MODES))
        self.mode_box.setToolTip("Each merge: one step per occurrence merged. By rule: the lecture's encode loop, "
                                 "one step per merge rule, every occurrence of its pair at once")
        self.mode_box.currentTextChanged.connect(lambda text: self.set_mode(MODES[text]))
        mode_row = QHBoxLayout()  # a row of its own: the buttons and slider fit a narrow dock
        mode_row.addWidget(self.mode_box)
        mode_row.addStretch(1)
        buttons = QHBoxLayout()
        for text, tip, move in (("⏮", "Before any merge", lambda: 0),
                                ("◀", "One merge back", lambda: self.slider.value() - 1),
                                ("▶", "One merge more", lambda: self.slider.value() + 1),
                                ("⏭", "Every merge", lambda: self.slider.maximum())):
            b = QToolButton()
            b.setText(text)
            b.setToolTip(tip)
            b.clicked.connect(lambda checked=False, move=move: self.slider.setValue(move()))
            buttons.addWidget(b)
        buttons.addWidget(self.slider, 1)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(mode_row)
        left_layout.addLayout(buttons)
        left_layout.addWidget(self.step_label)
        left_layout.addWidget(self.sequence, 1)
        split = QSplitter()
        split.addWidget(left)
        split.addWidget(self.steps)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(split, 1)
        layout.addWidget(self.verdict)
        self.slider.valueChanged.connect(self._show_step)
        self.steps.selectionModel().currentRowChanged.connect(
            lambda current, _: current.isValid() and self.slider.setValue(current.row() + 1))
        state.caret_changed.connect(self._on_caret)
        state.tokenizer_changed.connect(lambda _: self._clear())
        state.dark_changed.connect(lambda _: self._show_step(self.slider.value()))
        state.token_colours_changed.connect(lambda _: self._show_step(self.slider.value()))

    def sizeHint(self) -> QSize:
        return QSize(640, 300)

    @property
    def up_to_date(self) -> bool:
        """The trace asked for last is shown (for screenshots and tests)."""
        return self._answered == self._generation

    def set_mode(self, mode: str) -> None:
        """Show the trace per occurrence ("occurrence") or per rule ("rule"); the trace is kept."""
        if mode not in MODES.values() or mode == self.mode:
            return
        self.mode = mode
        self.mode_box.blockSignals(True)
        self.mode_box.setCurrentText(next(text for text, m in MODES.items() if m == mode))
        self.mode_box.blockSignals(False)
        if self.trace is not None:
            self._draw()

    def _clear(self) -> None:
        self._generation += 1
        self._answered = self._generation
        self._key, self.trace, self.expected = None, None, []
        self.rules, self.rules_message = None, ""
        self.steps_model.show(None)
        self.slider.setRange(0, 0)
        self.title.setText("Put the caret in the text to see how its chunk was encoded.")
        self.sequence.setText("")
        self.step_label.set_forms([])
        self.verdict.setText("")

    def _on_caret(self, index: int) -> None:
        if index >= 0 and self.isVisible():  # -1 while an edit is being tokenized: keep the last trace
            self.trace_token(index)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.state.caret >= 0:
            self.trace_token(self.state.caret)

    def trace_token(self, index: int) -> None:
        """Trace the chunk of the current result that token `index` belongs to (asked of the server)."""
        result = self.state.result
        if result is None or not 0 <= index < len(result):
            return
        if self._key is not None and self._key[0] is result and self._key[1] <= index < self._key[2]:
            return  # the same chunk of the same result
        self._key = (result, index, index + 1)
        self._generation += 1
        gen = self._generation

        def done(answer: TraceAnswer | None) -> None:
            if gen != self._generation:
                return  # the caret moved on meanwhile
            if answer is None:  # the server's text is newer than this result: its own trace follows
                self._answered, self._key = gen, None
                return
            if answer.trace is not None:
                self._key = (result, answer.first, answer.stop)
            self.rules, self.rules_message = answer.rules, answer.rules_message
            self._show(gen, answer.trace if answer.trace is not None else answer.message, list(answer.expected))

        self.state.server.ask(TraceAt(self.state.doc, result.generation, index), done,
                              lambda message: self._show(gen, message, []))

    def _show_problem(self, message: str) -> None:
        self.trace = None
        self.steps_model.show(None)
        self.slider.setRange(0, 0)
        self.sequence.setText("")
        self.step_label.set_forms([])
        self.verdict.setText("")
        self.title.setText(f"No trace: {html.escape(message)}.")

    def _show(self, gen: int, answer: EncodeTrace | str, expected: list[int]) -> None:
        if gen != self._generation:
            return  # the caret moved on meanwhile
        self._answered = gen
        if isinstance(answer, str):
            self._show_problem(answer)
            return
        self.trace, self.expected = answer, expected
        self._draw()

    def _draw(self) -> None:
        """Show the trace in the current mode, at its last step."""
        answer, expected = self.trace, self.expected
        by_rule = self.mode == "rule"
        if by_rule and self.rules is None:
            self._show_problem(f"{self.rules_message or 'no by-rule trace for this chunk'} (switch to “each merge”)")
            self.trace = answer  # kept for the other mode
            return
        final, how = (self.rules.final, self.rules.how) if by_rule else (answer.final, answer.how)
        n_steps = len(self.rules.rules) if by_rule else len(answer.steps)
        label = token_label(answer.chunk[:SHOWN_CHUNK_BYTES]) + ("…" if len(answer.chunk) > SHOWN_CHUNK_BYTES else "")
        counted = (f"{n_steps:,} rule{'s' * (n_steps != 1)} applied, {self.rules.occurrences:,} merges in all"
                   if by_rule else f"{n_steps:,} merge{'s' * (n_steps != 1)}")
        self.title.setText(f"Chunk <b>{html.escape(label)}</b> "
                           f"(characters {answer.start:,}–{answer.end:,}, {len(answer.chunk):,} bytes, "
                           f"{len(answer.initial_ids):,} parts → {len(final):,} tokens; {counted}) · {answer.tokenizer}"
                           f"<br><span style='color:gray'>Each step: {html.escape(how)}.</span>")
        self.steps_model.show(answer, self.rules if by_rule else None)
        agree = final == expected
        extra = (f" Then byte fallback: {', '.join(answer.fallback)} became byte pieces."
                 if answer.fallback and not by_rule else "")
        self.verdict.setText(
            (f"✓ Final ids {_ids(final)} equal {answer.tokenizer}'s own." if agree else
             f"✗ The trace ends with {_ids(final)}, but {answer.tokenizer} gave {_ids(expected)}.") + extra)
        self.slider.blockSignals(True)
        self.slider.setRange(0, n_steps)
        self.slider.setValue(n_steps)
        self.slider.blockSignals(False)
        self._show_step(n_steps)

    def _show_rule(self, k: int) -> None:
        """The sequence after the first k rules, the parts rule k made underlined."""
        rules = self.rules
        ids, data = rules.sequence(k)
        rule = rules.rules[k - 1] if k > 0 else None
        made = [p - j for j, p in enumerate(rule.positions)] if rule is not None else []  # in the sequence after
        first = made[0] if made else -1
        n_parts = len(ids)
        lo = max(0, min(first - PAGE_PARTS // 2, n_parts - PAGE_PARTS))
        hi = min(n_parts, lo + PAGE_PARTS)
        parts = [Part(i, b) for i, b in zip(ids[lo:hi], data[lo:hi])]
        page = "" if (lo, hi) == (0, n_parts) else f" Showing parts {lo + 1:,}–{hi:,}."
        if rule is None:
            self.step_label.set_forms([f"Before any rule: {n_parts:,} parts.{page}", "Before any rule"])
        else:
            self.step_label.set_forms([
                f"Rule {k:,} of {len(rules.rules):,}: ({rule.pair[0]}, {rule.pair[1]}) → {rule.new_id}, "
                f"{token_label(rule.left)} + {token_label(rule.right)}, at {len(rule.positions):,} "
                f"place{'s' * (len(rule.positions) != 1)}; length {n_parts:,}.{page}",
                f"Rule {k:,} of {len(rules.rules):,}"])
        self.sequence.setText(self._parts_html(parts, {m - lo for m in made}, lo > 0, hi < n_parts))
        self._select_row(k)

    def _select_row(self, k: int) -> None:
        """The list's row of step k (none before the first)."""
        selection = self.steps.selectionModel()
        selection.blockSignals(True)
        if k > 0:
            row = self.steps_model.index(k - 1)
            self.steps.setCurrentIndex(row)
            self.steps.scrollTo(row)
        else:
            self.steps.clearSelection()
            self.steps.setCurrentIndex(QModelIndex())
        selection.blockSignals(False)
        self.steps.viewport().update()

    def _show_step(self, k: int) -> None:
        trace = self.trace
        if trace is None:
            return
        if self.mode == "rule":
            if self.rules is not None:
                self._show_rule(k)
            return
        n_parts = len(trace.initial_ids) - k  # each merge joins two parts into one
        step = trace.steps[k - 1] if k > 0 else None
        made = step.position if step is not None else -1
        # A page of the sequence around the part just made (the start, before any merge).
        lo = max(0, min(made - PAGE_PARTS // 2, n_parts - PAGE_PARTS))
        hi = min(n_parts, lo + PAGE_PARTS)
        parts = trace.sequence(k, lo, hi)
        page = "" if (lo, hi) == (0, n_parts) else f" Showing parts {lo + 1:,}–{hi:,}."
        if step is None:
            self.step_label.set_forms([f"Before any merge: {n_parts:,} parts.{page}", "Before any merge"])
        else:
            self.step_label.set_forms([
                f"Step {k:,} of {len(trace.steps):,}: {token_label(step.left.bytes)} + "
                f"{token_label(step.right.bytes)} → id {step.new_id} (rank {step.rank}); {n_parts:,} parts.{page}",
                f"Step {k:,} of {len(trace.steps):,}"])
        self.sequence.setText(self._parts_html(parts, {made - lo}, lo > 0, hi < n_parts))
        self._select_row(k)

    def _parts_html(self, parts: list[Part], made: set[int], before: bool = False, after: bool = False) -> str:
        palette = TokenPalette(self.state.dark, self.state.token_colours)
        ids = np.array([p.id if p.id is not None else 0 for p in parts], dtype=np.int64)
        colours = colour_indices(ids) if len(ids) else ids
        out = []
        for i, (p, c) in enumerate(zip(parts, colours)):
            colour = palette.background(int(c)) if p.id is not None else None
            bg = colour.name() if colour is not None else "#dddddd"
            label = html.escape(token_label(p.bytes))
            if i in made:  # a part this step made
                label = f"<span style='text-decoration:underline; font-weight:bold;'>{label}</span>"
            out.append(f"<span style='background-color:{bg};'>&nbsp;{label}&nbsp;</span>")
        ink = "#e8eaed" if self.state.dark else "#202124"
        more = "<span style='color:gray'>…</span>"
        return (f"<div style='font-size:large; line-height:160%; color:{ink}'>" + (more + " " if before else "")
                + "&#8203; ".join(out) + (" " + more if after else "") + "</div>")
