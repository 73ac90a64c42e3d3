"""The glitch-token view: the tokens of the current tokenizer that a model is likely to have learned
badly or never (`core.analysis.glitch`), each with the reasons it is listed.

Find asks the tokenizing server to scan the whole vocabulary (`GlitchTokensOf`: every token's round
trip, then the bundled reference corpus counted; o200k_base takes a few seconds), with a progress
bar fed by the server's `Progress` reports; the answer is dropped if the tokenizer changed while it
was on its way (the generation rule), or the view is gone. The table shows id, text (spaces as ␣) and reasons; a filter
keeps the rows with one kind of reason. Double-click a row, or press Enter on it, and the token is
chosen for explaining (`AppState.choose_token`: the merge tree and the inspector follow it).
It scans nothing itself and never calls another panel.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QProgressBar, QPushButton, QTableView, QVBoxLayout,
                               QWidget)

from tokexplorer.core.analysis.glitch import REASON_KINDS, GlitchReport, GlitchToken, reason_kind
from tokexplorer.gui.services.training import while_alive
from tokexplorer.gui.state import AppState
from tokexplorer.gui.widgets.table_model import ALIGNMENT, DISPLAY, RIGHT, TOOLTIP, TableModel, fixed_rows
from tokexplorer.server.protocol import GlitchTokensOf

ALL = "every reason"


class GlitchModel(TableModel):
    """The rows of a report that pass the filter, in the report's order."""

    HEADERS = ["id", "text", "reasons"]
    HEADER_TIPS = {0: "Token id", 1: "The token's text: spaces as ␣, controls escaped, partial characters as \\xNN",
                   2: "Why it is listed"}
    ROLES = frozenset({DISPLAY, ALIGNMENT, TOOLTIP})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: list[GlitchToken] = []

    def show(self, rows: list[GlitchToken]) -> None:
        with self.resetting():
            self.rows = rows

    def row_count(self) -> int:
        return len(self.rows)

    def cell(self, row: int, col: int, role: int):
        token = self.rows[row]
        if role == ALIGNMENT:
            return RIGHT if col == 0 else None
        if role == TOOLTIP:
            return "\n".join(token.reasons) if col == 2 else token.text.replace(" ", "␣") if col == 1 else None
        return (token.id, token.text.replace(" ", "␣"), "; ".join(token.reasons))[col]


class GlitchTable(QTableView):
    """The table, with Enter on a row as a choice (a double-click is the view's `doubleClicked`)."""

    entered = Signal()

    def keyPressEvent(self, event) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.currentIndex().isValid():
            self.entered.emit()
            return
        super().keyPressEvent(event)


class GlitchView(QWidget):
    """The dock's widget (view name "glitch"). The main window wires it like the other docks:
    `self.glitch = GlitchView(self.state)` and
    `self._dock("Glitch tokens", "glitch_dock", self.glitch, SHORTCUT, view="glitch")`;
    the Learn workspace already lists "glitch"."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.setObjectName("glitch_view")
        self.state = state
        self.report: GlitchReport | None = None
        self._generation = 0  # one per scan asked, and per tokenizer change (which drops a scan)
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.find_button = QPushButton("Find")
        self.find_button.setObjectName("glitch_find")
        self.find_button.setToolTip("Scan the whole vocabulary of the current tokenizer (a few seconds)")
        self.filter = QComboBox()
        self.filter.setObjectName("glitch_filter")
        self.filter.setToolTip("Show only the tokens listed for one kind of reason")
        self.filter.addItem(ALL, "")
        for kind in REASON_KINDS:
            self.filter.addItem(kind, kind)
        self.progress = QProgressBar()
        self.progress.setObjectName("glitch_progress")
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.model = GlitchModel(self)
        self.table = GlitchTable()
        self.table.setObjectName("glitch_table")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setStretchLastSection(True)
        fixed_rows(self.table, self.table.fontMetrics().height() + 6)
        self.table.setColumnWidth(0, self.table.fontMetrics().horizontalAdvance("0") * 9)
        self.table.setColumnWidth(1, self.table.fontMetrics().horizontalAdvance("0") * 26)
        self.table.setToolTip("Double-click a token, or press Enter, to explain it (merge tree, inspector)")
        self.info = QLabel()
        self.info.setObjectName("glitch_info")
        self.info.setWordWrap(True)
        bar = QHBoxLayout()
        bar.addWidget(self.find_button)
        bar.addWidget(QLabel("Show:"))
        bar.addWidget(self.filter, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addLayout(bar)
        layout.addWidget(self.progress)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.info)
        self.find_button.clicked.connect(self.find)
        self.filter.currentIndexChanged.connect(lambda _: self._show_rows())
        self.table.doubleClicked.connect(lambda index: self._choose(index.row()))
        self.table.entered.connect(lambda: self._choose(self.table.currentIndex().row()))
        state.tokenizer_changed.connect(lambda _: self._clear())
        self._clear()

    # --- the scan ------------------------------------------------------------------------

    def find(self) -> None:
        """Ask the server for the current tokenizer's glitch tokens."""
        self._generation += 1
        gen, name = self._generation, self.state.tokenizer
        self.find_button.setEnabled(False)
        self.progress.setRange(0, 0)
        self.progress.show()
        self.info.setText(f"scanning {name}'s vocabulary…")

        def current(fn):  # the answers of this scan, while it is the latest and the view lives
            return while_alive(self, lambda *args: gen == self._generation and fn(*args))

        self.state.server.ask(GlitchTokensOf(name), current(self._found),
                              current(lambda message: self._failed(name, message)),
                              on_progress=current(self._progress))

    def _progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(done)

    def _found(self, report: GlitchReport) -> None:
        self.report = report
        self._idle()
        self._show_rows()
        self.info.setText(f"{len(report.tokens):,} tokens listed. Reference corpus: {report.corpus}.")

    def _failed(self, name: str, message: str) -> None:
        self._idle()
        self.info.setText(f"cannot scan {name}: {message}")

    def _idle(self) -> None:
        self.progress.hide()
        self.find_button.setEnabled(True)

    def _clear(self) -> None:
        """A new tokenizer: the old list no longer names its tokens, and a scan on its way is dropped."""
        self._generation += 1
        self.report = None
        self._idle()
        self.model.show([])
        self.title.setText(f"Tokens of {self.state.tokenizer} that a model may have learned badly or never: "
                           "unreachable from text, parts of a character, never produced on a reference "
                           "corpus, special, or reported under-trained in the literature.")
        self.info.setText("Press Find to scan the vocabulary.")

    # --- the rows ------------------------------------------------------------------------

    def _show_rows(self) -> None:
        kind = self.filter.currentData()
        rows = [] if self.report is None else [
            t for t in self.report.tokens if not kind or any(reason_kind(r) == kind for r in t.reasons)]
        self.model.show(rows)

    def shown_ids(self) -> list[int]:
        """The ids of the rows shown, in order."""
        return [t.id for t in self.model.rows]

    def _choose(self, row: int) -> None:
        if 0 <= row < len(self.model.rows):
            self.state.choose_token(self.model.rows[row].id)
