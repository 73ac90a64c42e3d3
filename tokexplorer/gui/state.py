"""The one state object the window's panels observe.

Panels read from `AppState` and connect its signals to their own slots; they never call each other.
Whoever changes the state (menus, the picker, the worker's answers) does it through its setters,
which emit only when the value really changed.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from ..core.tokenizer import DisallowedSpecialError
from .catalog import TokenizerCatalog
from .tokenized import Tokenized


MIN_FONT_SIZE, MAX_FONT_SIZE = 6, 72  # points: zooming stops here


class AppState(QObject):
    tokenizer_changed = Signal(str)
    tokenizers_changed = Signal()  # the catalog gained a tokenizer
    policy_changed = Signal(str)
    tokenized = Signal(object)  # Tokenized, or None when the text has no valid tokenization
    refusal_changed = Signal(object)  # DisallowedSpecialError, or None
    busy_changed = Signal(str)  # "" when idle
    hovered_changed = Signal(int)  # token index, -1 for none
    reveal_token = Signal(int)  # a view asks the editor to scroll to this token
    hovered_span_changed = Signal(int, int)  # a code-point range shown in the text (a chunk), or -1, -1
    show_whitespace_changed = Signal(bool)
    dark_changed = Signal(bool)
    font_changed = Signal()  # the editor's font: monospace or not, size
    document_changed = Signal()  # path, modified flag or notes changed

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.catalog = TokenizerCatalog()
        self.tokenizer = self.catalog.names()[0]
        self.policy = "refuse"
        self.result: Tokenized | None = None
        self.refusal: DisallowedSpecialError | None = None
        self.busy = ""
        self.hovered = -1
        self.show_whitespace = False
        self.dark = False
        self.monospace = False
        self.font_size = 0  # points; 0: the application's default size
        self.path: Path | None = None
        self.newline = "\n"  # line ending written back on save
        self.modified = False
        self.notes: tuple[str, ...] = ()  # what editor_text had to change in the opened file

    def set_tokenizer(self, name: str) -> None:
        if name != self.tokenizer:
            self.tokenizer = name
            self.tokenizer_changed.emit(name)

    def add_tokenizer_file(self, path) -> str:
        name = self.catalog.add_file(path)
        self.tokenizers_changed.emit()
        return name

    def add_tokenizer(self, tok) -> str:
        """Offer a tokenizer held in memory (trained in the window); returns its name in the picker."""
        name = self.catalog.add_tokenizer(tok)
        self.tokenizers_changed.emit()
        return name

    def set_policy(self, policy: str) -> None:
        if policy != self.policy:
            self.policy = policy
            self.policy_changed.emit(policy)

    def set_result(self, result: Tokenized | None) -> None:
        self.result = result
        self.hovered = -1
        self.tokenized.emit(result)
        if result is not None:
            self.set_refusal(None)

    def set_refusal(self, refusal: DisallowedSpecialError | None) -> None:
        if refusal is not self.refusal:
            self.refusal = refusal
            if refusal is not None:
                self.set_result(None)  # first, so views show the refusal last
            self.refusal_changed.emit(refusal)

    def set_busy(self, busy: str) -> None:
        if busy != self.busy:
            self.busy = busy
            self.busy_changed.emit(busy)

    def set_hovered(self, index: int) -> None:
        if index != self.hovered:
            self.hovered = index
            self.hovered_changed.emit(index)

    def set_hovered_span(self, start: int, end: int) -> None:
        self.hovered_span_changed.emit(start, end)

    def set_show_whitespace(self, on: bool) -> None:
        if on != self.show_whitespace:
            self.show_whitespace = on
            self.show_whitespace_changed.emit(on)

    def set_dark(self, dark: bool) -> None:
        if dark != self.dark:
            self.dark = dark
            self.dark_changed.emit(dark)

    def set_font(self, *, monospace: bool | None = None, size: int | None = None) -> None:
        monospace = self.monospace if monospace is None else monospace
        if size is None:
            size = self.font_size
        elif size:  # 0 stays 0: the default size
            size = max(MIN_FONT_SIZE, min(size, MAX_FONT_SIZE))
        if (monospace, size) != (self.monospace, self.font_size):
            self.monospace, self.font_size = monospace, size
            self.font_changed.emit()

    def set_document(self, path: Path | None, *, newline: str = "\n", notes: tuple[str, ...] = (),
                     modified: bool = False) -> None:
        self.path, self.newline, self.notes, self.modified = path, newline, notes, modified
        self.document_changed.emit()

    def set_modified(self, modified: bool) -> None:
        if modified != self.modified:
            self.modified = modified
            self.document_changed.emit()
