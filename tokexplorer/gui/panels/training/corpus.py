"""The workbench's corpus: files (chosen in the file dialog, or dropped onto the panel) or the
editor's current text, shown by its size and a preview of its start.

It reads no whole file (a file is only peeked at: its first bytes) and trains nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QButtonGroup, QGroupBox, QLabel, QPlainTextEdit, QPushButton, QRadioButton, QVBoxLayout

from tokexplorer.gui.state import AppState
from tokexplorer.gui.widgets.flow_layout import FlowLayout

PREVIEW_CHARS = 2000  # of the corpus, shown and split by the pattern preview


def button(text: str, tip: str) -> QPushButton:
    """A push button with its tooltip."""
    b = QPushButton(text)
    b.setToolTip(tip)
    return b


class CorpusChooser(QGroupBox):
    """Files or the current text; `sample_changed` when the preview shows another start."""

    sample_changed = Signal()

    def __init__(self, state: AppState, dialogs, text_source: Callable[[], str], parent=None):
        super().__init__("Corpus", parent)
        self.state = state
        self.dialogs = dialogs
        self._text_source = text_source  # () -> the editor's current text
        self.paths: list[Path] = []
        box = QVBoxLayout(self)
        row = FlowLayout()  # on more lines in a narrow dock, each control whole
        self.files_radio = QRadioButton("Files")
        self.files_radio.setToolTip('Train on text files: add them with Add Files… or drop them here')
        self.text_radio = QRadioButton("Current text")
        self.text_radio.setToolTip('Train on the text in the editor as it is now')
        self.files_radio.setChecked(True)
        self._group = QButtonGroup(self)
        self._group.addButton(self.files_radio)
        self._group.addButton(self.text_radio)
        self.add_files_button = button("Add Files…", "Choose text files to train on (or drop them onto this panel)")
        self.clear_files_button = button("Clear", "Forget the corpus files chosen so far")
        for w in (self.files_radio, self.text_radio, self.add_files_button, self.clear_files_button):
            row.addWidget(w)
        box.addLayout(row)
        self.corpus_label = QLabel()
        self.corpus_label.setObjectName("corpus_size")
        self.corpus_label.setWordWrap(True)
        box.addWidget(self.corpus_label)
        self.preview = QPlainTextEdit()
        self.preview.setObjectName("corpus_preview")
        self.preview.setReadOnly(True)
        self.preview.setAcceptDrops(False)  # a drop goes to the panel: it adds files
        self.preview.setMaximumHeight(72)
        self.preview.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        box.addWidget(self.preview)

        self.files_radio.toggled.connect(self.show_corpus)
        self.add_files_button.clicked.connect(self.add_files_dialog)
        self.clear_files_button.clicked.connect(lambda: self.set_paths([]))
        self.state.tokenized.connect(lambda _: self.text_radio.isChecked() and self.show_corpus())

    @property
    def current_text(self) -> bool:
        """Whether the corpus is the editor's current text (else the files)."""
        return self.text_radio.isChecked()

    def text(self) -> str:
        """The editor's current text."""
        return self._text_source()

    def add_files_dialog(self) -> None:
        folder = str(self.paths[-1].parent) if self.paths else str(Path.cwd())
        chosen = self.dialogs.open_corpus_paths(folder)
        if chosen:
            self.set_paths(self.paths + [Path(p) for p in chosen if Path(p) not in self.paths])

    def set_paths(self, paths: list[Path]) -> None:
        self.paths = list(paths)
        if paths:
            self.files_radio.setChecked(True)
        self.show_corpus()

    def add_dropped(self, dropped: list[Path]) -> None:
        """Add the files dropped onto the panel (folders and duplicates are left out)."""
        self.set_paths(self.paths + [p for p in dropped if p.is_file() and p not in self.paths])

    def show_corpus(self) -> None:
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
        self.sample_changed.emit()


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
