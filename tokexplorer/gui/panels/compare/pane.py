"""A compare pane: a token view on the window editor's document that shows another tokenizer's tokens.

Holds the pane's view (`editor.token_view.TokenView`, shared with the editor), its request to its
own tokenize service (`editor.sync.TextSync`: the same text as the editor's, the file's own line
breaks and without soft breaks, read through `TokenEditor.user_text`) and what hovering it means.
Typing in a pane edits the shared document, so every pane and the editor see the edit.

The window's hovered token index, caret, marked token and "reveal token" requests refer to the
editor's tokens, so a pane neither follows nor sets them; hovering a pane announces the hovered
token's code-point span instead, which every view (the editor included) marks with its own tokens.

Does not hold the header above it, the marks of boundaries that other panes lack, or the keeping
of scrolling and the caret in step: those are the compare view's (`view`).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal

from tokexplorer.core.analysis.compare import covered_span
from tokexplorer.gui.editor.editor import TokenEditor
from tokexplorer.gui.editor.sync import TextSync
from tokexplorer.gui.editor.token_view import TokenView
from tokexplorer.gui.state import AppState
from tokexplorer.server.protocol import TextDelta


class ComparePane(QObject):
    """One pane after the first: its token view (`view`, the widget shown) and its requests."""

    edited = Signal()  # the text was edited while the pane follows it: ask for its tokens

    def __init__(self, state: AppState, editor: TokenEditor):
        view = TokenView(state, document=editor.document(), source_map=editor.source_map,
                         long_paste=editor.paste_long_line)
        super().__init__(view)  # lives as long as its view
        self.view = view
        self.state = state
        self._editor = editor
        view.setObjectName("compare_pane")
        view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # lines wrap
        view.follow_font()
        # subtle: a pane tokenizes the same text as the window's editor, a file's own line breaks
        # ("\r\n"...) included, or the panes could not be compared.
        self._sync = TextSync(view, editor.source_map, editor.user_text)
        self._hover = (-1, -1)
        self.following = False  # shown in the compare view: tokenize the text as it is edited
        # subtle: connected after the editor's own slot, so the editor has followed each edit in
        # its source map (`last_source_edit`) when this pane's slot runs.
        editor.document().contentsChange.connect(self._on_contents_change)
        view.unreadable_paste.connect(self._sync.resend)
        view.hovered_token.connect(self._on_hovered_token)

    def snapshot(self, full: bool = False) -> TextDelta:
        """The pane's next request to its service (`TextSync.snapshot`)."""
        return self._sync.snapshot(full)

    def _on_contents_change(self, position: int, removed: int, added: int) -> None:
        # Not shown (editor mode), or the window's editor loading a text in slices: no bookkeeping
        # per change; the pane takes the whole text when it is shown or the load has ended.
        if not self.following or self._editor.loading:
            self._sync.resend()
            return
        if removed == 0 and added == 0:
            return
        self.view.note_edit(position, removed, added)
        source_edit = None
        if self._editor.source_map().tracking:
            # The source's edit the editor found for this same edit, without following it twice.
            last = self._editor.last_source_edit
            if last is not None and last[:3] == (position, removed, added):
                source_edit = last[3]
            if source_edit is None:  # the editor did not see this edit: send it all
                self._sync.resend()
        self._sync.edited(position, removed, added, source_edit)
        self.edited.emit()

    def _on_hovered_token(self, index: int) -> None:
        result = self.view.result
        span = None if index < 0 or result is None else covered_span(result.encoding, range(index, index + 1))
        span = span or (-1, -1)
        if span != self._hover:
            self._hover = span
            self.state.set_hovered_span(*span)
