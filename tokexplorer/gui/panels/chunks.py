"""The chunk view: the regex pre-split of the text. Tiktoken-family tokenizers split the text into
chunks with a regex, then run BPE inside each chunk, so no token crosses a chunk boundary. Linked
to the editor: hover a chunk to see it in the text, click to go there.

The regex explained: the "matched by" column names the alternative of the split pattern that
made each chunk (contraction, letters, numbers, punctuation, whitespace, ...; "alternative n" for
a pattern the app does not know), in a colour per alternative, with the alternative's own regex in
its tooltip; the summary counts the chunks per alternative. "Compare with" splits the same text
with another pattern (the original GPT-2 pattern of OpenAI's encoder.py, tiktoken's r50k, cl100k,
o200k) and highlights the chunks it does not make, or says that it splits the text the same.

The chunks come from the tokenizing server, which splits its copy of the text (`ChunksOf`, for the
result's generation, with the comparison's name) and explains them (`core.pattern_parts`), only
while the view is visible: splitting a 1 MB text takes a fifth of a second. An answer of None
while the tokenizer pre-splits means the server's text has moved on: the newer result asks again.
Tokenizers without a pre-split (SentencePiece) are not asked: the view says so.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from tokexplorer.core.analysis.pattern_parts import COMPARABLE, top_alternatives
from tokexplorer.core.analysis.unicode_info import token_label
from tokexplorer.server.protocol import ChunkSpans, ChunksOf
from tokexplorer.gui.state import AppState
from tokexplorer.server.tokenized import Tokenized
from tokexplorer.gui.widgets.table_model import BACKGROUND, DISPLAY, TOOLTIP, TableModel, fixed_rows


MAX_TEXT = 5_000_000  # characters: longer texts are not split for this view
SHOWN_KINDS = 6  # alternatives counted in the summary
# A colour per alternative (light and dark theme), in the pattern's order, and the differing rows'.
KEY = ["#c8e6c9", "#bbdefb", "#ffe0b2", "#e1bee7", "#b2ebf2", "#f8bbd0", "#dcedc8", "#d7ccc8"]
KEY_DARK = ["#2e5230", "#1f3f5f", "#5c4420", "#4a2c55", "#1f4f55", "#5a2a3a", "#3c4a26", "#4a3f3a"]
DIFFERS, DIFFERS_DARK = "#ffcc80", "#8a5a00"
NO_COMPARISON = "(no comparison)"


class ChunkModel(TableModel):
    """The text's chunks, a row each: index, span (code points), the chunk's text, and the
    alternative of the pattern that matched it (coloured; a chunk another pattern does not make
    highlighted)."""

    HEADERS = ["#", "span", "chunk", "matched by"]
    HEADER_TIPS = {3: "The alternative of the split pattern that matched this chunk (its regex in the tooltip)"}
    ROLES = frozenset({DISPLAY, TOOLTIP, BACKGROUND})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.text = ""
        # subtle: arrays, not a list of tuples: dropping a book's 300,000 tuples here, in the UI
        # thread, took 30-60 ms on every refresh.
        self.starts = self.ends = self.alternatives = np.zeros(0, dtype=np.int64)
        self.names: tuple[str, ...] = ()
        self.sources: list[str] = []  # each alternative's regex
        self.differs: np.ndarray | None = None
        self.dark = False

    def set_chunks(self, text: str, chunks: ChunkSpans | None) -> None:
        with self.resetting():
            self.text = text
            empty = np.zeros(0, dtype=np.int64)
            if chunks is None:
                self.starts = self.ends = self.alternatives = empty
                self.names, self.sources, self.differs = (), [], None
            else:
                self.starts, self.ends, self.alternatives = chunks.starts, chunks.ends, chunks.alternatives
                self.names, self.differs = chunks.names, chunks.differs
                self.sources = top_alternatives(chunks.pattern) if chunks.pattern else []

    def matched_by(self, row: int) -> str:
        """The name of the alternative that made chunk `row` ("" for none: a special token)."""
        k = int(self.alternatives[row])
        return self.names[k] if 0 <= k < len(self.names) else ""

    def span(self, row: int) -> tuple[int, int]:
        return int(self.starts[row]), int(self.ends[row])

    def row_count(self) -> int:
        return len(self.starts)

    def cell(self, row: int, col: int, role: int):
        k = int(self.alternatives[row])
        if role == BACKGROUND:
            if self.differs is not None and self.differs[row] and col in (0, 1, 2):
                return QColor(DIFFERS_DARK if self.dark else DIFFERS)
            if col == 3 and 0 <= k < len(self.names):
                key = KEY_DARK if self.dark else KEY
                return QColor(key[k % len(key)])
            return None
        if role == TOOLTIP:
            if col == 3 and 0 <= k < len(self.sources):  # the name whole, where the column elides it
                return f"{self.names[k]}: alternative {k + 1} of the pattern: {self.sources[k]}"
            if self.differs is not None and self.differs[row]:
                return "the compared pattern does not make this chunk"
            if col == 2:  # the chunk whole, where the column elides it
                start, end = self.span(row)
                return token_label(self.text[start:end].encode("utf-8"))
            return None
        start, end = self.span(row)
        if col == 2:  # as the token-id view shows a token's text
            return token_label(self.text[start:end].encode("utf-8"))
        if col == 3:
            return self.matched_by(row)
        return row if col == 0 else f"{start}–{end}"


class ChunkView(QWidget):
    """A list of chunks with a one-line summary above it."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.setObjectName("chunks")
        self.summary = QLabel("No text yet.")
        self.summary.setObjectName("chunks_summary")
        self.summary.setWordWrap(True)
        self.compare_box = QComboBox()
        self.compare_box.setObjectName("chunks_compare")
        self.compare_box.addItem(NO_COMPARISON, None)
        for name, (pattern, what) in COMPARABLE.items():
            self.compare_box.addItem(f"{name}: {what}", name)
            self.compare_box.setItemData(self.compare_box.count() - 1, pattern, TOOLTIP)
        # it may be narrower than its longest item (elided; the list shows each whole)
        self.compare_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.compare_box.setMinimumContentsLength(15)
        self.compare_box.setToolTip("Split the same text with another pattern and highlight the chunks it does "
                                    "not make")
        self.compare_box.currentIndexChanged.connect(self._on_compare)
        self.model = ChunkModel(self)
        # subtle: a QListView asks a Python model for rowCount millions of times while laying out
        # 270,000 rows; a table with fixed row heights asks for what it shows.
        self.list = QTableView()
        self.list.setModel(self.model)
        fixed_rows(self.list, self.fontMetrics().height() + 4)
        # The numbers at their width (in the view's font), the rest a third to the chunk (most are
        # short) and two to its alternative's name: in a narrow dock a name is elided (its tooltip
        # says it whole), and the list never scrolls sideways.
        header = self.list.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header.setTextElideMode(Qt.TextElideMode.ElideRight)  # a narrow section's title too
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.list.viewport().installEventFilter(self)
        self._fit_numbers(0, 0)
        compare = QHBoxLayout()
        compare.addWidget(QLabel("Compare with:"))
        compare.addWidget(self.compare_box, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(compare)
        layout.addWidget(self.summary)
        layout.addWidget(self.list)
        self._result: Tokenized | None = None
        self._shown_generation = -1
        self._asked: tuple = ()  # (generation, comparison) of the last ChunksOf
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(250)  # chunks are for reading, not for every keystroke
        self._timer.timeout.connect(self._refresh)
        self.list.setMouseTracking(True)
        self.list.entered.connect(self._on_entered)
        self.list.clicked.connect(self._on_clicked)
        self._state = state
        self.model.dark = state.dark
        state.tokenized.connect(self._on_tokenized)
        state.dark_changed.connect(self._on_dark)

    @property
    def compare(self) -> str | None:
        """The name of the pattern compared with (core.pattern_parts.COMPARABLE), or None."""
        return self.compare_box.currentData()

    def set_compare(self, name: str | None) -> None:
        """Compare the chunks with pattern `name` of COMPARABLE (None: no comparison)."""
        self.compare_box.setCurrentIndex(max(0, self.compare_box.findData(name)))

    def _on_compare(self, _index: int) -> None:
        self._shown_generation = -1  # the same text, asked again with the comparison
        if self._result is not None and self.isVisible():
            QTimer.singleShot(0, self._refresh)

    def _on_dark(self, dark: bool) -> None:
        self.model.dark = dark
        self.list.viewport().update()

    @property
    def up_to_date(self) -> bool:
        return self._result is None or self._shown_generation == self._result.generation

    def _span(self, row: int) -> tuple[int, int] | None:
        """The chunk's code-point span, if the list shows the current text."""
        if not self.up_to_date or self._result is None or not 0 <= row < self.model.rowCount():
            return None
        return self.model.span(row)

    def _on_entered(self, index) -> None:
        span = self._span(index.row())
        if span is not None:
            self._state.set_hovered_span(*span)

    def _on_clicked(self, index) -> None:
        span = self._span(index.row())
        if span is not None:
            tokens = self._result.encoding.token_range(*span)
            if len(tokens):
                self._state.reveal_token.emit(tokens[0])

    def leaveEvent(self, event) -> None:
        super().leaveEvent(event)
        self._state.set_hovered_span(-1, -1)

    def _on_tokenized(self, result: Tokenized | None) -> None:
        self._result = result
        if result is None:
            self.model.set_chunks("", None)
            self.summary.setText("No tokenization.")
            self._shown_generation = -1
        elif self.isVisible():
            self._timer.start()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self.up_to_date:
            self._timer.start()

    def _refresh(self) -> None:
        result = self._result
        if result is None or not self.isVisible():
            return
        encoding = result.encoding
        if len(encoding.text) > MAX_TEXT:
            # (13 million chunks would be hundreds of MB sent over and held, for a list no one scrolls)
            self.model.set_chunks("", None)
            self.summary.setText(f"The chunk view lists the chunks of texts up to {MAX_TEXT:,} "
                                 f"characters; this one has {len(encoding.text):,}.")
            self._shown_generation = result.generation
            return
        if not result.has_chunks:
            self._show(result, None)
            return
        self.summary.setText("splitting…")
        self._asked = asked = (result.generation, self.compare)
        self._state.server.ask(ChunksOf(self._state.doc, result.generation, self.compare),
                               lambda spans: self._on_spans(result, spans, asked),
                               lambda message: self._on_failed(result, message))

    def _on_spans(self, result: Tokenized, spans: ChunkSpans | None, asked: tuple) -> None:
        if spans is not None and asked == self._asked:
            self._show(result, spans)
        # else the server's text is newer than `result` (that newer result's refresh asks again),
        # or the comparison changed meanwhile (its own answer follows)

    def _on_failed(self, result: Tokenized, message: str) -> None:
        if result is self._result:
            self.summary.setText(f"cannot split: {message}")

    def _fit_numbers(self, chunks: int, chars: int) -> None:
        """The # and span columns as wide as their largest numbers (and their headers), measured
        from the counts: no row is read."""
        metrics = self.list.fontMetrics()
        index, offset = "0" * len(str(max(chunks - 1, 0))), "0" * len(str(chars))  # digits as wide as 0
        for col, widest in ((0, index), (1, f"{offset}–{offset}")):
            self.list.setColumnWidth(col, max(metrics.horizontalAdvance(widest),
                                              metrics.horizontalAdvance(self.model.HEADERS[col])) + 16)
        self._share_rest()

    def _share_rest(self) -> None:
        """A third of the width the numbers leave to the chunk; the name (the last column) stretches."""
        rest = self.list.viewport().width() - self.list.columnWidth(0) - self.list.columnWidth(1)
        self.list.setColumnWidth(2, max(rest // 3, self.list.horizontalHeader().minimumSectionSize()))

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Resize:  # the list's viewport: the dock, or its scroll bar
            self._share_rest()
        return False

    def _show(self, result: Tokenized, chunks: ChunkSpans | None) -> None:
        if result is not self._result:
            return  # a newer text arrived meanwhile; its own refresh is on the way
        self._shown_generation = result.generation
        if chunks is None:
            self.model.set_chunks("", None)
            self.summary.setText(f"{result.tokenizer} has no regex pre-split: SentencePiece "
                                 "splits the text on its own (it marks spaces with ▁).")
            return
        self.model.set_chunks(result.encoding.text, chunks)
        n = len(chunks.starts)
        self._fit_numbers(n, len(result.encoding.text))
        lines = [f"{n:,} chunks for {len(result):,} tokens ({len(result) / max(1, n):.2f} tokens per chunk)"]
        found = np.bincount(chunks.alternatives[chunks.alternatives >= 0], minlength=len(chunks.names))
        counted: dict[str, int] = {}
        for name, count in zip(chunks.names, found.tolist()):
            if count:
                counted[name] = counted.get(name, 0) + count
        if counted:
            kinds = sorted(counted.items(), key=lambda kv: -kv[1])
            lines.append("matched by: " + " · ".join(f"{name} {count:,}" for name, count in kinds[:SHOWN_KINDS])
                         + (" · …" if len(kinds) > SHOWN_KINDS else ""))
        if chunks.differs is not None:
            other = COMPARABLE[chunks.compare][1]
            differ = int(chunks.differs.sum())
            lines.append(f"{differ:,} of these chunks are not chunks of {other} (highlighted)" if differ else
                         f"{other} splits this text into the same chunks")
        self.summary.setText("\n".join(lines))
