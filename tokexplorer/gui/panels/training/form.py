"""The workbench's settings: the corpus, the algorithm (byte-level BPE on bytes only or split by a
regex, previewed live on the corpus; SentencePiece BPE or unigram with the Llama 2 options, each
editable beside its default), the vocab size and the special tokens, in a scroll area; the buttons
and the message line apart from it (`actions`, kept in view by the panel); `request` turns them
into the `TrainingRequest` a run is started with (named by `services.training.run_name`), or says
what is wrong.

The panel (`panel.TrainingPanel`) is this form with the run, its progress and its result added.
It does not train: the pattern preview splits a sample in a worker, time-boxed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QFormLayout, QGridLayout, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
                               QScrollArea, QSpinBox, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from tokexplorer.core.analysis.unicode_info import token_label
from tokexplorer.core.budgets import max_mb_for, training_over_budget
from tokexplorer.core.patterns import NAMED_PATTERNS
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.training.bpe import check_pattern, check_vocab_size, preview_chunks
from tokexplorer.core.training.runner import TrainingRequest, streams
from tokexplorer.core.training.sentencepiece import LLAMA2_OPTIONS, llama2_options, parse_option
from tokexplorer.gui.panels.training.corpus import CorpusChooser, button
from tokexplorer.gui.services.training import run_name, while_alive
from tokexplorer.gui.services.worker import run_job
from tokexplorer.gui.state import AppState
from tokexplorer.gui.widgets.elided_combo import ElidedComboBox

PREVIEW_LIMIT = 200  # chunks the preview splits off at most
PREVIEW_SHOWN = 40  # of those, shown
PREVIEW_LINES = 3  # lines kept for the chunk preview
ALGORITHMS = [  # (key, label)
    ("bpe-basic", "BPE, bytes only (Basic)"),
    ("bpe-regex", "BPE, regex split (Regex)"),
    ("sp-bpe", "SentencePiece BPE"),
    ("sp-unigram", "SentencePiece unigram"),
]
PATTERNS = [("gpt4", "GPT-4 (cl100k)"), ("gpt2", "GPT-2"), ("o200k", "GPT-4o (o200k)"), ("custom", "Custom…")]


class TrainingForm(QWidget):
    """The settings in a scroll area (`settings_scroll`); the buttons and a message line below it
    (`actions`), which the panel places."""

    def __init__(self, state: AppState, dialogs, text_source: Callable[[], str], parent=None):
        super().__init__(parent)
        self.state = state
        self.dialogs = dialogs
        self._preview_gen = 0
        self._pattern_error: tuple[str, str] | None = None  # (custom pattern, why its preview failed)
        self._preview_timer = QTimer(self)
        self._preview_timer.setSingleShot(True)
        self._preview_timer.setInterval(150)
        self._preview_timer.timeout.connect(self._preview_pattern)
        self.corpus = CorpusChooser(state, dialogs, text_source)
        # (the corpus's parts, as the panel has always offered them)
        self.files_radio, self.text_radio = self.corpus.files_radio, self.corpus.text_radio
        self.add_files_button, self.clear_files_button = self.corpus.add_files_button, self.corpus.clear_files_button
        self.corpus_label, self.preview = self.corpus.corpus_label, self.corpus.preview
        self.settings_scroll = self._build_form()
        self.actions = self._build_actions()
        self.corpus.sample_changed.connect(self._preview_timer.start)
        self.algorithm_box.currentIndexChanged.connect(self._on_algorithm)
        self.pattern_box.currentIndexChanged.connect(self._on_algorithm)
        self.pattern_edit.textChanged.connect(lambda: self._preview_timer.start())
        self.options_table.itemChanged.connect(self._mark_changed_option)
        self.setAcceptDrops(True)

    def _build_form(self) -> QScrollArea:
        form_widget = QWidget()
        form = QFormLayout(form_widget)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        # In a narrow dock (a small screen, 200 %) a field that would not fit beside its label goes
        # below it, and the combo boxes narrow (their item elided): no horizontal scroll bar.
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.addRow(self.corpus)

        self.algorithm_box = ElidedComboBox()
        self.algorithm_box.setToolTip('BPE on bytes only, BPE on the chunks of a split pattern (minbpe), or SentencePiece')
        self.algorithm_box.setObjectName("algorithm")
        for key, label in ALGORITHMS:
            self.algorithm_box.addItem(label, key)
        self.algorithm_box.setCurrentIndex(1)
        form.addRow("Algorithm:", self.algorithm_box)

        self.pattern_box = ElidedComboBox()
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
        self.chunks_label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        # Its room is kept, filled or not: a preview arriving never moves what is below it.
        # subtle: never hidden either: a form layout closes the row of a hidden field.
        self.chunks_label.setFixedHeight(self.chunks_label.fontMetrics().lineSpacing() * PREVIEW_LINES + 4)
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

        settings = QWidget()  # the form at its natural height, any spare room below it
        sv = QVBoxLayout(settings)
        sv.setContentsMargins(0, 0, 0, 0)
        sv.addWidget(form_widget)
        sv.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(settings)
        return scroll

    def _build_actions(self) -> QWidget:
        """The buttons and the message line: kept in view below the scroll area, never scrolled away.
        The buttons take two rows, so each shows its whole label in a narrow dock."""
        bar = QWidget()
        bar.setObjectName("training_actions")
        column = QVBoxLayout(bar)
        column.setContentsMargins(0, 4, 0, 0)
        buttons = QGridLayout()
        self.train_button = button("Train", "Start training in the background")
        self.cancel_button = button("Cancel", "Stop; BPE keeps the merges learned so far")
        self.save_button = button("Save…", "Write the trained tokenizer to files (minbpe, .tiktoken, GPT-2 or "
                                  "SentencePiece)")
        self.use_button = button("Use in Editor", "Colour the editor's text with the trained tokenizer")
        for i, b in enumerate((self.train_button, self.cancel_button, self.save_button, self.use_button)):
            buttons.addWidget(b, i // 2, i % 2)
        buttons.setColumnStretch(2, 1)  # the buttons at their own width, the room to their right
        column.addLayout(buttons)
        self.message = QLabel()
        self.message.setObjectName("training_message")
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        column.addWidget(self.message)
        return bar

    # --- the corpus ----------------------------------------------------------------------

    @property
    def paths(self) -> list[Path]:
        return self.corpus.paths

    def set_paths(self, paths: list[Path]) -> None:
        self.corpus.set_paths(paths)

    def add_files_dialog(self) -> None:
        self.corpus.add_files_dialog()

    def dragEnterEvent(self, event) -> None:
        urls = event.mimeData().urls()
        if urls and all(u.isLocalFile() for u in urls):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        self.corpus.add_dropped([Path(u.toLocalFile()) for u in event.mimeData().urls()])
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
        self.chunks_label.setEnabled(regex_split)
        if not regex_split:
            self._preview_gen += 1  # a preview still on its way is not shown
            self._show_chunks(self._preview_gen, "", error=False)
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
        self.chunks_label.setToolTip(text)  # the whole of it, where the reserved lines cut it
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

    # --- the request ---------------------------------------------------------------------

    def request(self) -> TrainingRequest:
        """What the settings ask for; raises TokexplorerError with a message for the user."""
        specials = tuple(self.special_edit.text().split())
        if len(set(specials)) != len(specials):
            raise TokexplorerError("a special token is given twice")
        vocab_size = self.vocab_spin.value()
        algo = self.algorithm
        if algo.startswith("bpe"):
            check_vocab_size(vocab_size, len(specials))
        if self.corpus.current_text:
            text = self.corpus.text()
            if not text:
                raise TokexplorerError("the corpus is empty: the editor has no text; type or open some, "
                                       "or choose files")
            paths: tuple[str, ...] = ()
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
            text, paths = None, tuple(str(p) for p in self.paths)
        if algo.startswith("sp-"):
            request = TrainingRequest("", "sentencepiece", vocab_size, paths, text,
                                      special_tokens=specials, sp_options=self.sp_options())
        else:
            request = TrainingRequest("", "bpe", vocab_size, paths, text, pattern=self.pattern(),
                                      special_tokens=specials)
        if paths and not streams(request):  # (a streamed count has its budget on distinct chunks)
            bytes_only = request.algorithm == "bpe" and request.pattern is None  # (a higher peak)
            why = training_over_budget(request.algorithm, size, basic=bytes_only)
            if why is not None:
                raise TokexplorerError(f"{why}; choose fewer or smaller files, or train them from the "
                                       f"command line with tokexplorer train … --max-mb {max_mb_for(size)}")
        return request._replace(name=run_name(request))

    def say(self, text: str, *, error: bool = False) -> None:
        """Show a message below the buttons (red for an error)."""
        self.message.setText(text)
        self.message.setStyleSheet("color: #b00020;" if error else "")


def _fixed_item(text: str) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
    item.setForeground(QBrush(QColor("#707070")))
    return item


def _option_text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
