"""The chunk view: the regex pre-split of the text. Tiktoken-family tokenizers split the text into
chunks with a regex, then run BPE inside each chunk, so no token crosses a chunk boundary. Linked
to the editor: hover a chunk to see it in the text, click to go there.

The chunks come from the tokenizing server, which splits its copy of the text (`ChunksOf`, for the
result's generation), and only while the view is visible: splitting a 1 MB text takes a fifth of a
second. An answer of None while the tokenizer pre-splits means the server's text has moved on: the
newer result asks again. Tokenizers without a pre-split (SentencePiece) are not asked: the view
says so.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QTableView, QVBoxLayout, QWidget

from tokexplorer.core.analysis.unicode_info import token_label
from tokexplorer.server.protocol import ChunkSpans, ChunksOf
from tokexplorer.gui.state import AppState
from tokexplorer.server.tokenized import Tokenized
from tokexplorer.gui.widgets.table_model import TableModel, fixed_rows


MAX_TEXT = 5_000_000  # characters: longer texts are not split for this view


class ChunkModel(TableModel):
    """The text's chunks, a row each: index, span (code points), the chunk's text."""

    HEADERS = ["#", "span", "chunk"]

    def __init__(self, parent=None):
        super().__init__(parent)
        self.text = ""
        # subtle: arrays, not a list of tuples: dropping a book's 300,000 tuples here, in the UI
        # thread, took 30-60 ms on every refresh.
        self.starts = self.ends = np.zeros(0, dtype=np.int64)

    def set_chunks(self, text: str, chunks: tuple[np.ndarray, np.ndarray] | None) -> None:
        with self.resetting():
            self.text = text
            self.starts, self.ends = chunks if chunks is not None else (np.zeros(0, dtype=np.int64),) * 2

    def span(self, row: int) -> tuple[int, int]:
        return int(self.starts[row]), int(self.ends[row])

    def row_count(self) -> int:
        return len(self.starts)

    def cell(self, row: int, col: int, role: int):
        start, end = self.span(row)
        if col == 2:  # as the token-id view shows a token's text
            return token_label(self.text[start:end].encode("utf-8"))
        return row if col == 0 else f"{start}–{end}"


class ChunkView(QWidget):
    """A list of chunks with a one-line summary above it."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.setObjectName("chunks")
        self.summary = QLabel("No text yet.")
        self.summary.setWordWrap(True)
        self.model = ChunkModel(self)
        # subtle: a QListView asks a Python model for rowCount millions of times while laying out
        # 270,000 rows; a table with fixed row heights asks for what it shows.
        self.list = QTableView()
        self.list.setModel(self.model)
        fixed_rows(self.list, self.fontMetrics().height() + 4)
        self.list.horizontalHeader().setStretchLastSection(True)
        self.list.setColumnWidth(0, 60)
        self.list.setColumnWidth(1, 110)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.summary)
        layout.addWidget(self.list)
        self._result: Tokenized | None = None
        self._shown_generation = -1
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(250)  # chunks are for reading, not for every keystroke
        self._timer.timeout.connect(self._refresh)
        self.list.setMouseTracking(True)
        self.list.entered.connect(self._on_entered)
        self.list.clicked.connect(self._on_clicked)
        self._state = state
        state.tokenized.connect(self._on_tokenized)

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
        self._state.server.ask(ChunksOf(self._state.doc, result.generation),
                               lambda spans: self._on_spans(result, spans),
                               lambda message: self._on_failed(result, message))

    def _on_spans(self, result: Tokenized, spans: ChunkSpans | None) -> None:
        if spans is not None:
            self._show(result, (spans.starts, spans.ends))
        # else the server's text is newer than `result`: that newer result's refresh asks again

    def _on_failed(self, result: Tokenized, message: str) -> None:
        if result is self._result:
            self.summary.setText(f"cannot split: {message}")

    def _show(self, result: Tokenized, chunks: tuple[np.ndarray, np.ndarray] | None) -> None:
        if result is not self._result:
            return  # a newer text arrived meanwhile; its own refresh is on the way
        self._shown_generation = result.generation
        if chunks is None:
            self.model.set_chunks("", None)
            self.summary.setText(f"{result.tokenizer} has no regex pre-split: SentencePiece "
                                 "splits the text on its own (it marks spaces with ▁).")
            return
        self.model.set_chunks(result.encoding.text, chunks)
        self.summary.setText(f"{len(chunks[0]):,} chunks for {len(result):,} tokens "
                             f"({len(result) / max(1, len(chunks[0])):.2f} tokens per chunk)")
