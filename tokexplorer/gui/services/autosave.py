"""Autosave of the unsaved text, and the offer to restore it after an abnormal exit.

While the editor's text is modified and not saved, `Autosave` writes it (as it would be saved: the
file's own line endings), with its path, what that file was on disk when the text was read or
saved (`Documents.disk_record`: Save after a restore asks when the file changed since), its line
ending, tokenizer and document policy, to this
instance's recovery file in the `recovery` folder beside the settings (core/recovery.py), DEBOUNCE_MS
after the last edit or tokenizer/policy change (and every MAX_WAIT_MS at least while typing never
pauses that long). The text is not read out of the editor (Qt's
document gives it only on the UI thread, ~20 ms per MB): it is the text the tokenize worker has
just encoded (`Tokenized.encoding.text`), taken once its result covers every edit (`mark`); while
the worker is still at it, the write waits for its answer. Only when there is no such text (the
tokenizer failed) is it read from the editor. Encoding, writing (atomic, fsync'd) and removing
happen in one background thread, in the order they were asked, so a late write can never bring
back a file that a save removed (measured: `python -m tokexplorer.gui.bench.autosave FILE`). The
file goes when the text is saved, replaced (a discarded change), or the window closes cleanly; a
crash or a kill leaves it, and the next start offers it back (`recover`), through
`Dialogs.ask_restore`.

Tokenizers the user cannot get back from a file of their own are kept too, beside the text, in the
session's `.tokenizers` folder, and come back into the picker with it: one trained in the window
(held only in the tokenizing server's memory) is written there by the server (`SaveTokenizer`,
minbpe's PREFIX.model and .vocab, or SentencePiece's; once per tokenizer, since a trained one never
changes under its name; the text's file is written at once and again when it is there), and one
whose file lives in the system's temporary folder is copied. A trained tokenizer that no such
format keeps whole (a pattern minbpe's file cannot hold) is left out.

It does not keep an undo history, the selection or the views' state, and keeps only the newest text
of each crashed instance.

Test hook: TOKEXPLORER_AUTOSAVE_MS sets the debounce in milliseconds (the crash test uses 50).

It runs a little past 400 lines: the writer, the restore question and the adoption of a crashed
instance's files share one lock and one folder's rules.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from tokexplorer.core.files import recovery
from tokexplorer.core.files.recovery import Lock, Recovered, Session
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.positions import editor_text
from tokexplorer.server.protocol import SaveTokenizer

DEBOUNCE_MS = 2000
MAX_WAIT_MS = 30_000  # typing that never pauses for DEBOUNCE_MS is still saved this often
ENV_DEBOUNCE = "TOKEXPLORER_AUTOSAVE_MS"


def debounce_ms() -> int:
    try:
        return max(0, int(os.environ.get(ENV_DEBOUNCE, DEBOUNCE_MS)))
    except ValueError:
        return DEBOUNCE_MS


def in_temp_folder(path: Path) -> bool:
    """A file that may be gone next time: it lives in the system's temporary folder."""
    try:
        return path.resolve().is_relative_to(Path(tempfile.gettempdir()).resolve())
    except OSError:
        return False


class Autosave(QObject):
    """Keeps the unsaved text of one window in a recovery file, and offers others' back."""

    written = Signal(str)  # the recovery file, after a write ("" after a removal)
    failed = Signal(str)  # a write that did not happen: the reason

    def __init__(self, state, editor, service, dialogs, banner, folder: Path, *, documents=None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.state, self.editor, self.service = state, editor, service
        self.dialogs, self.banner = dialogs, banner
        self.documents = documents  # gui/services/documents.py: the file's note on disk, both ways
        self.folder = Path(folder)
        self.session: Session | None = None
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="autosave")
        self._writer.submit(lambda: None)  # its one thread starts now, not in the middle of a session
        self._failing = False  # a write failed and the user was told; quiet until one works
        self._restoring = False  # a restored text is loading: its file stays
        self._waiting = False  # a write waits for the worker's copy of the text
        self._closed = False
        self._after: list[Callable[[], None]] = []  # what waits for a restored text to be in
        self._pending_since: float | None = None  # time.monotonic() of the first change not written
        # Trained tokenizers the server wrote into the session's .tokenizers folder: picker name ->
        # file name there, or None when no format keeps it whole; `_writing`: asked, not answered.
        self._trained_files: dict[str, str | None] = {}
        self._writing: set[str] = set()
        self._epoch = 0  # counts removals of that folder: an answer from before one is stale
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms())
        self._timer.timeout.connect(self.save_now)
        editor.text_edited.connect(self._schedule)
        state.document_changed.connect(self._on_document)
        state.tokenizer_changed.connect(self._on_settings)
        state.policy_changed.connect(self._on_settings)
        # subtle: the service says "" (idle) just before it hands its result to the state; look
        # once that is done.
        service.busy.connect(lambda what: what == "" and self._waiting and QTimer.singleShot(0, self._retry))
        self.failed.connect(self._on_failed)
        self.written.connect(self._on_written)

    # --- this instance's file -----------------------------------------------------------------

    def _claim(self) -> Session | None:
        if self.session is None:
            try:
                self.session = Session.claim(self.folder)
            except OSError as exc:
                self._on_failed(f"cannot use {self.folder}: {exc.strerror or exc}")
        return self.session

    def _on_document(self) -> None:
        if self._restoring:
            return
        if self.state.modified:
            self._schedule()
        else:  # saved, replaced by another text, or undone back to the saved one
            self._timer.stop()
            self._forget_trained()
            self._submit(self._remove)

    def _on_settings(self, *_) -> None:
        if self.state.modified:
            self._schedule()

    def _schedule(self) -> None:
        """A change: write DEBOUNCE_MS after the last one, or now if MAX_WAIT_MS have gone by."""
        now = time.monotonic()
        if self._pending_since is None:
            self._pending_since = now
        if (now - self._pending_since) * 1000 >= MAX_WAIT_MS:
            self.save_now()
        else:
            self._timer.start()

    def save_now(self) -> None:
        """Write the recovery file now (the debounce timer calls this)."""
        self._timer.stop()
        self._waiting, self._pending_since = False, None
        if self._closed or not self.state.modified or self.editor.isReadOnly() or self._claim() is None:
            return
        text = self._current_text()
        if text is None:
            self._waiting = True
            return
        picked = self.state.catalog.path_of(self.state.tokenizer)  # a user's tokenizer file, to open again
        rec = Recovered(text=text,
                        path=str(self.state.path.absolute()) if self.state.path is not None else None,
                        disk=self.documents.disk_record() if self.documents is not None else None,
                        newline=self.state.newline, tokenizer=self.state.tokenizer,
                        document_policy=self.state.document_policy, saved_at=time.time(), pid=os.getpid(),
                        extra={"tokenizer_path": str(picked.absolute())} if picked is not None else {})
        copies, stored = self._tokenizers()
        self._submit(lambda: self._write(rec, copies, stored))

    def _retry(self) -> None:
        if self._waiting:
            self.save_now()

    def _current_text(self) -> str | None:
        """The text as it would be saved; None while the worker has not caught up with it."""
        result = self.state.result
        if not self.service.idle:
            return None
        if result is not None and result.mark == self.editor.edit_count:
            return result.encoding.text
        return self.editor.user_text()  # nothing tokenized it (a failure): read it here

    def _tokenizers(self) -> tuple[list[tuple[str, Path]], dict[str, str]]:
        """The catalog's tokenizers that would be gone after a crash: (picker name, file) of those
        whose file is in the temporary folder, to copy; and picker name -> file name of those
        trained in the window that the server has written into the session's folder (the others
        are asked for now, and the text written again once they are there)."""
        catalog, copies, stored = self.state.catalog, [], {}
        for name in catalog.names():
            if catalog.is_builtin(name):
                continue
            path = catalog.path_of(name)
            if catalog.is_trained(name):
                if self._trained_files.get(name):
                    stored[name] = self._trained_files[name]
                elif name not in self._trained_files and name not in self._writing:
                    self._keep_trained(name)
            elif path is not None and in_temp_folder(path):
                copies.append((name, path))
        return copies, stored

    def _keep_trained(self, name: str) -> None:
        """Ask the server to write a trained tokenizer into the session's .tokenizers folder."""
        info = self.state.catalog.info(name)
        if info is None or self.state.server is None:
            return  # not built yet: the next write asks
        store = self.session.folder / f"{self.session.id}.tokenizers"
        try:
            store.mkdir(mode=0o700, exist_ok=True)
        except OSError as exc:
            self.failed.emit(exc.strerror or str(exc))
            return
        epoch = self._epoch
        self._writing.add(name)

        def written(paths: tuple[str, ...]) -> None:
            if epoch != self._epoch:
                return  # the folder was removed meanwhile (the text was saved): asked again if needed
            self._writing.discard(name)
            model = next((Path(p).name for p in paths if p.endswith(".model")), None)
            self._trained_files[name] = model
            if model is not None and self.state.modified:
                self.save_now()  # the recovery file names it now

        def failed(message: str) -> None:
            if epoch != self._epoch:
                return
            self._writing.discard(name)
            if store.is_dir():  # else the folder went (a save): try again next time
                self._trained_files[name] = None  # no format keeps it whole

        fmt = info.save_formats[0]  # the format that keeps it whole
        target = store / (re.sub(r"[^\w.+-]", "_", name) + ".model")
        self.state.server.ask(SaveTokenizer(name, str(target), fmt), written, failed)

    def _forget_trained(self) -> None:
        """The session's .tokenizers folder is about to be removed: what the server wrote is gone."""
        self._epoch += 1
        self._trained_files.clear()
        self._writing.clear()

    def _write(self, rec: Recovered, copies: list[tuple[str, Path]], stored: dict[str, str]) -> None:
        session = self.session
        store = session.folder / f"{session.id}.tokenizers"
        # picker name -> file name in the session's .tokenizers folder
        kept = {name: file for name, file in stored.items() if (store / file).is_file()}
        if copies:
            store.mkdir(mode=0o700, exist_ok=True)
            for name, source in copies:
                copy = store / source.name
                if not copy.exists() or copy.stat().st_mtime < source.stat().st_mtime:
                    shutil.copy2(source, copy)
                kept[name] = copy.name
        if rec.tokenizer in kept:
            rec = dataclasses.replace(rec, tokenizer_file=kept[rec.tokenizer])
        session.write(dataclasses.replace(rec, extra={**rec.extra, "tokenizers": kept}))
        self.written.emit(str(session.recovery_path))

    def _remove(self) -> None:
        if self.session is not None:
            self.session.clear()
            shutil.rmtree(self.session.folder / f"{self.session.id}.tokenizers", ignore_errors=True)
            self.written.emit("")

    def _submit(self, job: Callable[[], None]) -> None:
        if self._closed:
            return  # the window has closed: nothing more to keep

        def run() -> None:
            try:
                job()
            except (OSError, TokexplorerError) as exc:
                self.failed.emit(getattr(exc, "strerror", None) or str(exc))
        self._writer.submit(run)

    def _on_failed(self, reason: str) -> None:
        if not self._failing:
            self._failing = True
            self.banner.show_message("note", f"Autosave is not working ({reason}): save your text "
                                             "yourself, or it is lost if tokexplorer stops unexpectedly.")

    def _on_written(self, path: str) -> None:
        self._failing = False

    def close(self) -> None:
        """A clean exit: finish pending writes, then remove this instance's files (kept while a
        restored text is still loading: it is offered again at the next start)."""
        self._timer.stop()
        self._closed = True
        self._forget_trained()
        self._writer.shutdown(wait=True)
        if self.session is not None:
            if not self._restoring:
                shutil.rmtree(self.session.folder / f"{self.session.id}.tokenizers", ignore_errors=True)
            self.session.release(remove=not self._restoring)
            self.session = None

    def flush(self, timeout_s: float = 10.0) -> None:
        """Wait until every write asked for so far is done (for tests and the benchmark)."""
        self._writer.submit(lambda: None).result(timeout_s)

    # --- texts left by instances that are gone ------------------------------------------------

    def recover(self) -> bool:
        """Offer back the newest text that an instance left behind; True when one was restored.
        A file that cannot be read is kept, and said once in the banner."""
        if not self.folder.is_dir():
            return False
        own = self.session.id if self.session is not None else None
        found = recovery.orphans(self.folder, own=own)
        restored = False
        try:
            while found and not restored:
                orphan = found.pop(0)
                try:
                    data = orphan.read()  # never through a link (core/files/recovery.py)
                    rec = recovery.load(data, source=str(orphan.recovery_path))
                except (OSError, TokexplorerError) as exc:
                    self.banner.show_message("note", f"An unsaved text from an earlier run could not be "
                                                     f"read and is kept where it is: {exc}")
                    orphan.release(remove=False)
                    continue
                # The recorded path in full: the file a later Save may write (documents.py asks
                # where to save one the user did not open or save here).
                answer = self.dialogs.ask_restore(rec.path or "Untitled", recovery.describe_time(rec.saved_at),
                                                  len(rec.text))
                if answer == "restore":
                    try:
                        restored = self._restore(rec, orphan, data)
                    except OSError as exc:  # the file stays for the next start
                        orphan.release(remove=False)
                        self.banner.show_message("note", f"The unsaved text could not be restored "
                                                         f"({exc.strerror or exc}); it is kept in {self.folder}.")
                        continue
                elif answer == "discard":
                    shutil.rmtree(orphan.folder / f"{orphan.id}.tokenizers", ignore_errors=True)
                    orphan.release(remove=True)
                else:  # "later": kept for the next start
                    orphan.release(remove=False)
        finally:
            for orphan in found:
                orphan.release(remove=False)
        return restored

    def after_restore(self, then: Callable[[], None]) -> None:
        """Call `then` once a restored text is in the editor and marked unsaved (at once when none
        is loading): opening a file then asks whether to save it first."""
        if self._restoring:
            self._after.append(then)
        else:
            then()

    def _restore(self, rec: Recovered, orphan: Lock, data: bytes) -> bool:
        """Put the text back as unsaved, with its path, tokenizer and policy; the recovery file
        becomes this instance's own, so it is never missing while the text is not saved. False
        when this instance cannot keep a recovery file (said in the banner): the file stays."""
        session = self._claim()
        if session is None:
            orphan.release(remove=False)
            return False
        kept = orphan.folder / f"{orphan.id}.tokenizers"
        ours = session.folder / f"{session.id}.tokenizers"
        # subtle: from here on the state says "a new document" (set_document below), which
        # otherwise removes this instance's files, the tokenizers just moved in among them, while
        # the worker still has to open them.
        self._restoring = True
        try:
            if kept.is_dir() and not kept.is_symlink():
                os.replace(kept, ours)
                for entry in ours.iterdir():  # only regular files come along: no link is written through
                    if entry.is_symlink() or not (entry.is_file() or entry.is_dir()):
                        entry.unlink()
                    elif entry.is_dir():
                        shutil.rmtree(entry)
            session.adopt(orphan, data)
        except OSError:
            self._restoring = False
            raise
        kept_tokenizers = rec.extra.get("tokenizers")
        for name, file in (kept_tokenizers.items() if isinstance(kept_tokenizers, dict) else ()):
            if not (ours / Path(str(file)).name).is_file():
                continue
            name = self.state.add_tokenizer_file(ours / Path(str(file)).name)
            if file == rec.tokenizer_file:
                self.state.set_tokenizer(name)
        picked = rec.extra.get("tokenizer_path")
        if rec.tokenizer_file is None and isinstance(picked, str) and Path(picked).is_file():
            self.state.set_tokenizer(self.state.add_tokenizer_file(Path(picked)))
        elif rec.tokenizer in self.state.catalog.names():
            self.state.set_tokenizer(rec.tokenizer)
        text = editor_text(rec.text)
        if text.map is None and text.newline != rec.newline and not any(c in rec.text for c in "\r\n"):
            text = dataclasses.replace(text, newline=rec.newline)  # no line break tells it: keep the file's
        self.state.set_document(Path(rec.path) if rec.path else None, newline=text.newline, notes=text.notes)
        self.state.set_document_policy(rec.document_policy)
        if self.documents is not None:  # Save compares the file with what the recovery file recorded
            self.documents.restored(Path(rec.path) if rec.path else None, rec.disk)

        def loaded() -> None:
            self.editor.loaded.disconnect(loaded)
            self._restoring = False
            self.editor.document().setModified(True)  # unsaved, as it was
            self.save_now()
            after, self._after = self._after, []
            for then in after:
                then()

        # subtle: loading marks the text saved (the window's _on_loaded) before `loaded` runs
        # here; the adopted file must not be removed in between either.
        self.editor.loaded.connect(loaded)
        self.editor.load_text(text)
        self.banner.show_message("note", f"Restored the unsaved text from {recovery.describe_time(rec.saved_at)}. "
                                         "It is not saved yet.")
        return True
