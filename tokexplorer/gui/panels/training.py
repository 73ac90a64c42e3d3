"""The training workbench: choose a corpus and an algorithm, train in the background, watch the
merges arrive, cancel keeping what was learned, and use or save the result.

Corpus: files (the file dialog, or dropped onto the panel) or the editor's current text, with its
size and a preview. Algorithms: byte-level BPE on bytes only or split by a regex (GPT-2, GPT-4,
o200k or a custom pattern, previewed live on the corpus), or SentencePiece BPE / unigram with the
Llama 2 options, each editable beside its default. Training runs in a child process
(`TrainingService`); the merge log is a table model appended a batch at a time. The result joins
the tokenizer picker as soon as the tokenizing server has built it, and Save has the server write
it in any format the core writes (`SaveTokenizer`). Closing the window while it trains asks first,
and so does closing it with trained tokenizers that were never saved (they live in the server's
memory only: Save…, one at a time, Discard or Cancel); `may_close`, the window's closeEvent calls it.

It does not train, split or save by itself: the core does, in the child process, the server or a
worker (the pattern preview).
"""

from __future__ import annotations

import html
import time
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QAbstractTableModel, QEventLoop, QModelIndex, Qt, QTimer
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QAbstractItemView, QButtonGroup, QComboBox, QFormLayout, QGroupBox,
                               QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPlainTextEdit,
                               QProgressBar, QPushButton, QRadioButton, QScrollArea, QSpinBox,
                               QSplitter, QTableView, QTableWidget, QTableWidgetItem, QVBoxLayout,
                               QWidget)

from tokexplorer.core.training.bpe import MergeRecord, check_pattern, check_vocab_size, preview_chunks
from tokexplorer.core.budgets import max_mb_for, training_over_budget
from tokexplorer.core.patterns import NAMED_PATTERNS
from tokexplorer.core.training.sentencepiece import LLAMA2_OPTIONS, llama2_options, parse_option
from tokexplorer.core.analysis.sweep import CompressionCurve
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.files.trained import save_formats
from tokexplorer.core.analysis.unicode_info import token_label
from tokexplorer.server.protocol import SaveTokenizer
from tokexplorer.gui.state import AppState
from tokexplorer.core.training.runner import TrainingRequest
from tokexplorer.gui.services.training import TrainingResult, TrainingService, while_alive
from tokexplorer.gui.services.worker import run_job

PREVIEW_CHARS = 2000  # of the corpus, shown and split by the pattern preview
PREVIEW_LIMIT = 200  # chunks the preview splits off at most
PREVIEW_SHOWN = 40  # of those, shown
ALGORITHMS = [  # (key, label)
    ("bpe-basic", "BPE, bytes only (Basic)"),
    ("bpe-regex", "BPE, regex split (Regex)"),
    ("sp-bpe", "SentencePiece BPE"),
    ("sp-unigram", "SentencePiece unigram"),
]
PATTERNS = [("gpt4", "GPT-4 (cl100k)"), ("gpt2", "GPT-2"), ("o200k", "GPT-4o (o200k)"), ("custom", "Custom…")]


def _button(text: str, tip: str) -> QPushButton:
    button = QPushButton(text)
    button.setToolTip(tip)
    return button


class MergeLogModel(QAbstractTableModel):
    """The merges learned so far: rank (the new id), the pair, the new token, its count."""

    HEADERS = ["rank", "pair", "token", "count"]

    def __init__(self, parent=None):
        super().__init__(parent)
        self.records: list[MergeRecord] = []
        self._vocab: list[bytes] = [bytes([i]) for i in range(256)]  # id -> bytes, for the pairs

    def clear(self) -> None:
        self.beginResetModel()
        self.records = []
        del self._vocab[256:]
        self.endResetModel()

    def append(self, batch: list[MergeRecord]) -> None:
        """Add a batch of merges as one insertion (a row per signal would flood the view)."""
        if not batch:
            return
        first = len(self.records)
        self.beginInsertRows(QModelIndex(), first, first + len(batch) - 1)
        self.records += batch
        self._vocab += [r.token for r in batch]
        self.endInsertRows()

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.records)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.HEADERS[section]
        return None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        r = self.records[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return str(r.rank)
            if col == 1:
                a, b = r.pair
                return f"{token_label(self._vocab[a])} + {token_label(self._vocab[b])}"
            if col == 2:
                return token_label(r.token)
            return f"{r.count:,}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return (f"merge {r.rank - 255}: ids {r.pair[0]} + {r.pair[1]} -> {r.rank}, bytes "
                    f"{r.token.hex(' ')}; seen {r.count:,} times; the corpus is now {r.tokens:,} tokens")
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (0, 3):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class TrainingPanel(QWidget):
    def __init__(self, state: AppState, service: TrainingService, dialogs,
                 text_source: Callable[[], str], parent=None):
        super().__init__(parent)
        self.setObjectName("training_panel")
        self.state = state
        self.service = service
        self.dialogs = dialogs
        self._text_source = text_source  # () -> the editor's current text
        self.paths: list[Path] = []
        self.result: TrainingResult | None = None
        self.result_name = ""  # the result's name in the picker
        self.unsaved: dict[str, TrainingResult] = {}  # picker name -> a result never saved
        self._total = 0  # merges asked for
        self._training_name = ""  # of the run under way (or the last one)
        self._corpus_bytes = 0  # as training sees it
        self._curve: CompressionCurve | None = None  # tokens after each merge, for the Plots dock
        self._merge_t0 = 0.0
        self._preview_gen = 0
        self._pattern_error: tuple[str, str] | None = None  # (custom pattern, why its preview failed)
        self._preview_timer = QTimer(self)
        self._preview_timer.setSingleShot(True)
        self._preview_timer.setInterval(150)
        self._preview_timer.timeout.connect(self._preview_pattern)
        self._build()
        self._connect()
        self.setAcceptDrops(True)
        self._on_algorithm()
        self._show_corpus()

    # --- construction --------------------------------------------------------------------

    def _build(self) -> None:
        form_widget = QWidget()
        form = QFormLayout(form_widget)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)

        corpus_box = QGroupBox("Corpus")
        cb = QVBoxLayout(corpus_box)
        row = QHBoxLayout()
        self.files_radio = QRadioButton("Files")
        self.files_radio.setToolTip('Train on text files: add them with Add Files… or drop them here')
        self.text_radio = QRadioButton("Current text")
        self.text_radio.setToolTip('Train on the text in the editor as it is now')
        self.files_radio.setChecked(True)
        self._corpus_group = QButtonGroup(self)
        self._corpus_group.addButton(self.files_radio)
        self._corpus_group.addButton(self.text_radio)
        self.add_files_button = _button("Add Files…", "Choose text files to train on (or drop them onto this panel)")
        self.clear_files_button = _button("Clear", "Forget the corpus files chosen so far")
        for w in (self.files_radio, self.text_radio, self.add_files_button, self.clear_files_button):
            row.addWidget(w)
        row.addStretch(1)
        cb.addLayout(row)
        self.corpus_label = QLabel()
        self.corpus_label.setObjectName("corpus_size")
        self.corpus_label.setWordWrap(True)
        cb.addWidget(self.corpus_label)
        self.preview = QPlainTextEdit()
        self.preview.setObjectName("corpus_preview")
        self.preview.setReadOnly(True)
        self.preview.setAcceptDrops(False)  # a drop goes to the panel: it adds files
        self.preview.setMaximumHeight(72)
        self.preview.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        cb.addWidget(self.preview)
        form.addRow(corpus_box)

        self.algorithm_box = QComboBox()
        self.algorithm_box.setToolTip('BPE on bytes only, BPE on the chunks of a split pattern (minbpe), or SentencePiece')
        self.algorithm_box.setObjectName("algorithm")
        for key, label in ALGORITHMS:
            self.algorithm_box.addItem(label, key)
        self.algorithm_box.setCurrentIndex(1)
        form.addRow("Algorithm:", self.algorithm_box)

        self.pattern_box = QComboBox()
        self.pattern_box.setToolTip("The split pattern: GPT-2's, GPT-4's, o200k's, or your own regex")
        for key, label in PATTERNS:
            self.pattern_box.addItem(label, key)
        self.pattern_edit = QLineEdit()
        self.pattern_edit.setObjectName("custom_pattern")
        self.pattern_edit.setPlaceholderText(r"a regex, e.g. \w+|\s+|[^\w\s]+")
        self.pattern_edit.setToolTip("Each match is a chunk; merges never cross chunks (regex module syntax)")
        pattern_row = QHBoxLayout()
        pattern_row.addWidget(self.pattern_box)
        pattern_row.addWidget(self.pattern_edit, 1)
        self.pattern_row = QWidget()
        self.pattern_row.setLayout(pattern_row)
        pattern_row.setContentsMargins(0, 0, 0, 0)
        form.addRow("Split pattern:", self.pattern_row)
        self.chunks_label = QLabel()
        self.chunks_label.setObjectName("chunk_preview")
        self.chunks_label.setWordWrap(True)
        self.chunks_label.setTextFormat(Qt.TextFormat.PlainText)
        form.addRow("", self.chunks_label)

        self.options_table = QTableWidget(len(LLAMA2_OPTIONS), 3)
        self.options_table.setObjectName("sentencepiece_options")
        self.options_table.setHorizontalHeaderLabels(["option", "value", "default (Llama 2)"])
        self.options_table.verticalHeader().hide()
        for i, (key, default) in enumerate(LLAMA2_OPTIONS.items()):
            self.options_table.setItem(i, 0, _fixed_item(key))
            self.options_table.setItem(i, 1, QTableWidgetItem(_option_text(default)))
            self.options_table.setItem(i, 2, _fixed_item(_option_text(default)))
        self.options_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.options_table.setMinimumHeight(150)
        self.options_table.setToolTip("Double-click a value to change it; changed values are bold")
        form.addRow(self.options_table)

        self.vocab_spin = QSpinBox()
        self.vocab_spin.setObjectName("vocab_size")
        self.vocab_spin.setRange(1, 10_000_000)
        self.vocab_spin.setValue(4096)
        self.vocab_spin.setGroupSeparatorShown(True)
        self.vocab_spin.setToolTip("Tokens in the vocabulary, the 256 bytes and special tokens included")
        form.addRow("Vocab size:", self.vocab_spin)
        self.special_edit = QLineEdit()
        self.special_edit.setToolTip('Special tokens to add after training, separated by commas, e.g. <|endoftext|>')
        self.special_edit.setObjectName("special_tokens")
        self.special_edit.setPlaceholderText("<|endoftext|> <|im_start|>  (separated by spaces)")
        form.addRow("Special tokens:", self.special_edit)

        buttons = QHBoxLayout()
        self.train_button = _button("Train", "Start training in the background")
        self.cancel_button = _button("Cancel", "Stop; BPE keeps the merges learned so far")
        self.save_button = _button("Save…", "Write the trained tokenizer to files (minbpe, .tiktoken, GPT-2 or "
                                  "SentencePiece)")
        self.use_button = _button("Use in Editor", "Colour the editor's text with the trained tokenizer")
        for b in (self.train_button, self.cancel_button, self.save_button, self.use_button):
            buttons.addWidget(b)
        form.addRow(buttons)
        self.message = QLabel()
        self.message.setObjectName("training_message")
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        form.addRow(self.message)

        settings = QWidget()  # the form at its natural height, any spare room below it
        sv = QVBoxLayout(settings)
        sv.setContentsMargins(0, 0, 0, 0)
        sv.addWidget(form_widget)
        sv.addStretch(1)
        scroll = self._settings_scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(settings)

        log = QWidget()
        lv = QVBoxLayout(log)
        lv.setContentsMargins(0, 0, 0, 0)
        self.progress = QProgressBar()
        self.progress.setObjectName("training_progress")
        self.progress.setTextVisible(True)
        self.progress.setFormat("")
        self.rate_label = QLabel()
        self.rate_label.setObjectName("training_rate")
        lv.addWidget(self.progress)
        lv.addWidget(self.rate_label)
        self.log_model = MergeLogModel(self)
        self.log_view = QTableView()
        self.log_view.setObjectName("merge_log")
        self.log_view.setModel(self.log_model)
        self.log_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.log_view.verticalHeader().hide()
        # subtle: fixed row heights and column widths, so appending rows never measures them all
        self.log_view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.log_view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        header = self.log_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)  # the new token
        digits = self.fontMetrics().horizontalAdvance("0")
        for col, chars in enumerate((7, 18, 12, 11)):
            self.log_view.setColumnWidth(col, digits * chars + 12)
        lv.addWidget(self.log_view, 1)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(scroll)
        splitter.addWidget(log)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        outer.addWidget(splitter)
        self._set_running(False)

    def _connect(self) -> None:
        self.files_radio.toggled.connect(self._show_corpus)
        self.add_files_button.clicked.connect(self.add_files_dialog)
        self.clear_files_button.clicked.connect(lambda: self.set_paths([]))
        self.algorithm_box.currentIndexChanged.connect(self._on_algorithm)
        self.pattern_box.currentIndexChanged.connect(self._on_algorithm)
        self.pattern_edit.textChanged.connect(lambda: self._preview_timer.start())
        self.options_table.itemChanged.connect(self._mark_changed_option)
        self.train_button.clicked.connect(self.train)
        self.cancel_button.clicked.connect(self.service.cancel)
        self.save_button.clicked.connect(self.save)
        self.use_button.clicked.connect(lambda: self.result_name and self.state.set_tokenizer(self.result_name))
        self.service.phase.connect(self._on_phase)
        self.service.started.connect(self._on_started)
        self.service.records.connect(self._on_records)
        self.service.finished.connect(self._on_finished)
        self.service.failed.connect(self._on_failed)
        self.state.tokenized.connect(lambda _: self.text_radio.isChecked() and self._show_corpus())

    # --- the corpus ----------------------------------------------------------------------

    def add_files_dialog(self) -> None:
        folder = str(self.paths[-1].parent) if self.paths else str(Path.cwd())
        chosen = self.dialogs.open_corpus_paths(folder)
        if chosen:
            self.set_paths(self.paths + [Path(p) for p in chosen if Path(p) not in self.paths])

    def set_paths(self, paths: list[Path]) -> None:
        self.paths = list(paths)
        if paths:
            self.files_radio.setChecked(True)
        self._show_corpus()

    def _show_corpus(self) -> None:
        """Size and preview of the corpus (files are only peeked at: their first bytes)."""
        if self.text_radio.isChecked():
            result = self.state.result
            text = result.encoding.text if result is not None else self._text_source()
            n_bytes = result.stats["bytes"] if result is not None else len(text.encode("utf-8"))
            self.corpus_label.setText(f"the editor's text: {len(text):,} characters · {_size(n_bytes)}")
            sample = text[:PREVIEW_CHARS]
        elif self.paths:
            sizes = []
            for p in self.paths:
                try:
                    sizes.append(p.stat().st_size)
                except OSError:
                    sizes.append(0)
            names = ", ".join(p.name for p in self.paths[:3]) + (" …" if len(self.paths) > 3 else "")
            self.corpus_label.setText(f"{len(self.paths)} file{'s' * (len(self.paths) > 1)} · "
                                      f"{_size(sum(sizes))}: {names}")
            self.corpus_label.setToolTip("\n".join(str(p) for p in self.paths))
            sample = _peek(self.paths[0])
        else:
            self.corpus_label.setText("no files yet: Add Files… or drop text files here")
            sample = ""
        self.preview.setPlainText(sample)
        self._preview_timer.start()

    def dragEnterEvent(self, event) -> None:
        urls = event.mimeData().urls()
        if urls and all(u.isLocalFile() for u in urls):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        dropped = [Path(u.toLocalFile()) for u in event.mimeData().urls()]
        self.set_paths(self.paths + [p for p in dropped if p.is_file() and p not in self.paths])
        event.acceptProposedAction()

    # --- the algorithm -------------------------------------------------------------------

    @property
    def algorithm(self) -> str:
        return self.algorithm_box.currentData()

    def _on_algorithm(self) -> None:
        algo = self.algorithm
        regex_split = algo == "bpe-regex"
        self.pattern_row.setEnabled(regex_split)
        self.pattern_edit.setVisible(self.pattern_box.currentData() == "custom")
        self.chunks_label.setVisible(regex_split)
        self.options_table.setVisible(algo.startswith("sp-"))
        self._preview_timer.start()

    def pattern(self) -> str | None:
        """The split pattern chosen (a regex), None for bytes only; raises for a bad custom one."""
        if self.algorithm != "bpe-regex":
            return None
        key = self.pattern_box.currentData()
        if key != "custom":
            return NAMED_PATTERNS[key]
        text = self.pattern_edit.text()
        if not text.strip():
            raise TokexplorerError("the custom split pattern is empty; type a regex or pick GPT-4")
        if self._pattern_error is not None and self._pattern_error[0] == text:
            raise TokexplorerError(self._pattern_error[1])  # its preview already ran away
        return check_pattern(text)

    def _preview_pattern(self) -> None:
        """Split the preview with the pattern in a worker (time-boxed), and show the chunks."""
        if self.algorithm != "bpe-regex":
            return
        self._preview_gen += 1
        gen = self._preview_gen
        sample = self.preview.toPlainText()
        key = self.pattern_box.currentData()
        pattern = self.pattern_edit.text() if key == "custom" else NAMED_PATTERNS[key]
        if not pattern.strip():
            self._show_chunks(gen, "type a regex: each match becomes a chunk", error=False)
            return
        if not sample:
            self._show_chunks(gen, "(the chunks of the corpus appear here)", error=False)
            return

        def show(chunks: list[str]) -> None:
            shown = " │ ".join(token_label(c.encode("utf-8")) for c in chunks[:PREVIEW_SHOWN])
            more = "+" if len(chunks) >= PREVIEW_LIMIT else ""
            self._show_chunks(gen, f"{len(chunks)}{more} chunks in the preview: {shown}", error=False)

        run_job(lambda progress: preview_chunks(sample, pattern, limit=PREVIEW_LIMIT),
                on_result=while_alive(self, show),
                on_error=while_alive(self, lambda exc: self._show_chunks(gen, str(exc), error=True,
                                                                          pattern=pattern)))

    def _show_chunks(self, gen: int, text: str, *, error: bool, pattern: str = "") -> None:
        if gen != self._preview_gen:
            return  # a newer preview is on its way
        self._pattern_error = (pattern, text) if error else None
        self.chunks_label.setText(text)
        self.chunks_label.setStyleSheet("color: #b00020;" if error else "")

    def _mark_changed_option(self, item: QTableWidgetItem) -> None:
        if item.column() == 1:
            default = self.options_table.item(item.row(), 2)
            font = item.font()
            font.setBold(default is not None and item.text() != default.text())
            self.options_table.blockSignals(True)
            item.setFont(font)
            self.options_table.blockSignals(False)

    def sp_options(self) -> dict[str, object]:
        """The SentencePiece options as edited (raises for a value of the wrong kind)."""
        overrides = {}
        for i in range(self.options_table.rowCount()):
            key = self.options_table.item(i, 0).text()
            overrides[key] = parse_option(key, self.options_table.item(i, 1).text())
        return llama2_options(self.vocab_spin.value(), "unigram" if self.algorithm == "sp-unigram" else "bpe",
                              **overrides)

    def set_option(self, key: str, value: str) -> None:
        """Change a SentencePiece option as if edited in the table."""
        for i in range(self.options_table.rowCount()):
            if self.options_table.item(i, 0).text() == key:
                self.options_table.item(i, 1).setText(value)
                return
        raise KeyError(key)

    # --- training ------------------------------------------------------------------------

    def request(self) -> TrainingRequest:
        """What the settings ask for; raises TokexplorerError with a message for the user."""
        specials = tuple(self.special_edit.text().split())
        if len(set(specials)) != len(specials):
            raise TokexplorerError("a special token is given twice")
        vocab_size = self.vocab_spin.value()
        algo = self.algorithm
        if algo.startswith("bpe"):
            check_vocab_size(vocab_size, len(specials))
        if self.text_radio.isChecked():
            text = self._text_source()
            if not text:
                raise TokexplorerError("the corpus is empty: the editor has no text; type or open some, "
                                       "or choose files")
            paths: tuple[str, ...] = ()
            source = "text"
        else:
            if not self.paths:
                raise TokexplorerError("the corpus is empty: add text files (Add Files… or drop them "
                                       "here), or train on the current text")
            missing = [p for p in self.paths if not p.is_file()]
            if missing:
                raise TokexplorerError(f"{missing[0]} is not a file (moved or deleted?); clear the list and add it again")
            size = sum(p.stat().st_size for p in self.paths)
            if size == 0:
                raise TokexplorerError("the corpus is empty: the files have no text")
            why = training_over_budget("sentencepiece" if algo.startswith("sp-") else "bpe", size)
            if why is not None:
                raise TokexplorerError(f"{why}; choose fewer or smaller files, or train them from the "
                                       f"command line with tokexplorer train … --max-mb {max_mb_for(size)}")
            text, paths = None, tuple(str(p) for p in self.paths)
            source = self.paths[0].stem
        if algo.startswith("sp-"):
            options = self.sp_options()
            name = f"SP {options['model_type']} {vocab_size} ({source})"
            return TrainingRequest(name, "sentencepiece", vocab_size, paths, text,
                                   special_tokens=specials, sp_options=options)
        pattern = self.pattern()
        label = "bytes" if pattern is None else self.pattern_box.currentData()
        return TrainingRequest(f"BPE {label} {vocab_size} ({source})", "bpe", vocab_size, paths, text,
                               pattern=pattern, special_tokens=specials)

    def train(self) -> None:
        if self.service.running:
            return
        try:
            request = self.request()
        except TokexplorerError as exc:
            self._say(str(exc), error=True)
            return
        self.log_model.clear()
        self.result = None
        self.result_name = ""
        self._total = 0
        self._say("")
        self.rate_label.setText("")
        self._set_running(True)
        self._training_name = request.name
        self.service.start(request, self.state.add_trained)

    def _set_running(self, running: bool) -> None:
        self.train_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.save_button.setEnabled(not running and self.result is not None)
        self.use_button.setEnabled(not running and self.result is not None)

    def _on_phase(self, what: str, done: int, total: int) -> None:
        if what == "merging":
            return  # the merges' own progress follows
        if total < 0:
            self.progress.setRange(0, 0)  # busy: the bar moves though nothing can be counted
        else:
            self.progress.setRange(0, max(total, 1))
            self.progress.setValue(done)
        self.progress.setFormat(what)
        self.rate_label.setText(what + ("…" if what not in ("done", "stopped") else ""))

    def _on_started(self, total: int, corpus_bytes: int) -> None:
        self._total = total
        self._merge_t0 = time.perf_counter()
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(0)
        self.progress.setFormat(f"0 of {total:,} merges")
        self._corpus_bytes = corpus_bytes
        self._curve = CompressionCurve(corpus_bytes)  # the Plots dock draws it as it grows
        self.state.training_curve.emit(self._curve.snapshot())
        self.rate_label.setText(f"merging: the corpus is {corpus_bytes:,} bytes")

    def _on_records(self, batch: list[MergeRecord]) -> None:
        view = self.log_view.verticalScrollBar()
        follow = view.value() >= view.maximum() - 2
        self.log_model.append(batch)
        if follow:
            self.log_view.scrollToBottom()
        if self._curve is not None:
            self._curve.tokens.extend(r.tokens for r in batch)
            self.state.training_curve.emit(self._curve.snapshot())
        done = batch[-1].rank - 255
        set_progress(self.progress, done, f"{done:,} of {self._total:,} merges")
        seconds = time.perf_counter() - self._merge_t0
        rate = done / seconds if seconds > 0 else 0.0
        left = (self._total - done) / rate if rate > 0 else 0.0
        last = batch[-1]
        self.rate_label.setText(
            f"{done:,} of {self._total:,} merges · {rate:,.0f} merges/s · about {left:,.0f} s left "
            f"· {last.tokens:,} tokens")

    def _on_finished(self, result: TrainingResult) -> None:
        self.result = result
        self.result_name = result.name  # the service offered it: it is in the picker
        self.unsaved[self.result_name] = result
        self._set_running(False)
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        n_vocab = result.info.n_vocab
        merges = len(self.log_model.records)
        if result.request.algorithm == "sentencepiece":
            what = f"trained {n_vocab:,} pieces in {result.seconds:.1f} s"
        elif result.stopped:
            what = f"cancelled: kept the first {merges:,} merges (vocab size {n_vocab:,})"
        elif merges < self._total:
            what = (f"{merges:,} merges in {result.seconds:.1f} s: no pair left to merge, so the vocab "
                    f"size is {n_vocab:,} (asked for {result.request.vocab_size:,})")
        else:
            what = f"{merges:,} merges in {result.seconds:.1f} s"
        self.progress.setFormat("stopped" if result.stopped else "done")
        if merges and self._total:
            self.progress.setRange(0, self._total)
            self.progress.setValue(merges)
            self.progress.setFormat(f"{merges:,} of {self._total:,} merges: "
                                    + ("stopped" if result.stopped else "done"))
        if merges:
            tokens = self.log_model.records[-1].tokens
            self.rate_label.setText(f"the corpus: {self._corpus_bytes:,} bytes → {tokens:,} tokens, "
                                    f"{self._corpus_bytes / max(tokens, 1):.2f} bytes/token")
        self._say(f"{what}. “{self.result_name}” is in the tokenizer picker: Use in Editor, or Save…")

    def _on_failed(self, message: str) -> None:
        self._set_running(False)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("")
        self.rate_label.setText("")
        self._say(message, error=True)

    def _say(self, text: str, *, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setStyleSheet("color: #b00020;" if error else "")
        if text:  # below the buttons: in a short dock it is scrolled into view
            QTimer.singleShot(0, self, lambda: self._settings_scroll.ensureWidgetVisible(self.message))

    # --- closing -------------------------------------------------------------------------

    def may_close(self) -> bool:
        """Whether the window may close: the user's answers when a training runs (stopping ends
        the child and loses what it has learned: a result is kept only by Cancel, then Save) and
        when trained tokenizers were never saved (each saved in turn, or all discarded)."""
        return self._may_stop() and self._may_lose_unsaved()

    def _may_stop(self) -> bool:
        if not self.service.running:
            return True
        merges = self.service.merges_so_far
        if merges:
            lost = (f"The {merges:,} merges learned so far (of {self._total:,}) will be lost. To keep them, "
                    "choose Cancel here, then Cancel in the Training panel (which keeps what was learned) "
                    "and save the result.")
        else:
            lost = "Nothing learned so far will be kept."
        return self.dialogs.ask_stop_training(f"“{self._training_name}”", lost)

    def _may_lose_unsaved(self) -> bool:
        names = list(self.unsaved)
        if not names:
            return True
        answer = self.dialogs.ask_unsaved_tokenizers(names)
        if answer != "save":
            return answer == "discard"
        for name in names:
            formats = self.unsaved[name].info.save_formats
            answer = self.dialogs.save_tokenizer_path(self._suggested_path(name), save_formats(formats))
            if not answer:
                return False  # a cancelled save dialog cancels the close
            problem = self._save_before_closing(name, *answer)
            if problem:
                message = f"cannot save {name}: {problem}"
                self._say(message, error=True)
                self.dialogs.show_info("Tokenizer not saved", html.escape(message))
                return False
            del self.unsaved[name]
        return True

    def _save_before_closing(self, name: str, path: str, fmt: str) -> str:
        """Have the server write the tokenizer, and wait for it; returns "" or why it failed.

        subtle: the window closes as soon as `may_close` returns, so the answer is waited for
        here, in a local event loop (as a modal dialog waits): the window still repaints."""
        problem: list[str] = []
        loop = QEventLoop()

        def failed(message: str) -> None:
            problem.append(message)
            loop.quit()

        self.state.server.ask(SaveTokenizer(name, path, fmt), lambda written: loop.quit(), failed)
        loop.exec()
        return problem[0] if problem else ""

    # --- saving --------------------------------------------------------------------------

    def _suggested_path(self, name: str) -> str:
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name).strip("_")
        folder = self.paths[0].parent if self.paths else Path.cwd()
        return str(folder / safe)

    def save(self) -> None:
        if self.result is None:
            return
        name = self.result_name
        answer = self.dialogs.save_tokenizer_path(self._suggested_path(name), save_formats(self.result.info.save_formats))
        if not answer:
            return
        path, fmt = answer

        def saved(written: tuple[str, ...]) -> None:
            self.unsaved.pop(name, None)
            self._say("saved " + ", ".join(written))

        self.state.server.ask(SaveTokenizer(name, path, fmt), while_alive(self, saved),
                              while_alive(self, lambda message: self._say(f"cannot save: {message}", error=True)))


def set_progress(bar: QProgressBar, value: int, text: str | None = None) -> None:
    """Move a progress bar without painting it now. subtle: QProgressBar.setValue repaints at once
    (synchronously) when its text changes: ~20 ms a call measured offscreen, every batch of
    merges; with updates off it only schedules a paint, which joins the window's next one."""
    bar.setUpdatesEnabled(False)
    bar.setValue(value)
    if text is not None:
        bar.setFormat(text)
    bar.setUpdatesEnabled(True)  # schedules the paint


def _fixed_item(text: str) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
    item.setForeground(QBrush(QColor("#707070")))
    return item


def _option_text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _size(n_bytes: int) -> str:
    return f"{n_bytes:,} bytes" if n_bytes < 10_000 else f"{n_bytes / 1e6:,.2f} MB"


def _peek(path: Path) -> str:
    """The start of a file as text, for the preview (a broken last character is dropped)."""
    try:
        with open(path, "rb") as f:
            head = f.read(PREVIEW_CHARS * 4)
    except OSError as exc:
        return f"(cannot read {path.name}: {exc.strerror or exc})"
    return head.decode("utf-8", errors="ignore")[:PREVIEW_CHARS]
