"""The Learn view: the lecture as a guided path. The chapters and their steps are listed on the
left; the chosen step's explanation, its text and its numbers on the right, each number the
lecture printed beside the one tokexplorer computes, with ✓ where they agree and ✗ with the
reason where they do not. Previous / Next walk the steps; "Load this step" emits `step_opened`
(the step and the text to load), and the window loads the text into the editor, selects the
step's tokenizer and policy and brings the step's view forward.

The steps are data (`core.lesson.chapters`); their numbers need tokenizers, so the tokenizing
server computes them (`LessonCheck`), under the generation rule: an answer for a step or a text
no longer shown is dropped. A step on the user's own text (where the lecture used a text
tokexplorer may not ship) shows a box to paste it in, or to take the editor's text; until then
it works on a shipped stand-in. It never calls another view.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import (QAbstractItemView, QFrame, QHBoxLayout, QHeaderView, QLabel, QPlainTextEdit,
                               QPushButton, QScrollArea, QSplitter, QTableWidget, QTableWidgetItem, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from tokexplorer.core.lesson.chapters import CHAPTERS, all_steps
from tokexplorer.core.lesson.check import Checked, shorten, step_text
from tokexplorer.core.lesson.step import Step
from tokexplorer.gui.state import AppState
from tokexplorer.server.protocol import LessonCheck

MARKS = {True: "✓", False: "✗", None: ""}
VIEW_NAMES = {"editor": "the editor", "ids": "Token IDs", "chunks": "Chunks", "vocab": "Vocabulary",
              "inspector": "Inspector", "merges": "Merge Tree", "trace": "Encode Trace", "chat": "Chat",
              "training": "Training", "plots": "Plots", "compare": "Compare", "bpe": "BPE by Hand",
              "glitch": "Glitch Tokens"}
POLICY_NAMES = {"refuse": "refuse (tiktoken's default)", "all": "all: encode as special",
                "none": "none: encode as text"}
PREVIEW_CHARS = 600  # of a long text, the preview shows the start
RECOMPUTE_MS = 400  # after the last keystroke in the paste box
SIDE_BY_SIDE = 760  # px: a narrower view puts the chapters above the step, not beside it
MAX_STEP_CHARS = 1 << 21  # of a longer text, a step's numbers use the start (the article is 23,328)


class LearnView(QWidget):
    step_opened = Signal(object, str)  # core.lesson.step.Step, the text to load

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.setObjectName("learn_view")
        self.state = state
        self.steps: list[Step] = all_steps()
        self.current: Step | None = None
        self.checked: tuple[Checked, ...] = ()  # the numbers shown, as the server computed them
        self.yours: dict[str, str] = {}  # a step's key -> the text the user gave it
        self._generation = 0
        self._answered = 0

        self.chapters = QTreeWidget()
        self.chapters.setObjectName("learn_chapters")
        self.chapters.setHeaderHidden(True)
        self._items: dict[str, QTreeWidgetItem] = {}
        for c, chapter in enumerate(CHAPTERS, 1):
            top = QTreeWidgetItem([f"{c}. {chapter.title}"])
            top.setFlags(top.flags() & ~Qt.ItemFlag.ItemIsSelectable)
            self.chapters.addTopLevelItem(top)
            for s, step in enumerate(chapter.steps, 1):
                item = QTreeWidgetItem([f"{c}.{s} {step.title}"])
                item.setData(0, Qt.ItemDataRole.UserRole, step.key)
                top.addChild(item)
                self._items[step.key] = item
        self.chapters.expandAll()

        self.title = QLabel()
        self.title.setObjectName("learn_title")
        self.title.setWordWrap(True)
        self.where = QLabel()
        self.where.setObjectName("learn_where")
        self.where.setStyleSheet("color: gray")
        self.explanation = QLabel()
        self.explanation.setObjectName("learn_explanation")
        self.explanation.setWordWrap(True)
        self.explanation.setTextFormat(Qt.TextFormat.RichText)
        self.setup = QLabel()
        self.setup.setObjectName("learn_setup")
        self.setup.setWordWrap(True)
        self.setup.setTextFormat(Qt.TextFormat.RichText)
        self.loaded = QLabel()  # where the loaded step's view went (show_loaded)
        self.loaded.setObjectName("learn_loaded")
        self.loaded.setWordWrap(True)
        self.loaded.hide()
        self.source = QLabel()
        self.source.setObjectName("learn_source")
        self.source.setWordWrap(True)
        self.source.setTextFormat(Qt.TextFormat.RichText)
        self.text = QPlainTextEdit()
        self.text.setObjectName("learn_text")
        self.text.setReadOnly(True)
        self.text.setMaximumHeight(110)
        self.paste = QPlainTextEdit()
        self.paste.setObjectName("learn_yours")
        self.paste.setMaximumHeight(80)
        self.paste.setPlaceholderText("Paste the text here (or take the editor's); the numbers are computed on it.")
        self.take_editor = QPushButton("Use the Editor's Text")
        self.take_editor.setObjectName("learn_take_editor")
        self.take_editor.setToolTip("Compute this step's numbers on the text in the editor")
        self.take_editor.clicked.connect(self.use_editor_text)
        self.yours_row = QWidget()
        yours_layout = QHBoxLayout(self.yours_row)
        yours_layout.setContentsMargins(0, 0, 0, 0)
        yours_layout.addWidget(self.paste, 1)
        yours_layout.addWidget(self.take_editor, 0, Qt.AlignmentFlag.AlignTop)
        self._recompute = QTimer(self)
        self._recompute.setSingleShot(True)
        self._recompute.setInterval(RECOMPUTE_MS)
        self._recompute.timeout.connect(self._on_pasted)
        self.paste.textChanged.connect(self._recompute.start)

        self.numbers = QTableWidget(0, 4)
        self.numbers.setMinimumHeight(160)
        self.numbers.setObjectName("learn_numbers")
        self.numbers.setHorizontalHeaderLabels(["", "Number", "The lecture printed", "tokexplorer computes"])
        self.numbers.verticalHeader().hide()
        self.numbers.setWordWrap(True)
        self.numbers.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.numbers.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        header = self.numbers.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.numbers.setColumnWidth(1, 190)
        self.notes = QLabel()
        self.notes.setObjectName("learn_notes")
        self.notes.setWordWrap(True)
        self.notes.setTextFormat(Qt.TextFormat.RichText)
        self.status = QLabel()
        self.status.setObjectName("learn_status")
        self.status.setStyleSheet("color: gray")

        self.previous_button = QPushButton("◀ Previous")
        self.previous_button.setObjectName("learn_previous")
        self.previous_button.setToolTip("The step before this one (at a chapter's start, the last step of "
                                        "the chapter before)")
        self.previous_button.clicked.connect(self.previous_step)
        self.load_button = QPushButton("Load This Step")
        self.load_button.setObjectName("learn_load")
        self.load_button.setToolTip("Open the step's text as a new untitled text, with its tokenizer, "
                                    "special-token policy and view")
        self.load_button.clicked.connect(self.load_step)
        self.next_button = QPushButton("Next ▶")
        self.next_button.setObjectName("learn_next")
        self.next_button.setToolTip("The next step of the lesson")
        self.next_button.clicked.connect(self.next_step)
        buttons = QHBoxLayout()
        buttons.addWidget(self.previous_button)
        buttons.addStretch(1)
        buttons.addWidget(self.load_button)
        buttons.addStretch(1)
        buttons.addWidget(self.next_button)

        right = QWidget()
        layout = QVBoxLayout(right)
        layout.setContentsMargins(6, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.where)
        layout.addWidget(self.explanation)
        layout.addWidget(self.setup)
        layout.addWidget(self.loaded)
        layout.addWidget(self.source)
        layout.addWidget(self.text)
        layout.addWidget(self.yours_row)
        layout.addWidget(self.numbers, 1)
        layout.addWidget(self.notes)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        # The step scrolls: in a narrow or short dock (the Learn workspace gives it 40% of the
        # window) the view keeps a small minimum size and the other docks their share.
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(right)
        self.split = QSplitter()
        self.split.addWidget(self.chapters)
        self.split.addWidget(scroll)
        self.split.setStretchFactor(0, 1)
        self.split.setStretchFactor(1, 3)
        self.split.setChildrenCollapsible(False)
        self.split.setSizes([260, 780])
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        outer.addWidget(self.split)

        self.chapters.currentItemChanged.connect(self._on_item)
        self.select_step(self.steps[0].key)

    def sizeHint(self) -> QSize:
        return QSize(1000, 560)

    def minimumSizeHint(self) -> QSize:
        return QSize(240, 200)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        wide = self.width() >= SIDE_BY_SIDE
        orientation = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.split.orientation() != orientation:
            self.split.setOrientation(orientation)
            length = self.width() if wide else self.height()
            self.split.setSizes([length // 4, length - length // 4])

    # --- queries (tests, screenshots) ------------------------------------------------------

    @property
    def up_to_date(self) -> bool:
        """The numbers asked for last are shown."""
        return self._answered == self._generation

    def shown_rows(self) -> list[tuple[str, str, str, str]]:
        """The table as shown: (mark, number, the lecture's value, the app's value)."""
        return [tuple(self.numbers.item(r, c).text() for c in range(4)) for r in range(self.numbers.rowCount())]

    def step_text(self) -> str:
        """The text the current step works on (the user's, for a step on the user's text), cut
        to MAX_STEP_CHARS."""
        return step_text(self.current, self.yours.get(self.current.key))[:MAX_STEP_CHARS]

    # --- moving between steps --------------------------------------------------------------

    def select_step(self, key: str) -> None:
        self.chapters.setCurrentItem(self._items[key])

    def next_step(self) -> None:
        i = self.steps.index(self.current)
        if i + 1 < len(self.steps):
            self.select_step(self.steps[i + 1].key)

    def previous_step(self) -> None:
        i = self.steps.index(self.current)
        if i > 0:
            self.select_step(self.steps[i - 1].key)

    def load_step(self) -> None:
        """Ask the window to load the step: its text, tokenizer, policy and view."""
        self.step_opened.emit(self.current, self.step_text())

    def show_loaded(self, said: str) -> None:
        """Say under the step's setup where its view went when it was loaded (another workspace,
        or a tab here for the step: gui/workspaces.py `show_for_step`); "" says nothing."""
        self.loaded.setText(said)
        self.loaded.setVisible(bool(said))

    def _on_item(self, item: QTreeWidgetItem | None, _previous=None) -> None:
        key = item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None
        if key is None:  # a chapter: its first step
            if item is not None and item.childCount():
                self.chapters.setCurrentItem(item.child(0))
            return
        step = next(s for s in self.steps if s.key == key)
        if step is not self.current:
            self._show(step)

    # --- the user's text ---------------------------------------------------------------------

    def use_editor_text(self) -> None:
        result = self.state.result
        if result is None:
            self.status.setText("The editor has no text yet.")
            return
        self.paste.setPlainText(result.encoding.text[:MAX_STEP_CHARS])

    def _on_pasted(self) -> None:
        if self.current is None or self.current.source.kind != "yours":
            return
        text = self.paste.toPlainText()
        if text:
            self.yours[self.current.key] = text
        else:
            self.yours.pop(self.current.key, None)
        self._show_text()
        self._ask()

    # --- showing a step ----------------------------------------------------------------------

    def _show(self, step: Step) -> None:
        self.current = step
        c = next(i for i, chapter in enumerate(CHAPTERS, 1) if step in chapter.steps)
        chapter = CHAPTERS[c - 1]
        s = chapter.steps.index(step) + 1
        self.title.setText(f"<b style='font-size:large'>{html.escape(step.title)}</b>")
        self.where.setText(f"Chapter {c} of {len(CHAPTERS)}, {chapter.title} · step {s} of {len(chapter.steps)}")
        self.explanation.setText(html.escape(step.explanation, quote=False))
        setup = [f"view <b>{VIEW_NAMES[step.view]}</b>"]
        if step.tokenizer:
            setup.insert(0, f"tokenizer <b>{html.escape(step.tokenizer)}</b>")
        if step.policy:
            setup.insert(1, f"special tokens <b>{POLICY_NAMES[step.policy]}</b>")
        self.setup.setText("Loading this step opens its text with " + ", ".join(setup) + ".")
        self.show_loaded("")
        self.source.setText(html.escape(step.source.describe(), quote=False))
        self.yours_row.setVisible(step.source.kind == "yours")
        self.paste.blockSignals(True)
        self.paste.setPlainText(self.yours.get(step.key, ""))
        self.paste.blockSignals(False)
        self._show_text()
        i = self.steps.index(step)
        self.previous_button.setEnabled(i > 0)
        self.next_button.setEnabled(i + 1 < len(self.steps))
        self._fill([])
        self._ask()

    def _show_text(self) -> None:
        text = self.step_text()
        shown = text if len(text) <= PREVIEW_CHARS else f"{text[:PREVIEW_CHARS]}… ({len(text):,} characters)"
        self.text.setPlainText(shown)

    def _ask(self) -> None:
        self._generation += 1
        gen, step = self._generation, self.current
        cut = len(self.yours.get(step.key, "")) > MAX_STEP_CHARS
        first = f"The numbers use the first {MAX_STEP_CHARS:,} characters of your text. " if cut else ""
        self.status.setText(first + "Computing the numbers…")

        def done(checked: tuple[Checked, ...]) -> None:
            if gen != self._generation:
                return  # another step or text was chosen meanwhile
            self._answered = gen
            self.checked = checked
            self._fill(checked)
            agreed = sum(c.agrees is True for c in checked)
            compared = sum(c.agrees is not None for c in checked)
            self.status.setText(first + (f"{agreed} of {compared} of the lecture's numbers agree on this text."
                                         if compared else "The lecture printed no number here: these are the app's."))

        def failed(message: str) -> None:
            if gen != self._generation:
                return
            self._answered = gen
            self.status.setText(f"Cannot compute the numbers: {message}")

        self.state.server.ask(LessonCheck(step.key, self.step_text()), done, failed)

    def _fill(self, checked: tuple[Checked, ...] | list) -> None:
        """The step's numbers: the lecture's values at once, the app's as they are computed."""
        step = self.current
        self.numbers.setRowCount(len(step.numbers))
        notes = []
        for row, number in enumerate(step.numbers):
            c = checked[row] if checked else None
            lecture = "" if number.lecture is None else shorten(number.printed_text())
            app = "…" if c is None else (shorten(c.app) if c.app else "—")
            mark = "" if c is None else MARKS[c.agrees]
            cells = [mark, number.label, lecture or "(printed none)", app]
            for col, value in enumerate(cells):
                item = QTableWidgetItem(value)
                item.setToolTip(value if col != 0 else (c.note if c is not None else ""))
                if col == 0:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                    if c is not None and c.agrees is not None:
                        item.setForeground(Qt.GlobalColor.darkGreen if c.agrees else Qt.GlobalColor.red)
                if col == 2 and number.lecture is None:
                    item.setForeground(Qt.GlobalColor.gray)
                self.numbers.setItem(row, col, item)
            if c is not None and c.note and c.note not in notes:
                notes.append(c.note)
        self.numbers.resizeRowsToContents()
        self.notes.setText("<br>".join(f"{'—' if note.startswith('cannot') else '✗'} {html.escape(note, quote=False)}"
                                      for note in notes))
        self.notes.setVisible(bool(notes))
