"""Files in and out of the window: open (in a worker, with the decoding dialog for a file that is not
UTF-8), save and save as (atomic, keeping the file's mode and symlinks), the samples and the welcome
text, File > New, tokenizer files added to the picker, dropped files, and the Open Recent list.

It owns the document's life (what is open, whether it may be dropped); it draws nothing and holds no
token logic. Errors go to the `report` callable it is given (the window's banner), never a traceback.

Saves never clobber. The file's identity on disk (mtime, size, inode) is noted when it is read and
when it is saved; Save over it when it has changed since (another window, another program) asks
first: Reload (the edits here are dropped), Overwrite, or Save As. The note travels with the unsaved
text in its recovery file (`disk_record`, `restored`): after a crash, Save of the restored text asks
the same when the file changed meanwhile (another editor while tokexplorer was down), and asks
when the recovery file has no note to compare with. A read-only file is refused with
a message that offers Save As. Owner, group and mode are kept, and a hard-linked file is written in
place (core/files/textfile.py `write_atomic`).

Save writes without asking only to a file the user chose here: one opened or saved in this session,
or one in Open Recent (every open and save puts it there). Any other path, such as the one a
restored recovery file records (which anyone who could write that file could have set), makes
Save ask where to save, as Save As does, with that path suggested and shown in full.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMenu

from tokexplorer.core.analysis.quirks import Quirk, description, sample_text
from tokexplorer.core.resources import resource_path
from tokexplorer.core.files.textfile import NotUtf8Error, ReadOnlyError, decode_text, read_only, write_atomic
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.gui import settings as keys
from tokexplorer.gui.widgets.dialogs import display_name
from tokexplorer.core.positions import EditorText, editor_text, utf16_len
from tokexplorer.core.files.text_budget import TextTooBig, check_size, read_sample, sample_describe
from tokexplorer.gui.services.worker import run_job

TOKENIZER_SUFFIXES = (".tiktoken", ".model", ".gguf")
TOKENIZER_NAMES = ("encoder.json", "tokenizer.json")
READ_BLOCK = 1 << 20  # bytes read per progress report


def read_text(path: Path, encoding: str | None, progress) -> EditorText:
    """Read and decode a file in a worker, reporting bytes read; raises NotUtf8Error and friends."""
    try:
        total = path.stat().st_size
        check_size(path, total, encoding=encoding)  # over the window's budget: TextTooBig
        parts, done = [], 0
        from tokexplorer.core.files.file_budget import open_regular

        f, _ = open_regular(path, what="text file")  # a device or a FIFO: refused, never read
        with f:
            while block := f.read(READ_BLOCK):
                parts.append(block)
                done += len(block)
                progress(done, total)
    except OSError as exc:
        raise TokexplorerError(f"cannot read {path}: {exc.strerror or exc}") from None
    return editor_text(decode_text(b"".join(parts), source=str(path), encoding=encoding))


def disk_stamp(path: Path) -> tuple[int, int, int, int] | None:
    """What tells that a file changed on disk: (mtime in ns, size, inode, device); None when absent."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev


def read_stamped(path: Path, encoding: str | None, progress) -> tuple[tuple | None, EditorText]:
    """`read_text` with the file's stamp taken before reading: a change while it is read shows as
    a change at the next save (asked about), never as none."""
    stamp = disk_stamp(path)
    return stamp, read_text(path, encoding, progress)


def is_tokenizer_file(path: Path) -> bool:
    """Whether a dropped file is a tokenizer (added to the picker) rather than a text (opened)."""
    return path.suffix in TOKENIZER_SUFFIXES or path.name in TOKENIZER_NAMES


class Documents(QObject):
    """The open document and the files around it.

    `report(title, message)` shows an error, `progress(what, done, total)` a progress bar,
    `status(message)` a passing note in the status bar. `view_wanted` names the view a sample
    needs (the window goes to a workspace that holds it).
    """

    view_wanted = Signal(str)  # a name of `MainWindow.views`

    def __init__(self, state, editor, compare, service, dialogs, banner, settings, *,
                 report: Callable[[str, str], None], progress: Callable[[str, int, int], None],
                 status: Callable[[str], None], parent=None):
        super().__init__(parent)
        self.state, self.editor, self.compare, self.service = state, editor, compare, service
        self.dialogs, self.banner, self.settings = dialogs, banner, settings
        self._report, self._progress, self._status = report, progress, status
        # (absolute path, disk_stamp) of the file when last read or saved here; the stamp is None
        # for a restored text whose recovery file recorded none (Save then asks)
        self._stamp: tuple[str, tuple | None] | None = None
        self._chosen: set[str] = set()  # files opened or saved in this session (absolute paths)
        self.recent_menu = QMenu("Open &Recent")
        # subtle: a big text is tokenized while Qt takes it in (a 50 MB text: ~10 s each, on two
        # cores side by side), so the load's end asks again only if nothing asked meanwhile.
        self.editor.load_started.connect(self.service.submit)
        self.editor.loaded.connect(self._on_loaded)
        self.fill_recent()

    # --- opening -------------------------------------------------------------------------

    def folder(self) -> str:
        """Where the file dialogs start: the open file's folder, else the working directory."""
        return str(self.state.path.parent) if self.state.path else str(Path.cwd())

    def maybe_save(self) -> bool:
        """True when it is fine to drop the current text (saved, discarded, or unchanged).

        A text still going into the editor is the file's own, part of it: nothing is asked (saving
        it then would cut the file to the part loaded)."""
        if not self.state.modified or self.editor.loading:
            return True
        answer = self.dialogs.ask_unsaved(display_name(self.state.path))
        if answer == "save":
            return self.save()
        return answer == "discard"

    def open_text_dialog(self) -> None:
        if not self.maybe_save():
            return
        path = self.dialogs.open_text_path(self.folder())
        if path:
            self.open_text(Path(path), asked=True)

    def open_text(self, path: Path, *, encoding: str | None = None, asked: bool = False) -> None:
        """Read a file in a worker; a file that is not UTF-8 leads to the decoding dialog."""
        if not asked and not self.maybe_save():
            return
        self.state.set_busy(f"reading {path.name}…")
        run_job(lambda progress: read_stamped(path, encoding, progress),
                on_result=lambda result: self._on_read(path, result[1], stamp=result[0]),
                on_error=lambda exc: self._on_read_error(path, exc),
                on_progress=lambda done, total: self._progress("reading", done, total))

    def _on_read(self, path: Path | None, text: EditorText, *, sample_of: Path | None = None,
                 stamp: tuple | None = None) -> None:
        """Show a file read (`path`), or the beginning of one too big (`sample_of`, untitled)."""
        self.state.set_busy("")
        self._stamp = (str(path.absolute()), stamp) if path is not None and stamp is not None else None
        if path is not None:
            self.remember(path)
        self.state.set_document(path, newline=text.newline, notes=text.notes)
        self.state.set_document_policy(None)
        notes = text.notes if sample_of is None else (sample_describe(sample_of, text.text),) + text.notes
        if notes:
            self.banner.show_message("note", f"{(path or sample_of).name}: " + "; ".join(notes) + ".")
        else:
            self.banner.clear()
        self.editor.load_text(text)

    def _on_read_error(self, path: Path, exc: Exception) -> None:
        self.state.set_busy("")
        self._progress("reading", 1, 1)  # hides the bar
        if isinstance(exc, NotUtf8Error):
            encoding = self.dialogs.choose_encoding(exc)
            if encoding:
                self.open_text(path, encoding=encoding, asked=True)
            return
        self._report("Cannot open", str(exc) if isinstance(exc, TokexplorerError) else repr(exc))
        if isinstance(exc, TextTooBig):  # the way on: its beginning, untitled
            self.banner.show_message("error", self.banner.label.text(), [
                (f"Open the first {exc.limit_mb:g} MB", lambda: self.open_sample_of(path, exc.encoding))])

    def open_sample_of(self, path: Path, encoding: str | None = None) -> None:
        """Open the beginning of a file too big for the window as an untitled text (text_budget)."""
        self.state.set_busy(f"reading the beginning of {path.name}…")
        run_job(lambda progress: editor_text(read_sample(path, encoding, progress)),
                on_result=lambda text: self._on_read(None, text, sample_of=path),
                on_error=lambda exc: self._on_read_error(path, exc),
                on_progress=lambda done, total: self._progress("reading", done, total))

    def _on_loaded(self) -> None:
        self._progress("inserting text", 1, 1)  # hides the bar
        self.state.set_modified(False)
        if not self.editor.load_sent:
            self.service.submit()

    def open_sample(self, quirk: Quirk) -> None:
        """A sample of the quirks gallery as a new, unsaved text, with what to look for in it."""
        if not self.maybe_save():
            return
        self._stamp = None
        self.state.set_document(None)
        self.state.set_document_policy(quirk.allowed_special)
        self.editor.load_text(editor_text(sample_text(quirk)))
        if quirk.view == "compare":
            self.compare.open_sample(quirk)
        else:
            self.compare.set_active(False)
            self.state.set_tokenizer(quirk.tokenizers[0])
        self.view_wanted.emit(quirk.view)  # a workspace that shows it: Compare for the panes
        self.banner.show_message("note", f"{quirk.question} {description(quirk)}")

    def open_step(self, step, text: str) -> bool:
        """A Learn step (core.lesson.Step): its text as a new, unsaved text, with its tokenizer and
        policy and what to look at; False if the user kept the current text."""
        if not self.maybe_save():
            return False
        self._stamp = None
        self.state.set_document(None)
        self.state.set_document_policy(step.policy)
        self.editor.load_text(editor_text(text))
        if step.tokenizer:
            self.state.set_tokenizer(step.tokenizer)
        self.banner.show_message("note", f"{step.title}: {step.explanation}")
        return True

    def new_text(self) -> None:
        """File > New: an empty, untitled text (after asking about unsaved changes)."""
        if not self.maybe_save():
            return
        self._stamp = None
        self.state.set_document(None)
        self.state.set_document_policy(None)
        self.editor.load_text(editor_text(""))
        self.banner.clear()

    def show_welcome(self) -> None:
        """The welcome text (resources/welcome.txt) as a new, unsaved text: the tokenizers'
        differences at a glance, and where to go next.

        It spells a special token as a lesson, not an alarm: the text is encoded with special
        tokens allowed (so nothing is refused), and a note says so and offers the other two ways."""
        if not self.maybe_save():
            return
        self._stamp = None
        self.state.set_document(None)
        self.state.set_document_policy("all")
        self.editor.load_text(editor_text(resource_path("welcome.txt").read_text(encoding="utf-8")))
        self.banner.show_message(
            "note", "This text spells the special token <|endoftext|>, encoded here as one special "
            "token. A user's text usually may not do that (tiktoken refuses it by default). Try:",
            [("Refuse it", lambda: self.state.set_document_policy("refuse")),
             ("Encode as plain text", lambda: self.state.set_document_policy("none"))])

    def set_text(self, text: str) -> None:
        """Put text in the editor as if typed (for tests and the benchmarks): no soft breaks."""
        self.editor.setPlainText(editor_text(text, soft=False).text)

    def open_paths(self, paths: list[Path]) -> None:
        """Dropped files: tokenizers join the picker, texts open in the editor."""
        for path in paths:
            if is_tokenizer_file(path):
                self.open_tokenizer(path)
            else:
                self.open_text(path)

    # --- saving --------------------------------------------------------------------------

    def save(self) -> bool:
        """Save to the document's file; Save As when it has none, or one the user did not choose here."""
        if self.state.path is None or not self.chosen(self.state.path):
            return self.save_as()
        return self._write(self.state.path)

    def save_as(self) -> bool:
        path = self.dialogs.save_path(str(self.state.path or Path(self.folder()) / "untitled.txt"))
        return bool(path) and self._write(Path(path))

    def chosen(self, path: Path) -> bool:
        """Whether the user chose this file here: opened or saved in this session, or in Open Recent."""
        name = str(path.absolute())
        return name in self._chosen or name in self.recent()

    def _may_write(self, path: Path) -> str:
        """'write', or what the user answered instead ('save_as', 'reload', 'cancel') when `path` is
        read-only or changed on disk since it was read or saved here."""
        if read_only(path):
            return self.dialogs.ask_read_only(str(path))
        if self._stamp is not None and self._stamp[0] == str(path.absolute()):
            now = disk_stamp(path)
            if now is not None and now != self._stamp[1]:  # a file deleted meanwhile is written anew
                answer = self.dialogs.ask_changed_on_disk(str(path))
                return "write" if answer == "overwrite" else answer
        return "write"

    def disk_record(self) -> tuple | None:
        """The document's file as it was on disk when its text was last read or saved here (what
        a recovery file keeps); None for an untitled text or when not known."""
        if self._stamp is None or self.state.path is None or self._stamp[0] != str(self.state.path.absolute()):
            return None
        return self._stamp[1]

    def restored(self, path: Path | None, disk: tuple | None) -> None:
        """A restored text of `path` is the document now: `disk` is what its recovery file
        recorded of the file (None: nothing recorded, so Save asks before writing over it)."""
        self._stamp = (str(path.absolute()), disk) if path is not None else None

    def _write(self, path: Path) -> bool:
        answer = self._may_write(path)
        if answer == "save_as":
            return self.save_as()
        if answer == "reload":
            self.open_text(path, asked=True)
            return False
        if answer != "write":
            return False
        text = self.editor.user_text()
        try:
            write_atomic(path, text.encode("utf-8"))
        except ReadOnlyError:  # made read-only since the check
            return self.dialogs.ask_read_only(str(path)) == "save_as" and self.save_as()
        except TokexplorerError as exc:  # keeps the file's mode, writes through a symlink
            self._report("Cannot save", str(exc))
            return False
        stamp = disk_stamp(path)
        self._stamp = (str(path.absolute()), stamp) if stamp is not None else None
        self._chosen.add(str(path.absolute()))
        self.editor.document().setModified(False)
        self.state.set_document(path, newline=self.state.newline)
        self.remember(path)
        self._status(f"saved {path} ({utf16_len(text):,} UTF-16 units)")
        return True

    # --- tokenizer files -----------------------------------------------------------------

    def open_tokenizer_dialog(self) -> None:
        path = self.dialogs.open_tokenizer_path(self.folder())
        if path:
            self.open_tokenizer(Path(path))

    def open_tokenizer(self, path: Path) -> None:
        """Add a tokenizer file to the picker and switch to it; a bad file is reported, not kept."""
        self.state.set_busy(f"loading {path.name}…")

        def loaded(name: str) -> None:
            self.state.set_busy("")
            self.state.set_tokenizer(name)

        def failed(message: str) -> None:
            self.state.set_busy("")
            self.state.tokenizers_changed.emit()
            self._report("Cannot open tokenizer", message)

        self.state.add_tokenizer_file(path, loaded, failed)

    # --- Open Recent ---------------------------------------------------------------------

    def recent(self) -> list[str]:
        return keys.read_list(self.settings, keys.RECENT_FILES)

    def remember(self, path: Path) -> None:
        path = path.absolute()  # the list must work wherever the app is started next
        self._chosen.add(str(path))
        paths = [str(path)] + [p for p in self.recent() if p != str(path)]
        self.settings.setValue(keys.RECENT_FILES, paths[:keys.MAX_RECENT])
        self.fill_recent()

    def fill_recent(self) -> None:
        self.recent_menu.clear()
        paths = self.recent()
        for i, p in enumerate(paths):
            action = self.recent_menu.addAction(f"&{(i + 1) % 10} {Path(p).name}")
            action.setStatusTip(p)
            action.triggered.connect(lambda checked=False, p=p: self.open_text(Path(p)))
        self.recent_menu.setEnabled(bool(paths))
