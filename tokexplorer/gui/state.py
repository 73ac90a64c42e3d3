"""The one state object the window's panels observe.

Panels read from `AppState` and connect its signals to their own slots; they never call each other.
Whoever changes the state (menus, the picker, the worker's answers) does it through its setters,
which emit only when the value really changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, Signal

from tokexplorer.core.registry import DEFAULT_TOKENIZER
from tokexplorer.core.tokenizer import DisallowedSpecialError
from tokexplorer.server.protocol import AddTrained, Describe, OpenTokenizerFile, TokenizerInfo
from tokexplorer.server.catalog import TokenizerCatalog
from tokexplorer.gui.widgets.colours import DEFAULT_SCHEME, SCHEMES
from tokexplorer.server.tokenized import Tokenized

if TYPE_CHECKING:
    from tokexplorer.gui.services.server_link import ServerLink


MIN_FONT_SIZE, MAX_FONT_SIZE = 6, 72  # points: zooming stops here


class AppState(QObject):
    tokenizer_changed = Signal(str)
    tokenizers_changed = Signal()  # the catalog gained a tokenizer
    policy_changed = Signal(str)  # the effective policy (the document's own, else the global one)
    tokenized = Signal(object)  # Tokenized, or None when the text has no valid tokenization
    refusal_changed = Signal(object)  # DisallowedSpecialError (the result is plain text), or None
    busy_changed = Signal(str)  # "" when idle
    hovered_changed = Signal(int)  # token index, -1 for none
    reveal_token = Signal(int)  # a view asks the editor to scroll to this token
    hovered_span_changed = Signal(int, int)  # a code-point range shown in the text (a chunk), or -1, -1
    # The editor's selection in code points of the result's text; start == end: the caret.
    selection_changed = Signal(int, int)
    show_whitespace_changed = Signal(bool)
    dark_changed = Signal(bool)
    token_colours_changed = Signal(str)  # the colour scheme's name (colours.SCHEMES)
    font_changed = Signal()  # the editor's font: monospace or not, size
    document_changed = Signal()  # path, modified flag or notes changed
    # The explorer panels (merge tree, vocabulary, trace):
    caret_changed = Signal(int)  # index of the token at the caret (in `result`; core.analysis.caret), -1 for none
    bidi_controls_changed = Signal(object)  # tuple of the bidi controls (code points) the editor's text holds
    text_replaced = Signal()  # the editor takes in a new text: `result` is the old text's until its own comes
    token_chosen = Signal(int)  # a token id picked in a panel (the vocabulary) to explain
    marked_changed = Signal(int)  # token id whose occurrences the editor marks, -1 for none
    training_curve = Signal(object)  # core.sweep.CompressionCurve.snapshot() of a training run, again as it grows

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.catalog = TokenizerCatalog()
        self.server: ServerLink | None = None  # the tokenizing server (the main window starts it)
        self.doc = 0  # the editor's document number on the server
        self.tokenizer = DEFAULT_TOKENIZER
        self.policy = "refuse"  # the global special-token policy, kept in the settings
        self.document_policy: str | None = None  # this document's own, chosen from the banner
        self.result: Tokenized | None = None
        self.refusal: DisallowedSpecialError | None = None
        self.busy = ""
        self.hovered = -1
        self.selection = (0, 0)
        self.show_whitespace = False
        self.dark = False
        self.token_colours = DEFAULT_SCHEME
        self.monospace = False
        self.font_size = 0  # points; 0: the application's default size
        self.path: Path | None = None
        self.newline = "\n"  # line ending written back on save
        self.modified = False
        self.notes: tuple[str, ...] = ()  # what editor_text had to change in the opened file
        self.caret = -1
        self.bidi_controls: tuple[int, ...] = ()  # in the text's order
        self._caret_of: Tokenized | None = None  # the result `caret` indexes
        self.marked = -1
        self.last_training_curve = None  # the last `training_curve`, for a view made after it came
        self.training_curve.connect(lambda curve: setattr(self, "last_training_curve", curve))

    def set_tokenizer(self, name: str) -> None:
        if name != self.tokenizer:
            self.tokenizer = name
            self.tokenizer_changed.emit(name)

    def add_tokenizer_file(self, path, on_done: Callable[[str], None] | None = None,
                           on_error: Callable[[str], None] | None = None) -> str:
        """Offer a tokenizer file; returns its name in the picker. The server reads it now: then
        `on_done(name)`, or for a bad file `on_error(message)` (the file is taken out of the
        picker again). Without `on_error`, a bad file fails the first text tokenized with it."""
        name = self.catalog.add_file(path)
        request = OpenTokenizerFile(name, str(path))
        self.server.remember(request)

        def opened(info: TokenizerInfo) -> None:
            self.catalog.loaded(name, info)
            self.tokenizers_changed.emit()
            if on_done is not None:
                on_done(name)

        def failed(message: str) -> None:
            if on_error is not None:
                self.catalog.remove(path)
                on_error(message)

        self.server.ask(request, opened, failed)
        self.tokenizers_changed.emit()
        return name

    def add_trained(self, base: str, trained, on_done: Callable[[TokenizerInfo], None] | None = None,
                    on_error: Callable[[str], None] | None = None) -> str:
        """Offer a tokenizer trained in the window (`protocol.TrainedBpe` or
        `TrainedSentencePiece`) under `base`, made unique; returns its name in the picker.
        `on_done(info)` once the server has built it."""
        name = self.catalog.add_trained(base)
        request = AddTrained(name, trained)
        self.server.remember(request)

        def added(info: TokenizerInfo) -> None:
            self.catalog.loaded(name, info)
            if on_done is not None:
                on_done(info)

        def failed(message: str) -> None:
            self.catalog.remove_name(name)
            self.tokenizers_changed.emit()
            if on_error is not None:
                on_error(message)

        self.server.ask(request, added, failed)
        self.tokenizers_changed.emit()
        return name

    def describe(self, name: str, on_info: Callable[[TokenizerInfo], None] | None = None) -> None:
        """Ask the server what `name` is (loading it); the catalog keeps the answer."""
        def described(info: TokenizerInfo) -> None:
            self.catalog.loaded(name, info)
            if on_info is not None:
                on_info(info)

        self.server.ask(Describe(name), described, lambda message: None)

    @property
    def effective_policy(self) -> str:
        """The policy the text is tokenized with: this document's own, else the global one."""
        return self.document_policy or self.policy

    def set_policy(self, policy: str) -> None:
        """The global policy (the tool bar's); it replaces the document's own."""
        before = self.effective_policy
        self.policy, self.document_policy = policy, None
        if self.effective_policy != before:
            self.policy_changed.emit(self.effective_policy)

    def set_document_policy(self, policy: str | None) -> None:
        """A policy for the current document only (None: back to the global one)."""
        before = self.effective_policy
        self.document_policy = policy
        if self.effective_policy != before:
            self.policy_changed.emit(self.effective_policy)

    def set_result(self, result: Tokenized | None) -> None:
        self.result = result
        self.hovered = -1
        self.tokenized.emit(result)
        if result is not None:
            self.set_refusal(result.refusal)

    def set_refusal(self, refusal: DisallowedSpecialError | None) -> None:
        """Text spells a special token the policy refuses (None: no longer); the result, if any,
        is the text encoded as plain text."""
        if refusal is None and self.refusal is None:
            return
        if (refusal is not None and self.refusal is not None and
                (refusal.token, refusal.position) == (self.refusal.token, self.refusal.position)):
            return
        self.refusal = refusal
        self.refusal_changed.emit(refusal)

    def set_busy(self, busy: str) -> None:
        if busy != self.busy:
            self.busy = busy
            self.busy_changed.emit(busy)

    def set_hovered(self, index: int) -> None:
        if index != self.hovered:
            self.hovered = index
            self.hovered_changed.emit(index)

    def set_selection(self, start: int, end: int) -> None:
        if (start, end) != self.selection:
            self.selection = (start, end)
            self.selection_changed.emit(start, end)

    def set_hovered_span(self, start: int, end: int) -> None:
        self.hovered_span_changed.emit(start, end)

    def set_caret(self, index: int) -> None:
        """The token at the caret (`core.analysis.caret.token_at_caret`'s rule); announced again
        when a new result moved tokens under it."""
        if (index, self.result) != (self.caret, self._caret_of):
            self.caret, self._caret_of = index, self.result
            self.caret_changed.emit(index)

    def replace_text(self) -> None:
        self.text_replaced.emit()

    def set_bidi_controls(self, codes: tuple[int, ...]) -> None:
        if codes != self.bidi_controls:
            self.bidi_controls = codes
            self.bidi_controls_changed.emit(codes)

    def choose_token(self, token_id: int) -> None:
        self.token_chosen.emit(token_id)

    def set_marked(self, token_id: int) -> None:
        if token_id != self.marked:
            self.marked = token_id
            self.marked_changed.emit(token_id)

    def set_show_whitespace(self, on: bool) -> None:
        if on != self.show_whitespace:
            self.show_whitespace = on
            self.show_whitespace_changed.emit(on)

    def set_dark(self, dark: bool) -> None:
        if dark != self.dark:
            self.dark = dark
            self.dark_changed.emit(dark)

    def set_token_colours(self, scheme: str) -> None:
        if scheme in SCHEMES and scheme != self.token_colours:
            self.token_colours = scheme
            self.token_colours_changed.emit(scheme)

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
