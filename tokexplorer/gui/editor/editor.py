"""The editor: the window's token view that owns the text, takes it in, and keeps the tokenizing
server's copy of it in step.

Holds what makes the document the user's text: loading a file's text in slices (`load_text`,
responsive on 50 MB), what each line break stands for in the source (`core.positions.SourceMap`:
a file's own line endings, and soft breaks, which cut a line longer than LONG_LINE into pieces
that Qt lays out quickly and stand for nothing), pasting a long line as pieces, and the requests
to its tokenize service (`snapshot`, through `sync.TextSync`). The one way to read the user's text
is `user_text`: the source, without soft breaks, with the file's own line endings; training,
saving, autosave and the compare panes all read it (`display_text` is only what Qt holds).

Painting, hover, the keys that cross soft breaks and copying without them are the token view's
(`token_view.TokenView`), which the compare panes share. The window's tokens come from
`state.tokenized`; the hovered, caret and marked tokens it reports and shows are the window's.
"""

from __future__ import annotations

import numpy as np

from PySide6.QtCore import QEvent, QTimer, Signal
from PySide6.QtGui import QTextCursor

from tokexplorer.core.positions import EditorText, SourceMap, longest_line, soft_breaks, to_utf16, utf16_len
from tokexplorer.gui.editor.invisibles import BidiTally, InvisibleRoom
from tokexplorer.gui.editor.sync import SourceEdit, TextSync
from tokexplorer.gui.editor.token_view import WRAP_ANYWHERE_LINE, TokenView
from tokexplorer.gui.state import AppState
from tokexplorer.server.protocol import TextDelta

LOAD_SLICE = 1 << 16  # characters inserted per event-loop turn when loading a big text


class TokenEditor(TokenView):
    """The window's text: a token view that loads, edits and syncs it."""

    text_edited = Signal()  # the user changed the text (not emitted while a file loads)
    load_progress = Signal(int, int)  # characters inserted so far, total
    load_started = Signal()  # load_text goes in slices: the worker may tokenize the text meanwhile
    loaded = Signal()  # load_text finished

    def __init__(self, state: AppState, parent=None):
        super().__init__(state, parent, long_paste=self.paste_long_line)
        self.setObjectName("editor")
        self.setPlaceholderText("Type or paste text, or drop a file here, to see its tokens.")
        self._loading = False
        self._load_id = 0
        # The text given to load_text while nothing has edited it since: the snapshot sends it
        # instead of reading 50 MB back out of Qt in the UI thread.
        self._loaded_text: str | None = None
        self._as_loaded: str | None = None  # the last load's source text, until an edit (text_as_loaded)
        self._loaded_len16 = 0  # its length in UTF-16 units
        self._load_sent = False  # a snapshot taken during the current load gave the worker its text
        self._source = SourceMap()  # what the editor's line breaks stand for in the source
        self._sync = TextSync(self, self.source_map, self.user_text)
        # The last edit seen and the source's edit for it (position, removed, added, source edit),
        # for views sharing the document and its map.
        self.last_source_edit: tuple[int, int, int, SourceEdit | None] | None = None
        self._blocks = self.document().blockCount()  # after the last change seen
        self._redo_steps = 0  # the document's redo steps after the last change seen: more is an undo
        self._loaded_soft16: tuple[int, ...] = ()  # the loading text's soft breaks (TextDelta.soft16)
        self._soft_paste: list[int] = []  # where the paste being inserted has soft breaks (UTF-16)
        self.bidi_tally = BidiTally()  # the text's bidi controls, for the status bar's warning
        # Room in the layout for each invisible character's box, in this view and the compare
        # panes (they share the document and its layout).
        self.invisible_room = InvisibleRoom(self.document())
        self.document().contentsChange.connect(self._on_contents_change)
        self.unreadable_paste.connect(self._sync.resend)
        state.tokenized.connect(self.set_result)
        state.hovered_changed.connect(self.show_hovered)
        state.reveal_token.connect(self.show_token)
        state.marked_changed.connect(self.show_marked)
        self.hovered_token.connect(state.set_hovered)
        self.caret_token.connect(state.set_caret)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # the document's font follows the editor's
            self.invisible_room.refresh_all()

    # --- text in and out -----------------------------------------------------------------

    def source_map(self) -> SourceMap:
        """What the editor's line breaks stand for in the source (replaced by each load)."""
        return self._source

    def user_text(self) -> str:
        """The user's text: what is tokenized, trained on, saved and autosaved. The document's
        text with each line break standing for what the file held there (`positions.SourceMap`)
        and the soft breaks of long lines left out. As loaded, without a copy, while no edit has
        changed it; while a load goes in, the part in so far."""
        loaded = self.text_as_loaded()
        if loaded is not None:
            return loaded
        text = self.display_text()
        return text if self._source.identity else self._source.source(text)

    def text_as_loaded(self) -> str | None:
        """The source text the last load put in while no edit has changed it, else None: the
        very str the worker was given, so reading it copies nothing (reading 50 MB back out of
        Qt holds the window for a second)."""
        return None if self._loading else self._as_loaded

    @property
    def loading(self) -> bool:
        """Whether a text given to `load_text` is still going in (the editor is read-only meanwhile)."""
        return self._loading

    @property
    def load_sent(self) -> bool:
        """Whether the worker has had the whole text of the last load (asked for while it went
        in): the load's end then needs no request of its own."""
        return self._load_sent

    def load_text(self, text: str | EditorText) -> None:
        """Replace the whole text, clearing the undo history; emits `loaded` when done. An
        EditorText brings the source it stands for (a file's own line breaks).

        A big text goes in slices between events, so the window stays responsive and shows
        progress (a 50 MB text takes Qt about 10 s to take in, in one piece or many).
        """
        self._loading = True
        self._load_id += 1  # a load still running in slices stops at its next step
        load_id = self._load_id
        self.forget_tokens()
        self.state.replace_text()  # the counts shown until the new text's tokens come are not its
        self._sync.restart(None)
        self._load_sent = False
        if isinstance(text, EditorText):
            self._source = text.map or SourceMap(text.newline)
            self._loaded_text, self._loaded_len16 = text.source or text.text, text.length16
            self._as_loaded = self._loaded_text
            text = text.text
        else:
            self._source = SourceMap()
            self._loaded_text, self._loaded_len16 = text, utf16_len(text)
            self._as_loaded = text
        # The document fills up in slices, so the breaks before a position are counted in the text.
        breaks = np.flatnonzero(np.frombuffer(text.encode("utf-16-le", "surrogatepass"), dtype=np.uint16) == 10) \
            if self._source.newline != "\n" and "" in self._source.src else None
        self._loaded_soft16 = tuple(self._source.soft16(lambda p: int(np.searchsorted(breaks, p))).tolist())
        self.bidi_tally.reset()
        self.state.set_bidi_controls(())
        self.setReadOnly(True)
        doc = self.document()
        doc.setUndoRedoEnabled(False)
        anywhere = bool(self._loaded_soft16) or longest_line(text, WRAP_ANYWHERE_LINE) > 0
        if anywhere != self.wraps_anywhere():
            self.clear()  # subtle: else Qt lays the old text out again in the new mode
            self.set_wrap_anywhere(anywhere)  # before Qt lays the new text out
        if len(text) <= LOAD_SLICE:
            self.setPlainText(text)
            self.bidi_tally.extend(text, 0)
            self._finish_load()
            return
        self.clear()
        slices = iter(range(0, len(text), LOAD_SLICE))
        self.load_started.emit()

        def step() -> None:
            if load_id != self._load_id:
                return
            start = next(slices, None)
            if start is None:
                self._finish_load()
                return
            cursor = QTextCursor(doc)
            cursor.movePosition(QTextCursor.MoveOperation.End)
            self.bidi_tally.extend(text[start:start + LOAD_SLICE], cursor.position())
            cursor.insertText(text[start:start + LOAD_SLICE])
            self.load_progress.emit(min(start + LOAD_SLICE, len(text)), len(text))
            QTimer.singleShot(0, self, step)  # with the editor as context: none after it is gone

        step()

    def _finish_load(self) -> None:
        doc = self.document()
        doc.setUndoRedoEnabled(True)
        doc.setModified(False)
        self.setReadOnly(False)
        self._blocks = doc.blockCount()
        self._redo_steps = 0
        self.moveCursor(QTextCursor.MoveOperation.Start)
        self._loading = False
        self.state.set_bidi_controls(self.bidi_tally.controls())
        if self._load_sent:  # the worker's copy holds it: later snapshots send edits only
            self._loaded_text = None
        self.loaded.emit()

    def snapshot(self, full: bool = False) -> TextDelta:
        """What changed since the previous snapshot (`sync.TextSync.snapshot`); while a text goes
        in, all of it."""
        if self._loading:
            # subtle: Qt is still taking the text in slices; the worker gets all of it (and
            # tokenizes meanwhile) with the whole text's length, so its copy is in step when
            # the load ends and the next request brings no edits.
            self._sync.restart([])
            self._load_sent = True
            return TextDelta(self._loaded_text, None, self.edit_count, self._loaded_len16,
                             soft16=self._loaded_soft16)
        loaded, self._loaded_text = self._loaded_text, None
        return self._sync.snapshot(full, loaded)

    # --- edits ---------------------------------------------------------------------------

    def _on_contents_change(self, position: int, removed: int, added: int) -> None:
        if self._loading or (removed == 0 and added == 0):
            return
        self.note_edit(position, removed, added)
        self._loaded_text = self._as_loaded = None
        doc = self.document()
        redo_steps, self._redo_steps = self._redo_steps, doc.availableRedoSteps()
        source_edit = None
        if self._source.tracking or self._soft_paste:  # where the edit falls in the source, and what it spells
            inserted = self.text16(position, position + added).replace("\u2029", "\n")
            end = position + added
            following = "" if end >= doc.characterCount() - 1 else doc.characterAt(end).replace("\u2029", "\n")
            source_edit = self._source.follow(
                position, removed, inserted, breaks_before=doc.findBlock(position).blockNumber(),
                removed_breaks=self._blocks - doc.blockCount() + inserted.count("\n"), following=following,
                # an undo adds a step to redo, a redo takes one (a new edit after an undo clears them)
                undo=self._redo_steps != redo_steps, soft=[p - position for p in self._soft_paste])
            if source_edit is None:  # cannot tell: send it all
                self._sync.resend()
        self.last_source_edit = (position, removed, added, source_edit)
        if self.bidi_tally.edit(position, removed, added, self.text16(position, position + added) if added else ""):
            self.state.set_bidi_controls(self.bidi_tally.controls())
        self._blocks = doc.blockCount()
        if added > WRAP_ANYWHERE_LINE // 2 and not self.wraps_anywhere():  # a long line pasted
            block, end = doc.findBlock(position), doc.findBlock(position + added)
            while block.isValid() and block.length() <= WRAP_ANYWHERE_LINE and block != end:
                block = block.next()
            if block.isValid() and block.length() > WRAP_ANYWHERE_LINE:
                self.set_wrap_anywhere(True)
        self._sync.edited(position, removed, added, source_edit)
        self.text_edited.emit()

    def paste_long_line(self, text: str, cursor: QTextCursor) -> None:
        """Paste a text with a line longer than LONG_LINE as pieces at `cursor` (on this editor's
        document, from any view on it), as a file's is loaded: the soft breaks between them stand
        for nothing (`positions.SourceMap.follow`'s `soft`), and lines wrap anywhere."""
        cuts = soft_breaks(text)
        shown = "\n".join(text[a:b] for a, b in zip([0] + cuts, cuts + [len(text)]))
        start = cursor.selectionStart()
        self._soft_paste = (start + to_utf16(text, np.array(cuts, dtype=np.int64)) + np.arange(len(cuts))).tolist()
        self.set_wrap_anywhere(True)
        try:
            cursor.insertText(shown)
        finally:
            self._soft_paste = []
