"""The Plots panel: sequence length vs vocab size, compression over merges, token lengths of the
current text, and tokens per language, one tab each.

Every number comes from the core (core/sweep.py, token_lengths.py, languages.py). What needs a
tokenizer is asked of the tokenizing server (`LengthHistograms` of the other tokenizers,
`LanguageReportOf` with its progress, and the sweep's `ReferencePoints`); the current text's own
token lengths are counted from its result in a worker (`run_job`); the sweep trains in a child
process (`SweepService`). Each tab's requests carry a generation number so a stale answer is
dropped, and the window stays responsive; the figures (gui/plots.py) only draw. Each tab exports
its figure as PNG and its numbers (the core's table) as CSV, asking for the path through the
window's `Dialogs` and writing atomically.

Compression over merges shows the training run of the last sweep here, or a training run that
another view announces on `AppState.training_curve` (a CompressionCurve snapshot, growing while it
trains). Closing the window while a sweep runs asks first (`may_close`, the window's closeEvent
calls it). The panel never imports another panel.

It runs past 400 lines: the controls of three kinds of plot and the sweep the panel runs; the
figures themselves are in `widgets.figures`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QGridLayout, QHBoxLayout, QHeaderView, QLabel,
                               QLineEdit, QListView, QListWidget, QListWidgetItem, QProgressBar, QPushButton, QSplitter,
                               QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from tokexplorer.core.analysis.languages import LanguageReport
from tokexplorer.core.analysis.sweep import CompressionCurve, parse_vocab_sizes
from tokexplorer.core.tables import csv_text
from tokexplorer.core.files.textfile import write_atomic
from tokexplorer.core.analysis.token_lengths import LengthHistogram, length_histogram
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.server.protocol import LanguageReportOf, LengthHistograms, ReferencePoints
from tokexplorer.gui.widgets.figures import CompressionFigure, Figure, LanguageFigure, LengthFigure, SweepFigure, figure_size
from tokexplorer.gui.state import AppState
from tokexplorer.core.training.runner import SweepRequest
from tokexplorer.gui.services.training import SweepService
from tokexplorer.gui.services.worker import run_job
from tokexplorer.gui import settings as keys
from tokexplorer.gui.widgets.dialogs import remember_folder, start_folder
from tokexplorer.gui.widgets.wheel_guard import guard_wheel

PNG_FILTER = "PNG image (*.png)"
CSV_FILTER = "CSV table (*.csv)"
HELD_OUT = 0.1  # the part of the corpus the sweep keeps for evaluation
HISTOGRAM_DEBOUNCE_MS = 400  # after an edit, before the histograms are recomputed


class TokenizerChecklist(QListWidget):
    """The catalog's tokenizers with check boxes; follows the catalog as files are opened."""

    def __init__(self, state: AppState, checked: list[str], parent=None):
        super().__init__(parent)
        self.state = state
        self._initial = set(checked)
        # One row of check boxes, wrapping when there are many tokenizers.
        self.setFlow(QListView.Flow.LeftToRight)
        self.setWrapping(True)
        self.setSpacing(2)
        self.setFixedHeight(self.fontMetrics().height() * 2 + 12)
        self.refill()
        state.tokenizers_changed.connect(self.refill)

    def refill(self) -> None:
        keep = set(self.checked()) if self.count() else self._initial
        self.blockSignals(True)
        self.clear()
        for name in self.state.catalog.names():
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if name in keep else Qt.CheckState.Unchecked)
            self.addItem(item)
        self.blockSignals(False)

    def checked(self) -> list[str]:
        return [self.item(i).text() for i in range(self.count())
                if self.item(i).checkState() == Qt.CheckState.Checked]

    def set_checked(self, names: list[str]) -> None:
        for i in range(self.count()):
            item = self.item(i)
            item.setCheckState(Qt.CheckState.Checked if item.text() in names else Qt.CheckState.Unchecked)


class Cell(QTableWidgetItem):
    """A table cell that shows `text` and sorts by `key` (numbers by value, not as rounded)."""

    def __init__(self, text: str, key):
        super().__init__(text)
        self.key = key

    def __lt__(self, other: QTableWidgetItem) -> bool:
        if isinstance(other, Cell) and type(self.key) is type(other.key):
            return self.key < other.key
        return super().__lt__(other)


class PlotTab(QWidget):
    """A figure with Export PNG / Export CSV buttons and a status line; subclasses add controls."""

    def __init__(self, panel: "PlotsPanel", figure: Figure, name: str):
        super().__init__()
        self.panel = panel
        self.figure = figure
        self.name = name  # file names suggested on export
        self.generation = 0  # of the latest job; older answers are dropped
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.png_button = QPushButton("Export PNG…")
        self.png_button.setToolTip('Save this figure as a PNG image')
        self.csv_button = QPushButton("Export CSV…")
        self.csv_button.setToolTip('Save the numbers behind this figure as a CSV table')
        self.png_button.clicked.connect(self.export_png)
        self.csv_button.clicked.connect(self.export_csv)
        self.controls = QVBoxLayout()
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.png_button)
        buttons.addWidget(self.csv_button)
        layout = QVBoxLayout(self)
        layout.addLayout(self.controls)
        layout.addWidget(figure, 1)
        layout.addLayout(buttons)

    def export_png(self) -> Path | None:
        path = self.panel.dialogs.export_path(self._suggested(".png"), PNG_FILTER)
        if not path:
            return None
        return self._write(Path(path), self.png)

    def png(self) -> bytes:
        """The figure as shown, at the PNG size of the command line's (`figures.PNG_SIZE`)."""
        return self.figure.png()

    def export_csv(self) -> Path | None:
        table = self.figure.table()
        if not table:
            self.status.setText("Nothing to export yet.")
            return None
        path = self.panel.dialogs.export_path(self._suggested(".csv"), CSV_FILTER)
        if not path:
            return None
        return self._write(Path(path), lambda: csv_text(table).encode("utf-8"))

    def _suggested(self, suffix: str) -> str:
        """The figure's file name, in the folder exported to last (else Documents)."""
        return str(start_folder(keys.EXPORT_FOLDER) / f"{self.name}{suffix}")

    def _write(self, path: Path, data: Callable[[], bytes]) -> Path | None:
        try:
            write_atomic(path, data())
        except TokexplorerError as exc:  # write_atomic says which file and why
            message = str(exc)
            self.status.setText(message[:1].upper() + message[1:])
            return None
        remember_folder(keys.EXPORT_FOLDER, path)
        self.status.setText(f"Wrote {path}")
        return path

    def start(self, fn, on_result, *, busy: str = "") -> int:
        """Run fn(progress) in a worker; on_result gets its value unless a newer job started."""
        gen = self._next(busy)
        run_job(fn, on_result=lambda value: gen == self.generation and on_result(value),
                on_error=lambda exc: gen == self.generation and self.failed(
                    str(exc) if isinstance(exc, TokexplorerError) else f"Internal error: {exc!r}"))
        return gen

    def ask(self, request, on_result, *, on_progress=None, busy: str = "") -> int:
        """Ask the tokenizing server; on_result gets its answer unless a newer job started."""
        gen = self._next(busy)
        self.panel.state.server.ask(
            request, lambda value: gen == self.generation and on_result(value),
            lambda message: gen == self.generation and self.failed(message),
            on_progress=(lambda done, total: gen == self.generation and on_progress(done, total))
            if on_progress else None)
        return gen

    def _next(self, busy: str) -> int:
        self.generation += 1
        if busy:
            self.status.setText(busy)
        return self.generation

    def failed(self, message: str) -> None:
        self.status.setText(message)


class SweepTab(PlotTab):
    """Train BPE once on a corpus and plot the held-out text's length at several vocab sizes."""

    def __init__(self, panel: "PlotsPanel", service: SweepService):
        super().__init__(panel, SweepFigure(), "sweep")
        self.service = service
        service.phase.connect(self._on_phase)
        service.progress.connect(self._on_progress)
        service.finished.connect(self.show_result)
        service.failed.connect(self._on_failed)
        self.corpus_box = QComboBox()
        self.corpus_box.setToolTip("What to train on: the editor's text or a file")
        self.corpus_box.addItem("the current text", None)
        self.corpus_box.addItem("a file…", "file")
        self.corpus_box.activated.connect(self._on_corpus_chosen)
        self.corpus_path: Path | None = None
        self.sizes_edit = QLineEdit("256,512,1024,2048,4096")
        self.sizes_edit.setToolTip("Vocab sizes, comma-separated; one training run up to the largest")
        self.pattern_box = QComboBox()
        self.pattern_box.setToolTip('The split pattern of the BPE that is trained')
        for label, value in [("GPT-4 regex", "gpt4"), ("GPT-2 regex", "gpt2"), ("GPT-4o regex", "o200k"),
                             ("bytes only (Basic)", None)]:
            self.pattern_box.addItem(label, value)
        self.eval_box = QComboBox()
        self.eval_box.setToolTip('Count on held-out text (the end of the corpus) or on the whole corpus')
        self.eval_box.addItem(f"held-out last {HELD_OUT:.0%}", HELD_OUT)
        self.eval_box.setItemData(0, f"The last {HELD_OUT:.0%} of the corpus, not trained on",
                                  Qt.ItemDataRole.ToolTipRole)
        self.eval_box.addItem("the whole corpus", None)
        self.eval_box.setItemData(1, "The whole corpus, trained on too", Qt.ItemDataRole.ToolTipRole)
        self.run_button = QPushButton("Run sweep")
        self.run_button.setToolTip('Train once up to the largest vocab size and count the text at each size')
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip('Stop the sweep')
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.hide()
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)
        # Two rows of two fields: in one row a small screen at 200 % cut the combo boxes' items,
        # and the vocab sizes field, never narrower than its default text, scrolled its start away.
        self.sizes_edit.setMinimumWidth(self.sizes_edit.fontMetrics().horizontalAdvance(self.sizes_edit.text()) + 16)
        fields = QGridLayout()
        for i, (label, widget) in enumerate([("Corpus:", self.corpus_box), ("Split:", self.pattern_box),
                                             ("Vocab sizes:", self.sizes_edit), ("Evaluate on:", self.eval_box)]):
            fields.addWidget(QLabel(label), i // 2, 2 * (i % 2))
            fields.addWidget(widget, i // 2, 2 * (i % 2) + 1)
        fields.setColumnStretch(1, 1)
        fields.setColumnStretch(3, 1)
        row = QHBoxLayout()
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        row.addWidget(self.progress, 1)
        row.addStretch(0)
        self.controls.addLayout(fields)
        self.controls.addLayout(row)
        self.status.setText("Reference points: every tokenizer in the picker, on the same text.")

    def _on_corpus_chosen(self, index: int) -> None:
        if self.corpus_box.itemData(index) != "file":
            return
        path = self.panel.dialogs.open_text_path(str(self.corpus_path.parent if self.corpus_path else Path.cwd()))
        if not path:
            self.corpus_box.setCurrentIndex(0)
            return
        self.corpus_path = Path(path)
        self.corpus_box.setItemText(1, f"file: {self.corpus_path.name}")

    def run(self) -> int:
        try:
            sizes = parse_vocab_sizes(self.sizes_edit.text())
        except TokexplorerError as exc:
            self.status.setText(str(exc))
            return 0
        path = self.corpus_path if self.corpus_box.currentData() == "file" else None
        current = self.panel.current_text()
        if path is None and not current:
            self.status.setText("No text to train on: type or open a text (one the tokenizer accepts), "
                                "or choose a corpus file.")
            return 0
        pattern, held_out = self.pattern_box.currentData(), self.eval_box.currentData()
        # Every tokenizer in the picker: the built-ins, and those the user opened or trained.
        names = self.panel.state.catalog.names()
        text = current if path is None else None
        path = None if path is None else str(path)
        request = SweepRequest(tuple(sizes), pattern, held_out, path=path, text=text)
        # The same evaluation text, counted by the server's tokenizers once the child is done.
        references = ReferencePoints(tuple(names), text=text, path=path, held_out=held_out or 0.0)
        try:
            self.service.start(request, references, self.panel.state.server)
        except TokexplorerError as exc:
            self.status.setText(str(exc))
            return 0
        self.panel.compression_tab.figure.reset()
        self.panel.compression_tab.figure.set_title("Compression over merges (the sweep, training…)")
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.progress.setRange(0, 0)
        self.progress.show()
        self.status.setText(f"Training BPE up to {sizes[-1]:,} tokens…")
        return 1

    def _on_phase(self, what: str, done: int, total: int) -> None:
        self.status.setText(what[:1].upper() + what[1:] + "…")
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(done)
        else:
            self.progress.setRange(0, 0)

    def _on_progress(self, done: int, total: int, live: CompressionCurve | None) -> None:
        self.progress.setUpdatesEnabled(False)  # setValue would paint at once: see set_progress
        self.progress.setRange(0, total)
        self.progress.setValue(done)
        self.progress.setUpdatesEnabled(True)
        self.status.setText(f"Training BPE once, then counting the text at each size: step {done:,} of {total:,}…")
        if live is not None:  # compression over merges grows while the sweep trains
            tab = self.panel.compression_tab
            tab.figure.set_data(live.merges, live.bytes_per_token)
            if len(live.tokens) > 1:
                tab.status.setText(f"Training: {len(live.tokens) - 1:,} merges so far, "
                                   f"{live.n_bytes / live.tokens[-1]:.2f} bytes/token")

    def cancel(self) -> None:
        self.service.cancel()

    def _idle(self) -> None:
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.progress.hide()

    def show_result(self, result) -> None:
        self._idle()
        self.figure.show_sweep(result)
        short = [p.vocab_size for p in result.points if not p.reached]
        self.status.setText(f"Trained {result.merges_learned:,} merges on {result.train_bytes:,} bytes; "
                            f"counted {result.eval_source} ({result.eval_bytes:,} bytes)."
                            + (f" No pair was left to merge at vocab size {256 + result.merges_learned:,}: "
                               f"{', '.join(map(str, short))} show that size (give a longer corpus)."
                               if short else ""))
        self.panel.compression_tab.show_curve(result.curve, f"Compression over merges (the sweep's training run, "
                                                  f"{result.train_bytes:,} bytes)")

    def _on_failed(self, message: str) -> None:
        self._idle()
        self.status.setText(message)


class CompressionTab(PlotTab):
    """Bytes per token of a training corpus after each merge."""

    def __init__(self, panel: "PlotsPanel"):
        super().__init__(panel, CompressionFigure(), "compression")
        self.status.setText("Run a sweep, or train in the training workbench, to see compression grow "
                            "merge by merge.")

    def show_curve(self, curve: CompressionCurve, title: str = "") -> None:
        self.figure.show_curve(curve, title)
        if len(curve.tokens) > 1:
            self.status.setText(f"{len(curve.tokens) - 1:,} merges: {curve.n_bytes:,} bytes → "
                                f"{curve.tokens[-1]:,} tokens ({curve.n_bytes / curve.tokens[-1]:.2f} bytes/token)")


class LengthTab(PlotTab):
    """Token lengths of the current text: the current tokenizer and the checked others."""

    def __init__(self, panel: "PlotsPanel"):
        super().__init__(panel, LengthFigure(), "token-lengths")
        self.others = TokenizerChecklist(panel.state, [])
        self.others.itemChanged.connect(lambda item: self.schedule())
        self.controls.addWidget(QLabel("Compare with (the current tokenizer is always shown):"))
        self.controls.addWidget(self.others)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(HISTOGRAM_DEBOUNCE_MS)
        self._timer.timeout.connect(self.compute)
        self.stale = True

    def schedule(self) -> None:
        """The text or the choice changed: recompute soon if shown, else when next shown."""
        self.stale = True
        if self.isVisible():
            self._timer.start()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.stale:
            self._timer.start(0)

    def compute(self) -> int:
        result = self.panel.state.result
        if result is None:
            self.status.setText("No tokenized text yet.")
            return 0
        self.stale = False
        current, encoding = result.tokenizer, result.encoding
        names = tuple(n for n in self.others.checked() if n != current)

        def others(first: LengthHistogram) -> None:
            """The current text's own histogram is in; the server counts the others' (each
            named as in the picker, not as the tokenizer names itself)."""
            if not names:
                self.show_histograms([first])
                return
            self.ask(LengthHistograms(encoding.text, names),
                     lambda hists: self.show_histograms(
                         [first] + [dataclasses.replace(h, tokenizer=n) for h, n in zip(hists, names)]))

        # The current tokenizer's tokens are the result's: counted here, from their byte spans.
        return self.start(lambda progress: length_histogram(encoding, current), others,
                          busy="Counting token lengths…")

    def show_histograms(self, hists) -> None:
        self.figure.show_histograms(hists, f"Token lengths of the current text ({hists[0].bytes:,} bytes)")
        self.status.setText("; ".join(f"{h.tokenizer}: {h.tokens:,} token{'s' * (h.tokens != 1)}, {h.mean:.2f} bytes/token"
                                      for h in hists))


class LanguageTab(PlotTab):
    """Tokens per language on the parallel UDHR texts, relative to English: table and bars."""

    def __init__(self, panel: "PlotsPanel"):
        super().__init__(panel, LanguageFigure(), "tokens-per-language")
        self.report: LanguageReport | None = None
        self.tokenizers = TokenizerChecklist(panel.state, ["gpt2", "cl100k_base", "o200k_base", "llama-sp"])
        self.compute_button = QPushButton("Count")
        self.compute_button.setToolTip('Count the Universal Declaration of Human Rights in each checked tokenizer')
        self.compute_button.clicked.connect(self.compute)
        row = QHBoxLayout()
        row.addWidget(QLabel("Tokenizers:"))
        row.addWidget(self.tokenizers, 1)
        row.addWidget(self.compute_button, 0, Qt.AlignmentFlag.AlignBottom)
        self.controls.addLayout(row)
        self.table = QTableWidget()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().sortIndicatorChanged.connect(lambda *_: QTimer.singleShot(0, self._reorder))
        # The figure goes beside the table: take it out of the tab's layout and into a splitter.
        layout = self.layout()
        layout.removeWidget(self.figure)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.table)
        splitter.addWidget(self.figure)
        splitter.setSizes([420, 420])
        layout.insertWidget(1, splitter, 1)
        self.counted = False

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self.counted:
            self.compute()

    def compute(self) -> int:
        names = self.tokenizers.checked()
        if not names:
            self.status.setText("Check at least one tokenizer.")
            return 0
        self.counted = True
        self.compute_button.setEnabled(False)
        busy = "Counting the UDHR in 56 languages…"
        return self.ask(LanguageReportOf(tuple(names)), self.show_report, busy=busy,
                        on_progress=lambda done, total: self.status.setText(f"{busy} ({done:,} of {total:,})"))

    def failed(self, message: str) -> None:
        self.compute_button.setEnabled(True)
        super().failed(message)

    def show_report(self, report: LanguageReport) -> None:
        self.compute_button.setEnabled(True)
        self.report = report
        # The ratios first: they are the point; then the counts they come from.
        headers = (["language", "script"] + [f"{t} ×{report.reference}" for t in report.tokenizers]
                   + [f"{t} tokens" for t in report.tokenizers] + ["characters", "bytes", "title"])
        self.table.setSortingEnabled(False)
        self.table.clear()
        self.table.setColumnCount(len(headers))
        self.table.setHorizontalHeaderLabels(headers)
        self.table.setRowCount(len(report.rows))
        for i, r in enumerate(report.rows):
            cells = [r.language, r.script, *r.ratios, *r.tokens, r.chars, r.bytes, r.title]
            for j, value in enumerate(cells):
                text = f"{value:.2f}" if isinstance(value, float) else f"{value:,}" if isinstance(value, int) else value
                item = Cell(text, value.casefold() if isinstance(value, str) else value)
                if j == 0:
                    item.setData(Qt.ItemDataRole.UserRole, r.key)
                if not isinstance(value, str):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)
        self.table.setSortingEnabled(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(headers) - 1, QHeaderView.ResizeMode.Interactive)  # titles are long
        header.resizeSection(len(headers) - 1, 260)
        self.table.sortItems(2, Qt.SortOrder.DescendingOrder)  # the first tokenizer's ratio
        self._reorder()
        hin = next((r for r in report.rows if r.key == "hin"), None)
        self.status.setText(f"{len(report.rows)} languages, ratios to {report.reference}. "
                            + (f"Hindi costs {report.tokenizers[0]} {hin.ratios[0]:.1f}× the tokens of English."
                               if hin else ""))

    def png(self) -> bytes:
        """Every language, in the table's order (the dock shows only those that fit)."""
        if self.report is None:
            return super().png()
        figure = LanguageFigure()
        figure.show_report(self.report, self.row_keys())
        figure.set_dark(self.figure.dark)
        try:
            return figure.png(*figure_size(self.report))
        finally:
            figure.deleteLater()

    def row_keys(self) -> list[str]:
        """Language keys in the table's current order (top first)."""
        return [self.table.item(i, 0).data(Qt.ItemDataRole.UserRole) for i in range(self.table.rowCount())]

    def _reorder(self) -> None:
        """The bars follow the table's sort order."""
        if self.report is not None:
            self.figure.show_report(self.report, self.row_keys())


class PlotsPanel(QTabWidget):
    """The plots, one tab each; observes the state (text, tokenizers, theme, training runs)."""

    def __init__(self, state: AppState, dialogs, sweeps: SweepService, parent=None):
        super().__init__(parent)
        self.setObjectName("plots_panel")
        self.state = state
        self.dialogs = dialogs
        self.sweep_tab = SweepTab(self, sweeps)
        self.compression_tab = CompressionTab(self)
        self.length_tab = LengthTab(self)
        self.language_tab = LanguageTab(self)
        # Short titles, so the four tabs fit a small screen at 200 % without scroll arrows; each
        # tab's tooltip is its whole title.
        for tab, title, whole in [(self.sweep_tab, "Vocab sweep", "Sequence length vs vocab size"),
                                  (self.compression_tab, "Compression", "Compression over merges"),
                                  (self.length_tab, "Token lengths", "Token lengths of the current text"),
                                  (self.language_tab, "Languages", "Tokens per language")]:
            self.setTabToolTip(self.addTab(tab, title), whole)
        self.tabs = [self.sweep_tab, self.compression_tab, self.length_tab, self.language_tab]
        state.tokenized.connect(lambda result: self.length_tab.schedule())
        state.dark_changed.connect(self._on_dark)
        state.training_curve.connect(self._on_training_curve)
        if state.last_training_curve is not None:  # a run before this view was first shown
            self._on_training_curve(state.last_training_curve)
        self._on_dark(state.dark)
        guard_wheel(self)  # a combo box's value changes under the wheel only once clicked

    def may_close(self) -> bool:
        """Whether the window may close: yes when no sweep runs, else the user's answer (a sweep
        half done is no sweep: stopping keeps nothing of it)."""
        service = self.sweep_tab.service
        return not service.running or self.dialogs.ask_stop_sweep(
            "Its training run ends and nothing of it is kept; run it again next time.")

    def current_text(self) -> str:
        result = self.state.result
        return result.encoding.text if result is not None else ""

    def _on_dark(self, dark: bool) -> None:
        for tab in self.tabs:
            tab.figure.set_dark(dark)

    def _on_training_curve(self, curve: CompressionCurve) -> None:
        self.compression_tab.show_curve(curve, f"Compression over merges (training run, {curve.n_bytes:,} bytes)")
