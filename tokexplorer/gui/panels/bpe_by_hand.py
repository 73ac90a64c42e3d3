"""BPE by hand: the lecture's get_stats / merge loop on the editor's text (or its selection), one
merge at a time, and the lecture's `merge([5, 6, 6, 7, 9, 1], (6, 7), 99)` on numbers typed in.

On the text: the table of pair counts sorted as `sorted(((v, k) for k, v in stats.items()),
reverse=True)` prints it, the row of the pair the next merge takes in bold; the current sequence as
chips with that pair's occurrences highlighted (and the regex chunks' borders when the text is
pre-split); Merge, "Merge N" and Reset; the merges so far in a list beside it; the bytes, the
length and the compression so far; and, where several pairs share the top count, which one
minbpe's `max(stats, key=stats.get)` takes (the first met) and which one the sorted table lists
first.

The merges run in the tokenizing server (`BpeByHandOf`, `MergeTypedIds`): they need no tokenizer,
but their loops on a big text would hold the window's interpreter. Every answer is the whole state
after N merges from the start, so an answer overtaken by a newer request (another click, an edit)
is dropped by its generation. Nothing is asked while the view is hidden. It never calls another
view.
"""

from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (QComboBox, QFormLayout, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QListWidget,
                               QListWidgetItem, QPushButton, QScrollArea, QSpinBox, QSplitter, QTableWidget,
                               QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from tokexplorer.core.analysis.bpe_by_hand import FIRST_NEW_ID, PATTERNS, ByHandSnapshot, MergeStep, TypedMerge
from tokexplorer.core.analysis.unicode_info import token_label
from tokexplorer.core.token_colours import colour_indices
from tokexplorer.gui.state import AppState
from tokexplorer.gui.widgets.colours import TokenPalette
from tokexplorer.gui.widgets.elided_rows import elide_rows
from tokexplorer.server.protocol import BpeByHandOf, MergeTypedIds

TABLE_ROWS = 100  # rows of the sorted pair counts shown
SHOWN_IDS = 2000  # ids of the sequence drawn as chips
PATTERN_NAMES = {"none": "over all the bytes", "gpt2": "within GPT-2 chunks", "gpt4": "within GPT-4 chunks"}
HIGHLIGHT = ("#ffca28", "#8d6e00")  # the next pair's occurrences: light, dark


def _pair(pair: tuple[int, int]) -> str:
    return f"({pair[0]}, {pair[1]})"


def _times(n: int) -> str:
    return {0: "nowhere", 1: "once", 2: "twice"}.get(n, f"{n:,} times")


def _list(ids: tuple[int, ...], limit: int = 200) -> str:
    """A list as Python prints it, or its start and how many there are."""
    if len(ids) <= limit:
        return str(list(ids))
    return f"[{', '.join(map(str, ids[:limit]))}, … ({len(ids):,} ids)]"


class BpeByHandView(QWidget):
    """The BPE-by-hand view (view name "bpe"). It takes only the `AppState` (whose server it asks)
    and is a dock's widget; to wire it in `main_window.py`, beside the other bottom docks:

        self.bpe_by_hand = BpeByHandView(self.state)
        dock = self._dock("BPE by Hand", "bpe_by_hand_dock", self.bpe_by_hand, SHORTCUT, view="bpe", area=bottom)
        self.tabifyDockWidget(self.inspector_dock, dock)
        dock.hide()

    (or add its row to the loop over the bottom docks there).
    """

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.setObjectName("bpe_by_hand")
        self.state = state
        self.snapshot: ByHandSnapshot | None = None
        self.typed: TypedMerge | None = None
        self.source = ""  # the text the merges run on
        self.merges = 0  # merges asked for, from the start
        self._generation = 0
        self._answered = 0
        self._typed_generation = 0
        self._timer = QTimer(self)  # one look at the text per burst of edits or selection moves
        self._timer.setSingleShot(True)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self.refresh)

        self.modes = QTabWidget()
        self.modes.addTab(self._text_mode(), "On the text")
        self.modes.addTab(self._numbers_mode(), "On numbers")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.modes)

        state.tokenized.connect(self._schedule)
        state.selection_changed.connect(self._schedule)
        state.dark_changed.connect(lambda _: self._show_sequence())
        state.token_colours_changed.connect(lambda _: self._show_sequence())

    # --- building ------------------------------------------------------------------------

    def _text_mode(self) -> QWidget:
        self.source_label = QLabel("")
        self.source_label.setObjectName("bpe_source")
        self.source_label.setWordWrap(True)
        self.pattern = QComboBox()
        self.pattern.setObjectName("bpe_pattern")
        for name in PATTERNS:
            self.pattern.addItem(f"{name}: pairs {PATTERN_NAMES[name]}", name)
        self.pattern.setToolTip("none: the lecture's first part, pairs over all the text's bytes; gpt2 / gpt4: "
                                "pairs counted within the regex chunks only, never across two")
        self.pattern.currentIndexChanged.connect(lambda _: self.reset())
        self.merge_button = QPushButton("Merge")
        self.merge_button.setObjectName("bpe_merge")
        self.merge_button.setToolTip("Merge the pair in bold into the next new id (256 + merges so far)")
        self.merge_button.clicked.connect(lambda: self.merge(1))
        self.count = QSpinBox()
        self.count.setObjectName("bpe_count")
        self.count.setRange(1, 100_000)
        self.count.setValue(20)
        self.count.setToolTip("How many merges Merge N runs")
        self.merge_n_button = QPushButton("Merge N")
        self.merge_n_button.setObjectName("bpe_merge_n")
        self.merge_n_button.setToolTip("Run this many merges more, each taking the top pair")
        self.merge_n_button.clicked.connect(lambda: self.merge(self.count.value()))
        self.reset_button = QPushButton("Reset")
        self.reset_button.setObjectName("bpe_reset")
        self.reset_button.setToolTip("Back to the text's bytes, before any merge")
        self.reset_button.clicked.connect(self.reset)
        bar = QVBoxLayout()  # two rows: in a narrow dock each control shows its whole text
        for widgets in ((self.pattern, self.reset_button), (self.merge_button, self.count, self.merge_n_button)):
            row = QHBoxLayout()
            for w in widgets:
                row.addWidget(w)
            row.addStretch(1)
            bar.addLayout(row)

        self.summary = QLabel("")
        self.summary.setObjectName("bpe_summary")
        self.summary.setWordWrap(True)
        self.tie = QLabel("")
        self.tie.setObjectName("bpe_tie")
        self.tie.setWordWrap(True)

        self.table = QTableWidget(0, 3)
        self.table.setObjectName("bpe_table")
        self.table.setHorizontalHeaderLabels(["count", "pair (ids)", "as text"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        # The count at its width (measured when the table is filled), the pair and its text sharing
        # the rest: in a narrow dock they are elided (each cell's tooltip says its row whole), and
        # the table never scrolls sideways.
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Fixed)
        header.setTextElideMode(Qt.TextElideMode.ElideRight)  # a narrow section's title too
        header.setMinimumSectionSize(self.table.fontMetrics().horizontalAdvance("0") * 2)  # down to "…"
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.table.setToolTip("The pair counts as sorted(((v, k) for k, v in stats.items()), reverse=True) "
                              "prints them; in bold the pair the next merge takes")
        self.sequence = QLabel("")
        self.sequence.setObjectName("bpe_sequence")
        self.sequence.setWordWrap(True)
        self.sequence.setTextFormat(Qt.TextFormat.RichText)
        self.sequence.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.sequence)
        self.merges_list = QListWidget()
        self.merges_list.setObjectName("bpe_merges")
        elide_rows(self.merges_list)  # whole in its tooltip: the list never scrolls sideways
        self.split = split = QSplitter()
        self._table_widened = False  # see _widen_table
        split.addWidget(self.table)
        split.addWidget(scroll)
        split.addWidget(self.merges_list)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 4)
        split.setStretchFactor(2, 2)
        split.setSizes([260, 520, 260])  # the sequence widest (else the table takes what it likes)

        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.source_label)
        layout.addLayout(bar)
        layout.addWidget(self.summary)
        layout.addWidget(self.tie)
        layout.addWidget(split, 1)
        return page

    def _numbers_mode(self) -> QWidget:
        self.typed_ids = QLineEdit("5, 6, 6, 7, 9, 1")
        self.typed_ids.setObjectName("bpe_typed_ids")
        self.typed_ids.setToolTip("A list of integers, separated by commas or spaces (the lecture's ids)")
        self.typed_pair = QLineEdit("6, 7")
        self.typed_pair.setObjectName("bpe_typed_pair")
        self.typed_pair.setToolTip("The pair to replace: two integers")
        self.typed_new_id = QLineEdit("99")
        self.typed_new_id.setObjectName("bpe_typed_new_id")
        self.typed_new_id.setToolTip("The id each occurrence of the pair becomes")
        self.typed_button = QPushButton("merge(ids, pair, new id)")
        self.typed_button.setObjectName("bpe_typed_merge")
        self.typed_button.setToolTip("Replace every occurrence of the pair, left to right, by the new id")
        self.typed_button.clicked.connect(self.merge_typed)
        for edit in (self.typed_ids, self.typed_pair, self.typed_new_id):
            edit.returnPressed.connect(self.merge_typed)
        self.typed_result = QLabel("")
        self.typed_result.setObjectName("bpe_typed_result")
        self.typed_result.setWordWrap(True)
        self.typed_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.typed_result.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        form = QFormLayout()
        form.addRow("ids", self.typed_ids)
        form.addRow("pair", self.typed_pair)
        form.addRow("new id", self.typed_new_id)
        form.addRow("", self.typed_button)
        page = QWidget()
        layout = QVBoxLayout(page)
        intro = QLabel("The lecture's merge on a list of whole numbers: every occurrence of the pair, "
                       "read left to right, becomes the new id.")
        intro.setWordWrap(True)  # in a narrow dock too
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.typed_result, 1)
        return page

    def sizeHint(self) -> QSize:
        return QSize(900, 360)

    def resizeEvent(self, event) -> None:
        """The table, the sequence and the merges side by side in a wide view, one above the other
        in a tall one (a narrow dock): each keeps room for its columns."""
        super().resizeEvent(event)
        tall = event.size().height() > event.size().width()
        self.split.setOrientation(Qt.Orientation.Vertical if tall else Qt.Orientation.Horizontal)

    # --- the text --------------------------------------------------------------------------

    @property
    def up_to_date(self) -> bool:
        """The state asked for last is shown (for screenshots and tests)."""
        return self._answered == self._generation

    def _schedule(self, *_) -> None:
        if self.isVisible():
            self._timer.start()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.refresh()

    def _text(self) -> tuple[str, str] | None:
        """The text to merge on (the selection, or else the whole text) and what it is; None while
        the editor's text has no result (the last text stays)."""
        result = self.state.result
        if result is None:
            return None
        text = result.encoding.text
        start, end = self.state.selection
        if 0 <= start < end <= len(text):
            return text[start:end], f"The selection: characters {start:,}–{end:,}"
        return text, f"The whole text: {len(text):,} characters"

    def refresh(self) -> None:
        """Take up the editor's current text or selection; a new one starts over from its bytes."""
        taken = self._text()
        if taken is None and self._generation:
            return
        text, what = taken or ("", "")
        self.source_label.setText(what if text else "Type or open a text in the editor, or select part of it.")
        if text != self.source or self._generation == 0:
            self.source = text
            self.merges = 0
            self._ask()

    def reset(self) -> None:
        self.merges = 0
        self._ask()

    def merge(self, n: int) -> None:
        """`n` merges more."""
        if self.snapshot is not None and self.snapshot.next_pair is None:
            return  # no pair left
        self.merges += n
        self._ask()

    def _ask(self) -> None:
        self._generation += 1
        gen = self._generation
        if not self.source:
            self._answered = gen
            self.snapshot = None
            self._show_nothing("")
            return
        self.summary.setText(f"Merging ({self.merges:,} merges)…")
        self.state.server.ask(BpeByHandOf(self.source, self.pattern.currentData(), self.merges, TABLE_ROWS, SHOWN_IDS),
                              lambda snapshot: self._show(gen, snapshot),
                              lambda message: self._fail(gen, message),
                              on_progress=lambda done, total: self._progress(gen, done, total))

    def _progress(self, gen: int, done: int, total: int) -> None:
        if gen == self._generation:
            self.summary.setText(f"Merging: {done:,} of {total:,} merges…")

    def _fail(self, gen: int, message: str) -> None:
        if gen != self._generation:
            return
        self._answered = gen
        self.snapshot = None
        self._show_nothing(f"<span style='color:#c62828'>{html.escape(message, quote=False)}</span>")

    def _show_nothing(self, message: str) -> None:
        self.summary.setText(message)
        self.tie.setText("")
        self.table.setRowCount(0)
        self.sequence.setText("")
        self.merges_list.clear()

    def _show(self, gen: int, snapshot: ByHandSnapshot) -> None:
        if gen != self._generation:
            return  # a newer click or text overtook it
        self._answered = gen
        self.snapshot = snapshot
        done = len(snapshot.steps)
        ended = ""
        if done < self.merges:
            self.merges = done
            ended = " No pair is left: every chunk is one token."
        self.summary.setText(f"{snapshot.n_bytes:,} bytes → {snapshot.length:,} ids after {done:,} "
                             f"merge{'s' if done != 1 else ''}: compression {snapshot.ratio:.2f}×."
                             f" {snapshot.n_pairs:,} distinct pairs.{ended}")
        self.merge_button.setEnabled(snapshot.next_pair is not None)
        self.merge_n_button.setEnabled(snapshot.next_pair is not None)
        self.tie.setText(self._tie_text(snapshot))
        self._show_table(snapshot)
        self._show_sequence()
        self.merges_list.clear()
        for step in snapshot.steps:
            item = QListWidgetItem(self._step_text(step))
            item.setToolTip(item.text())
            self.merges_list.addItem(item)
        self.merges_list.scrollToBottom()

    def _label(self, token_id: int) -> str:
        return token_label(self.snapshot.token_bytes(token_id))

    def _tie_text(self, snapshot: ByHandSnapshot) -> str:
        if snapshot.next_pair is None:
            return ""
        pair = snapshot.next_pair
        text = f"Next: {_pair(pair)} → {FIRST_NEW_ID + len(snapshot.steps)}."
        if snapshot.next_tied:
            first = snapshot.table[0][1]
            text += (f" Tie: {len(snapshot.next_tied)} pairs occur {snapshot.table[0][0]:,} times. "
                     f"minbpe's max(stats, key=stats.get) takes the one met first in the text, {_pair(pair)}")
            text += (f"; the sorted table lists {_pair(first)} first." if first != pair
                     else ", which the sorted table lists first too.")
        return text

    def _step_text(self, step: MergeStep) -> str:
        a, b = step.pair
        text = (f"{step.new_id} ← {_pair(step.pair)} {self._label(a)} + {self._label(b)}  ×{step.count:,}  "
                f"→ {step.length:,} ids")
        if step.tied:
            text += f"  (tie of {len(step.tied)}: first met"
            text += f"; table's first {_pair(step.table_first)})" if step.table_first != step.pair else ")"
        return text

    def _show_table(self, snapshot: ByHandSnapshot) -> None:
        self.table.setRowCount(len(snapshot.table))
        bold = QFont(self.table.font())
        bold.setBold(True)
        for row, (count, pair) in enumerate(snapshot.table):
            cells = [QTableWidgetItem(f"{count:,}"), QTableWidgetItem(_pair(pair)),
                     QTableWidgetItem(f"{self._label(pair[0])} + {self._label(pair[1])}")]
            cells[0].setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            whole = f"{cells[0].text()} × {cells[1].text()} {cells[2].text()}"
            if pair == snapshot.next_pair:
                whole += ": the next merge takes this pair"
            elif pair in snapshot.next_tied:
                whole += ": tied with the pair in bold, but met later in the text"
            for column, cell in enumerate(cells):
                if pair == snapshot.next_pair:
                    cell.setFont(bold)
                cell.setToolTip(whole)
                self.table.setItem(row, column, cell)
        self.table.resizeColumnToContents(0)
        if not self._table_widened:
            self._widen_table()

    def _widen_table(self) -> None:
        """Once, when the table is first filled: side by side, give it the room its columns ask
        for (up to two fifths of the view, from the sequence's share); the user's dragging stays."""
        if self.split.orientation() != Qt.Orientation.Horizontal or not self.table.rowCount():
            return
        self._table_widened = True
        sizes = self.split.sizes()
        needed = (sum(self.table.sizeHintForColumn(c) for c in range(3))  # 100 rows at most: cheap
                  + self.table.verticalScrollBar().sizeHint().width() + 2 * self.table.frameWidth())
        more = min(needed, sum(sizes) * 2 // 5) - sizes[0]
        if more > 0:
            self.split.setSizes([sizes[0] + more, sizes[1] - more, sizes[2]])

    def _show_sequence(self) -> None:
        snapshot = self.snapshot
        if snapshot is None:
            return
        palette = TokenPalette(self.state.dark, self.state.token_colours)
        head = snapshot.head
        colours = colour_indices(np.array(head, dtype=np.int64)) if head else []
        marked = set(snapshot.marks) | {i + 1 for i in snapshot.marks}
        borders = set(snapshot.chunk_starts) - {0}
        highlight = HIGHLIGHT[1 if self.state.dark else 0]
        out = []
        for i, (token_id, colour) in enumerate(zip(head, colours)):
            if i in borders:
                out.append("<span style='color:gray'>┃</span>")
            label = html.escape(self._label(token_id))
            if token_id >= FIRST_NEW_ID:
                label += f"<sub>{token_id}</sub>"
            if i in marked:
                out.append(f"<span style='background-color:{highlight}; font-weight:bold; "
                           f"text-decoration:underline'>&nbsp;{label}&nbsp;</span>")
            else:
                background = palette.background(int(colour))
                bg = background.name() if background is not None else "transparent"
                out.append(f"<span style='background-color:{bg}'>&nbsp;{label}&nbsp;</span>")
        more = (f" <span style='color:gray'>… {snapshot.length - len(head):,} more</span>"
                if snapshot.length > len(head) else "")
        ink = "#e8eaed" if self.state.dark else "#202124"
        self.sequence.setText(f"<div style='font-size:large; line-height:160%; color:{ink}'>"
                              + "&#8203;".join(out) + more + "</div>")

    # --- numbers typed in ----------------------------------------------------------------

    def merge_typed(self) -> None:
        """The lecture's merge on the typed list, pair and new id (asked of the server)."""
        self._typed_generation += 1
        gen = self._typed_generation
        self.state.server.ask(MergeTypedIds(self.typed_ids.text(), self.typed_pair.text(), self.typed_new_id.text()),
                              lambda typed: self._show_typed(gen, typed),
                              lambda message: self._show_typed(gen, message))

    def _show_typed(self, gen: int, typed: TypedMerge | str) -> None:
        if gen != self._typed_generation:
            return
        if isinstance(typed, str):
            self.typed = None
            self.typed_result.setText(f"<span style='color:#c62828'>{html.escape(typed, quote=False)}</span>")
            return
        self.typed = typed
        counts = ", ".join(f"({c}, {_pair(p)})" for c, p in typed.counts[:TABLE_ROWS])
        self.typed_result.setText(
            f"<p><code>merge({_list(typed.ids)}, {_pair(typed.pair)}, {typed.new_id})</code></p>"
            f"<p style='font-size:large'><code>{_list(typed.merged)}</code></p>"
            f"<p>{len(typed.ids):,} ids → {len(typed.merged):,}: the pair was replaced {_times(len(typed.ids) - len(typed.merged))} "
            "(read left to right: where two occurrences overlap, as in 1, 1, 1 for the pair 1, 1, the first one "
            "is replaced).</p>"
            f"<p style='color:gray'>Its pair counts, sorted: [{counts}]</p>")
