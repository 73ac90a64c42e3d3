"""The Chat view: write a conversation, see the exact text and tokens a chat model receives.

The conversation is a list of messages (role + content) edited in place; the tokenizer is the
window's current one. Rendering and counting are the core's (`core.chat.conversation.count_chat`), run by the
tokenizing server (`CountChat`: templates are rendered there, never in the window) with a
generation number, so typing never waits for it and stale answers are dropped. The
rendered text shows each token's background as a selection drawn under the text (never a
character format, so shaping is untouched), special tokens in the special-token colour.
"""

from __future__ import annotations

import json

from PySide6.QtCore import Qt, QTimer
from shiboken6 import isValid
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (QApplication, QCheckBox, QComboBox, QHBoxLayout, QHeaderView, QLabel,
                               QPlainTextEdit, QPushButton, QScrollArea, QSplitter, QTableWidget,
                               QTableWidgetItem, QTextEdit, QVBoxLayout, QWidget)

from tokexplorer.core.chat.conversation import FORMATS, ROLES, ChatCount, Message
from tokexplorer.core.encoding import TokenFlag
from tokexplorer.core.token_colours import colour_indices
from tokexplorer.gui.widgets.colours import TokenPalette
from tokexplorer.core.positions import astral_prefix
from tokexplorer.server.protocol import CountChat
from tokexplorer.gui.state import AppState
from tokexplorer.gui.widgets.wheel_guard import guard_wheel

STARTER = [Message("system", "You are a helpful assistant."),
           Message("user", "How many r's are in “strawberry”?")]
FORMAT_LABELS = {"": "the tokenizer's own", **{name: f.description for name, f in FORMATS.items()},
                 "template": "tokenizer_config.json chat_template"}


class MessageEditor(QWidget):
    """One message: its role and its content."""

    def __init__(self, message: Message, on_change, on_remove, parent=None):
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.role = QComboBox()
        self.role.addItems(ROLES)
        self.role.setCurrentText(message.role)
        self.role.setToolTip("Who says it: system, user, assistant or tool")
        self.content = QPlainTextEdit(message.content)
        self.content.setToolTip("What the message says")
        self.content.setFixedHeight(self.content.fontMetrics().lineSpacing() * 3 + 12)
        remove = QPushButton("✕")
        remove.setToolTip("Remove this message")
        remove.setFixedWidth(28)
        layout.addWidget(self.role, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.content, 1)
        layout.addWidget(remove, 0, Qt.AlignmentFlag.AlignTop)
        self.role.currentTextChanged.connect(on_change)
        self.content.textChanged.connect(on_change)
        remove.clicked.connect(lambda: on_remove(self))

    def message(self) -> Message:
        return Message(self.role.currentText(), self.content.toPlainText())


class ChatView(QWidget):
    """Conversation in, rendered text, tokens and per-message counts out."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.setObjectName("chat_view")
        self.state = state
        self.generation = 0
        self._done = 0  # the generation whose answer is shown
        self._stale = True  # the conversation, format or tokenizer changed since the last count
        self.count: ChatCount | None = None
        self._editors: list[MessageEditor] = []
        self._timer = QTimer(self, singleShot=True, interval=150)
        self._timer.timeout.connect(self.recount)

        self.format_box = QComboBox()
        for name, label in FORMAT_LABELS.items():
            self.format_box.addItem(label, name)
        self.format_box.setToolTip("The chat format: the tokenizer's own (its chat_template or the format "
                                   "its model uses), or a named one")
        self.prompt_box = QCheckBox("Add generation prompt")
        self.prompt_box.setChecked(True)
        self.prompt_box.setToolTip("End with the assistant's header, as an API does to ask for the reply")
        add = QPushButton("Add message")
        add.setToolTip("Add a message after the last one")
        copy = QPushButton("Copy JSON")
        copy.setToolTip("Copy the conversation, its text, ids and counts as JSON")
        top = QHBoxLayout()
        top.addWidget(QLabel("Format:"))
        top.addWidget(self.format_box, 1)
        top.addWidget(self.prompt_box)
        top.addWidget(add)
        top.addWidget(copy)

        self._list = QWidget()
        self._list_layout = QVBoxLayout(self._list)
        self._list_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self._list)
        self.scroll = scroll
        self._follow_end = False  # a message was just added: keep the end of the list in view
        scroll.verticalScrollBar().rangeChanged.connect(self._to_end)
        scroll.verticalScrollBar().actionTriggered.connect(lambda _: setattr(self, "_follow_end", False))

        self.rendered = QPlainTextEdit()
        self.rendered.setObjectName("chat_rendered")
        self.rendered.setReadOnly(True)
        self.rendered.setToolTip("The exact text the model receives, coloured token by token")
        self.table = QTableWidget(0, 5)
        self.table.setObjectName("chat_counts")
        self.table.setHorizontalHeaderLabels(["#", "role", "tokens", "content", "template"])
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setToolTip("Tokens per message: in the sequence, of the content alone, and the "
                              "template's share (role markers, separators)")
        self.summary = QLabel("")
        self.summary.setObjectName("chat_summary")
        self.summary.setWordWrap(True)

        self.add_button = add
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(scroll)
        splitter.addWidget(self.rendered)
        splitter.addWidget(self.table)
        splitter.setSizes([300, 200, 160])
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.summary)

        for m in STARTER:
            self.add_message(m)
        add.clicked.connect(lambda: self.add_message(Message("user", ""), focus=True))
        copy.clicked.connect(self.copy_json)
        self.format_box.currentIndexChanged.connect(self.schedule)
        self.prompt_box.toggled.connect(self.schedule)
        state.tokenizer_changed.connect(self.schedule)
        state.dark_changed.connect(lambda _: self._show())
        state.token_colours_changed.connect(lambda _: self._show())
        self.schedule()

    # --- the conversation -------------------------------------------------------------------

    def messages(self) -> list[Message]:
        return [e.message() for e in self._editors]

    def set_messages(self, messages: list[Message]) -> None:
        for e in list(self._editors):
            self._remove(e, schedule=False)
        for m in messages:
            self.add_message(m)
        self.schedule()

    def add_message(self, message: Message, *, focus: bool = False) -> None:
        """Add a message after the last one and scroll it into view (`focus`: and type into it)."""
        editor = MessageEditor(message, self.schedule, self._remove)
        guard_wheel(editor)  # the wheel scrolls the list; a role changes only once clicked
        self._editors.append(editor)
        self._list_layout.insertWidget(self._list_layout.count() - 1, editor)
        # subtle: the list, and the scroll bar's range, grow only once the layout has run (in
        # steps, later): follow the end of the list as it grows, until the user scrolls
        self._follow_end = True
        self._to_end()
        if focus:
            editor.content.setFocus()
        self.schedule()

    def _to_end(self, *_) -> None:
        if self._follow_end:
            bar = self.scroll.verticalScrollBar()
            bar.setValue(bar.maximum())

    def _remove(self, editor: MessageEditor, schedule: bool = True) -> None:
        self._follow_end = False
        self._editors.remove(editor)
        editor.deleteLater()
        if schedule:
            self.schedule()

    # --- counting in the server ---------------------------------------------------------------

    def schedule(self, *_) -> None:
        self._stale = True
        if self.isVisible():  # a closed view does no work; it catches up when shown
            self._timer.start()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self._timer.start()

    @property
    def up_to_date(self) -> bool:
        """Nothing to count (for screenshots): hidden, or counted and no newer request."""
        return not self.isVisible() or (not self._stale and not self._timer.isActive() and self._done == self.generation)

    def recount(self) -> None:
        self._stale = False
        self.generation += 1
        gen, name = self.generation, self.state.tokenizer
        messages, fmt = self.messages(), self.format_box.currentData() or None
        prompt = self.prompt_box.isChecked()
        self.state.server.ask(CountChat(name, tuple(messages), fmt, prompt),
                              lambda count: self._on_count(gen, count),
                              lambda message: self._on_error(gen, name, message))

    def _on_count(self, gen: int, count: ChatCount) -> None:
        if gen == self.generation and isValid(self):
            self._done = gen
            self.count = count
            self._show()

    def _on_error(self, gen: int, name: str, message: str) -> None:
        if gen != self.generation or not isValid(self):
            return  # stale, or the view was closed with its window
        self._done = gen
        self.count = None
        self.rendered.setExtraSelections([])
        self.rendered.setPlainText("")
        self.table.setRowCount(0)
        self.summary.setText(f"⚠ {name}: {message}")

    def _show(self) -> None:
        count = self.count
        if count is None:
            return
        self.rendered.setPlainText(count.text)
        self.rendered.setExtraSelections(self._token_selections(count))
        self.table.setRowCount(len(count.parts))
        for row, p in enumerate(count.parts):
            cells = ["" if p.index < 0 else str(p.index), p.role or "(reply prompt)", str(p.tokens),
                     str(p.content_tokens), str(p.tokens - p.content_tokens)]
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col != 1:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, col, item)
        self.summary.setText(
            f"{count.total:,} tokens ({count.format}) · {count.overhead:,} of them the template's · "
            f"{count.total - count.overhead:,} in the messages' contents")

    def _token_selections(self, count: ChatCount) -> list:
        palette = TokenPalette(self.state.dark, self.state.token_colours)
        special, special_text = palette.special()
        enc = count.encoding
        colours = colour_indices(enc.id_array)
        prefix = astral_prefix(count.text)
        starts16, ends16 = enc.starts + prefix[enc.starts], enc.ends + prefix[enc.ends]
        selections = []
        for i, (s, t) in enumerate(zip(starts16.tolist(), ends16.tolist())):
            sel = QTextEdit.ExtraSelection()
            cursor = QTextCursor(self.rendered.document())
            cursor.setPosition(s)
            cursor.setPosition(t, QTextCursor.MoveMode.KeepAnchor)
            sel.cursor = cursor
            background = palette.background(int(colours[i]))
            if enc.flags[i] & TokenFlag.SPECIAL:
                # Two shades, so that special tokens in a row (<|end|><|start|>) stay apart.
                background = special if i % 2 else special.darker(125 if not self.state.dark else 80)
                sel.format.setForeground(special_text)
            if background is not None:
                sel.format.setBackground(background)
            selections.append(sel)
        return selections

    def copy_json(self) -> None:
        count = self.count
        data = {"messages": [{"role": m.role, "content": m.content} for m in self.messages()]}
        if count is not None:
            data.update(tokenizer=self.state.tokenizer, format=count.format, text=count.text,
                        ids=count.encoding.ids, total=count.total, overhead=count.overhead,
                        parts=[{"role": p.role or None, "tokens": p.tokens, "content_tokens": p.content_tokens}
                               for p in count.parts])
        QApplication.clipboard().setText(json.dumps(data, ensure_ascii=False, indent=1))

