"""The vocabulary browser: every token of the current tokenizer (o200k_base: 200,000 rows),
searchable by text, hex bytes or id, sortable by id (the rank, for BPE), byte length and count in
the text, filtered to special tokens, byte-fallback pieces, tokens that are not valid UTF-8 on their
own, or the tokens of the text. Selecting a row explains that token (the merge tree follows it) and
finds its next occurrence in the text.

The core's `Vocabulary` holds the tokens as arrays, read by the tokenizing server once per
tokenizer (`VocabularyOf`, asked after the window has shown the text's new tokens, so that the
server tokenizes those first) and kept here; the model shows an array of ids and formats only the
rows on screen, so a search, a sort or a filter is a numpy operation and the view stays instant.
Counts follow the text a moment behind the editor, and not at all while the panel is hidden: a
worker counts the result's ids (`Occurrences`, under the generation rule; no tokenizer is
needed); picking a row finds the token's next occurrence by scanning the ids from the caret's
token. It never calls another panel.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QSizePolicy, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QTableView, QToolButton, QVBoxLayout, QWidget)

from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.analysis.vocabulary import FILTERS, Kind, Occurrences, Vocabulary, next_occurrence
from tokexplorer.core.token_colours import colour_indices
from tokexplorer.gui.widgets.colours import TokenPalette
from tokexplorer.gui.widgets.table_model import (ALIGNMENT, BACKGROUND, DISPLAY, RIGHT, TOOLTIP, TableModel,
                                                 fixed_rows)
from tokexplorer.gui.state import AppState
from tokexplorer.core.analysis.unicode_info import token_label
from tokexplorer.server.protocol import VocabularyOf
from tokexplorer.gui.services.worker import run_job

COLUMNS = ["id", "token", "bytes", "length", "count", "kind"]
SORT_KEY = {0: "id", 3: "length", 4: "count"}  # column -> Vocabulary.order key
SEARCHES = [("text", "Text"), ("hex", "Hex bytes"), ("id", "Id")]
FOLLOW_MS = 300  # the counts follow the text this long after it was tokenized
SEARCH_MS = 120  # a search runs once typing in the box pauses this long
READ_AFTER_MS = 300  # a vocabulary is read this long after the window's worker has answered


_KIND_NAMES = [(int(Kind.SPECIAL), "special"), (int(Kind.BYTE_FALLBACK), "byte fallback"),
               (int(Kind.NOT_UTF8), "partial UTF-8")]


def kind_text(kind: int) -> str:
    return ", ".join(name for bit, name in _KIND_NAMES if kind & bit)


class VocabModel(TableModel):
    """Rows are `ids` (an array), in the order shown; cells are formatted when asked for."""

    HEADERS = COLUMNS
    HEADER_TIPS = {0: "Token id (for BPE also its rank: the merge order)", 3: "Length in bytes",
                   4: "How many times the token occurs in the text", 1: "Spaces as ␣, partial "
                   "characters as \\xNN", 5: "special token, byte-fallback piece, or not valid "
                   "UTF-8 on its own"}
    ROLES = frozenset({DISPLAY, BACKGROUND, ALIGNMENT, TOOLTIP})

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.vocab: Vocabulary | None = None
        self.ids = np.zeros(0, dtype=np.int64)
        self.counts: np.ndarray | None = None
        self._palette = TokenPalette(state.dark, state.token_colours)
        self.sort_request: tuple[int, Qt.SortOrder] = (0, Qt.SortOrder.AscendingOrder)
        self.on_sort = lambda: None  # the panel re-runs its query when the user sorts

    def show(self, vocab: Vocabulary | None, ids: np.ndarray, counts: np.ndarray | None) -> None:
        with self.resetting():
            self.vocab, self.ids, self.counts = vocab, ids, counts
            self._palette = TokenPalette(self.state.dark, self.state.token_colours)

    def row_count(self) -> int:
        return len(self.ids)

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        if column in SORT_KEY:
            self.sort_request = (column, order)
            self.on_sort()

    def token_id(self, row: int) -> int:
        return int(self.ids[row])

    def cell(self, row: int, col: int, role: int):
        vocab = self.vocab
        if vocab is None:
            return None
        token_id = int(self.ids[row])
        if role == DISPLAY:
            if col == 0:
                return token_id
            if col == 4:
                return "" if self.counts is None else int(self.counts[token_id])
            kind = int(vocab.kinds[token_id])
            if col == 5:
                return kind_text(kind)
            data = vocab.token_bytes(token_id)
            if col == 1:
                return data.decode("utf-8") if kind & _SPECIAL else token_label(data)
            return data.hex(" ") if col == 2 else len(data)
        if role == BACKGROUND:
            return self._palette.background(int(colour_indices(np.array([token_id]))[0])) if col == 1 else None
        if role == ALIGNMENT:
            return RIGHT if col in (0, 3, 4) else None
        return f"score {vocab.scores[token_id]:g}" if vocab.scores is not None else None


_SPECIAL = int(Kind.SPECIAL)


class VocabPanel(QWidget):
    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.setObjectName("vocab_panel")
        self.state = state
        self.vocab: Vocabulary | None = None
        self.vocab_name = ""  # the tokenizer `vocab` belongs to
        self._vocabs: dict[str, Vocabulary] = {}  # tokenizer name -> its vocabulary, read once
        self._loading = ""  # the tokenizer whose vocabulary is wanted and not yet read
        self._reading = False  # whether the server was asked for it already
        self._counted = None  # the result the counts are of
        self._counting = None  # the result a worker is counting
        self.counts: np.ndarray | None = None
        self.occurrences: Occurrences | None = None  # of `_counted`

        self.search_box = QLineEdit()
        self.search_box.setToolTip('Find tokens by text (␣ for a space), by hex bytes (e2 80 99) or by id')
        self.search_box.setObjectName("vocab_search")
        self.search_box.setClearButtonEnabled(True)
        self.search_box.setPlaceholderText("Search tokens (␣ or a space for spaces)")
        self.search_by = QComboBox()
        for key, label in SEARCHES:
            self.search_by.addItem(label, key)
        self.search_by.setToolTip("Search by text (part of the token), hex bytes ('e2 80 99') or id")
        self.match_case = QToolButton()
        self.match_case.setText("Aa")
        self.match_case.setCheckable(True)
        self.match_case.setToolTip("Match case (ASCII letters)")
        self.filter = QComboBox()
        for key, (_, label) in FILTERS.items():
            self.filter.addItem(label.capitalize(), key)
        self.filter.addItem("Tokens in the text", "in-text")
        self.filter.setToolTip("Which tokens to list")
        # A long filter name or status must not make the dock (and so the window) wide.
        self.filter.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.filter.setMinimumContentsLength(12)
        self.info = QLabel("")  # a row of its own, wrapped: the dock is often narrow
        self.info.setObjectName("vocab_info")
        self.info.setWordWrap(True)
        self.info.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.find_button = QPushButton("Find in Text")
        self.find_button.setToolTip("Go to the selected token's next occurrence in the text")
        self.find_button.clicked.connect(self.find_next)

        self.model = VocabModel(state, self)
        self.model.on_sort = self.refresh
        self.table = QTableView()
        self.table.setObjectName("vocab_table")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        fixed_rows(self.table, self.fontMetrics().height() + 6)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setSortingEnabled(True)
        self.table.horizontalHeader().setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        width = self.fontMetrics().horizontalAdvance("0") * 8
        for col, w in ((0, width), (1, 2 * width), (2, 2 * width), (3, width * 3 // 4), (4, width)):
            self.table.setColumnWidth(col, w)
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        self.table.doubleClicked.connect(lambda _: self.find_next())

        top = QHBoxLayout()
        top.addWidget(self.search_box, 1)
        top.addWidget(self.search_by)
        top.addWidget(self.match_case)
        bottom = QHBoxLayout()
        bottom.addWidget(self.filter, 1)
        bottom.addWidget(self.find_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addLayout(bottom)
        layout.addWidget(self.info)

        self._search_timer = QTimer(self, singleShot=True, interval=SEARCH_MS, timeout=self.refresh)
        self._count_timer = QTimer(self, singleShot=True, interval=FOLLOW_MS, timeout=self._follow_text)
        self._read_timer = QTimer(self, singleShot=True, interval=READ_AFTER_MS, timeout=self._read)
        self.search_box.textChanged.connect(lambda _: self._search_timer.start())
        self.search_by.currentIndexChanged.connect(lambda _: self.refresh())
        self.match_case.toggled.connect(lambda _: self.refresh())
        self.filter.currentIndexChanged.connect(lambda _: self.refresh())
        state.tokenizer_changed.connect(lambda _: self._load())
        state.busy_changed.connect(lambda busy: not busy and self._loading and self._read_timer.start())
        state.tokenized.connect(lambda _: self._count_timer.start())
        state.dark_changed.connect(lambda _: self.model.show(self.vocab, self.model.ids, self.counts))
        state.token_colours_changed.connect(lambda _: self.model.show(self.vocab, self.model.ids, self.counts))

    @property
    def up_to_date(self) -> bool:
        """Shown, the current tokenizer's vocabulary is listed with the current text's counts."""
        return not self.isVisible() or (self.vocab_name == self.state.tokenizer and not self._loading
                                        and self._counted is self.state.result
                                        and not self._search_timer.isActive())

    # --- the vocabulary ------------------------------------------------------------------

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._load()
        self._follow_text()

    def _load(self) -> None:
        """Read the current tokenizer's vocabulary (asked of the server, once); then show it."""
        name = self.state.tokenizer
        if self.vocab is not None and self.vocab_name == name:
            return
        known = self._vocabs.get(name)
        if known is not None:
            self._loaded(name, known)
            return
        if not self.isVisible() or self._loading == name:
            return  # read when the panel is first shown
        self._loading, self._reading = name, False
        self.vocab, self.vocab_name = None, ""
        self.model.show(None, np.zeros(0, dtype=np.int64), None)
        self.info.setText(f"reading {name}'s vocabulary…")
        self._read_timer.start()

    def _read(self) -> None:
        """Ask the server for the vocabulary `_load` wanted, once the window is idle.

        subtle: the server's threads share one interpreter lock, so reading a vocabulary (0.1 s
        for o200k_base) beside the new tokenizer's first encode of the text would delay the
        text's new tokens; and the answer, a few MB, is unpickled in the window's pipe reader,
        beside the window's repaint of them. So it waits for the window's tokens to arrive
        (`busy_changed` comes just before the result), and a moment more for the window to show
        them and the token table to follow (120 ms later)."""
        name = self._loading
        if not name or self._reading or self.state.busy:
            return  # nothing asked, already reading, or `busy_changed` starts the timer again
        self._reading = True
        self.state.server.ask(VocabularyOf(name), lambda vocab: self._loaded(name, vocab),
                              lambda message: self._failed(name, message))

    def _loaded(self, name: str, vocab: Vocabulary) -> None:
        self._vocabs[name] = vocab
        if self._loading == name:
            self._loading = ""
        if name != self.state.tokenizer:
            return  # the user moved on; kept for when they come back
        self.vocab, self.vocab_name = vocab, name
        self._counted = None
        self._follow_text()
        self.refresh()

    def _failed(self, name: str, message: str) -> None:
        if self._loading == name:
            self._loading = ""
        if name == self.state.tokenizer:
            self.info.setText(f"cannot read {name}'s vocabulary: {message}")

    # --- counts, query, rows -------------------------------------------------------------

    def _follow_text(self) -> None:
        """Count and index the tokens of the current text, in a worker (a book's ids as an array
        and their index: about 40 ms, which the UI thread would spend on every pause in typing)."""
        result, vocab = self.state.result, self.vocab
        if vocab is None or not self.isVisible() or result is self._counted or result is self._counting:
            return
        if result is None or result.tokenizer != self.vocab_name:
            self._counting = None
            self._counted_now(result, None)
            return
        self._counting = result
        encoding = result.encoding
        run_job(lambda progress: vocab.occurrences(encoding),
                on_result=lambda occ: self._counted_now(result, occ, vocab=vocab),
                on_error=lambda exc: self._counted_now(result, None, str(exc), vocab=vocab))

    def _counted_now(self, result, occ: Occurrences | None, problem: str = "", *, vocab=None) -> None:
        if result is self._counting:
            self._counting = None
        if result is not self.state.result or (vocab is not None and vocab is not self.vocab):
            self._follow_text()  # the text (or the tokenizer) moved on meanwhile: the generation rule
            return
        self._counted, self.occurrences = result, occ
        self.counts = None if occ is None else occ.counts
        if problem:
            self.info.setText(f"cannot count the tokens: {problem}")
        if self.model.sort_request[0] == 4 or self.filter.currentData() == "in-text":
            self.refresh()
        else:
            self.model.counts = self.counts
            if self.model.rowCount():
                self.model.dataChanged.emit(self.model.index(0, 4), self.model.index(self.model.rowCount() - 1, 4))

    def refresh(self) -> None:
        """Run the search, the filter and the sort; show the ids that remain."""
        vocab = self.vocab
        if vocab is None:
            return
        kind = self.filter.currentData()
        try:
            ids = vocab.search(self.search_box.text(), by=self.search_by.currentData(),
                               match_case=self.match_case.isChecked())
            problem = ""
        except TokexplorerError as exc:
            ids, problem = np.zeros(0, dtype=np.int64), str(exc)
        if kind == "in-text":
            ids = ids[self.counts[ids] > 0] if self.counts is not None else ids[:0]
        elif kind != "all":
            ids = np.intersect1d(ids, vocab.ids(kind), assume_unique=True)
        column, order = self.model.sort_request
        key = SORT_KEY.get(column, "id")
        if key == "count" and self.counts is None:
            key = "id"
        ids = vocab.order(ids, key, counts=self.counts, descending=order == Qt.SortOrder.DescendingOrder)
        self.model.show(vocab, ids, self.counts)
        total = len(vocab.ids())
        self.info.setText(problem or f"{len(ids):,} of {total:,} tokens")

    # --- selecting -----------------------------------------------------------------------

    def selected_id(self) -> int:
        index = self.table.currentIndex()
        return self.model.token_id(index.row()) if index.isValid() else -1

    def _on_row(self, current, previous) -> None:
        if current.isValid():
            self.state.choose_token(self.model.token_id(current.row()))
            self.find_next()

    def find_next(self) -> None:
        """Move the editor to the selected token's next occurrence after the caret (wrapping)."""
        token_id, result = self.selected_id(), self.state.result
        if token_id < 0 or result is None or result.tokenizer != self.vocab_name:
            return
        occ = self.occurrences if self._counted is result else None
        index = (occ.next_after(token_id, self.state.caret) if occ is not None  # counted: a search
                 else next_occurrence(result.encoding.id_array, token_id, self.state.caret))
        if index is None:
            self.info.setText(f"token {token_id} does not occur in the text as a token")
            return
        n = 0 if self.counts is None else int(self.counts[token_id])
        self.info.setText(f"token {token_id}: occurrence at token {index:,} ({n:,} in the text)")
        self.state.reveal_token.emit(index)
