"""Every question the window asks the user, in one replaceable object.

The window calls `Dialogs` methods instead of building message boxes itself, so tests swap in an
object with canned answers and never block on a modal dialog. `start_folder` says where a save
or export dialog starts (the folder written to last, kept in the settings, else Documents).
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFileDialog, QFrame, QInputDialog, QMessageBox,
                               QTextBrowser, QVBoxLayout, QWidget)

from tokexplorer.core.files.textfile import NotUtf8Error
from tokexplorer.gui import settings as keys

# Offered when a file is not UTF-8: (encoding name for Python's codecs, label).
FALLBACK_ENCODINGS = [
    ("cp1252", "Windows-1252 (Western European)"),
    ("latin-1", "Latin-1 / ISO-8859-1 (every byte is a character)"),
    ("utf-16-le", "UTF-16 little-endian, without BOM"),
    ("utf-16-be", "UTF-16 big-endian, without BOM"),
    ("shift_jis", "Shift JIS (Japanese)"),
    ("gb18030", "GB 18030 (Chinese)"),
    ("koi8-r", "KOI8-R (Russian)"),
]

TEXT_FILTER = "Text files (*.txt *.md *.py *.json *.yml *.yaml *.csv *.html *.xml);;All files (*)"
TOKENIZER_FILTER = "Tokenizer files (*.tiktoken *.model *.gguf *.json);;All files (*)"


def not_utf8_message(error: NotUtf8Error) -> str:
    """What the decoding dialog says.

    >>> not_utf8_message(NotUtf8Error("a.txt", 7, 0xE9)).splitlines()[0]
    'a.txt is not UTF-8: the byte at offset 7 is 0xE9, which cannot appear there in UTF-8.'
    """
    return (f"{error.path} is not UTF-8: the byte at offset {error.offset} is 0x{error.byte:02X}, "
            "which cannot appear there in UTF-8.\n"
            "Choose the encoding the file was written in to open it anyway. The file is not changed "
            "unless you save it (saving writes UTF-8).")


class Dialogs:
    """The real, modal dialogs."""

    def __init__(self, parent: QWidget):
        self.parent = parent

    def open_text_path(self, folder: str) -> str | None:
        path, _ = QFileDialog.getOpenFileName(self.parent, "Open text", folder, TEXT_FILTER)
        return path or None

    def open_tokenizer_path(self, folder: str) -> str | None:
        path, _ = QFileDialog.getOpenFileName(self.parent, "Open tokenizer file", folder, TOKENIZER_FILTER)
        return path or None

    def open_corpus_paths(self, folder: str) -> list[str]:
        """Text files to train on (several may be chosen); [] when cancelled."""
        paths, _ = QFileDialog.getOpenFileNames(self.parent, "Choose corpus files", folder, TEXT_FILTER)
        return paths

    def save_tokenizer_path(self, suggested: str, formats: dict[str, str]) -> tuple[str, str] | None:
        """Where to save a trained tokenizer and in which format: `formats` maps a format key to
        its file-dialog filter; returns (path, format key), or None when cancelled."""
        by_filter = {f: key for key, f in formats.items()}
        path, chosen = QFileDialog.getSaveFileName(self.parent, "Save tokenizer", suggested,
                                                   ";;".join(formats.values()))
        return (path, by_filter.get(chosen, next(iter(formats)))) if path else None

    def save_path(self, suggested: str) -> str | None:
        path, _ = QFileDialog.getSaveFileName(self.parent, "Save text as", suggested, TEXT_FILTER)
        return path or None

    def export_path(self, suggested: str, file_filter: str) -> str | None:
        """Where to export a plot (PNG) or its numbers (CSV)."""
        path, _ = QFileDialog.getSaveFileName(self.parent, "Export", suggested, file_filter)
        return path or None

    def ask_unsaved(self, name: str) -> str:
        """'save', 'discard' or 'cancel'."""
        box = QMessageBox(QMessageBox.Icon.Warning, "Unsaved changes",
                          f"{name} has changes that are not saved.", parent=self.parent)
        box.setInformativeText("Save them before going on?")
        box.setStandardButtons(QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                               | QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        answer = box.exec()
        return {QMessageBox.StandardButton.Save: "save",
                QMessageBox.StandardButton.Discard: "discard"}.get(QMessageBox.StandardButton(answer), "cancel")

    def ask_stop_training(self, what: str, lost: str) -> bool:
        """The window is closing while `what` trains: True to stop it and close, False to go on."""
        return self._ask_stop("Training in progress", f"{what} is still training. Stop it and close tokexplorer?",
                              lost, "Stop Training and Close")

    def ask_stop_sweep(self, lost: str) -> bool:
        """The window is closing while the Plots panel's sweep runs: True to stop it and close."""
        return self._ask_stop("Sweep in progress", "The vocab-size sweep is still running. Stop the sweep and "
                              "close tokexplorer?", lost, "Stop the Sweep and Close")

    def _ask_stop(self, title: str, text: str, lost: str, stop_label: str) -> bool:
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, parent=self.parent)
        box.setInformativeText(lost)
        stop = box.addButton(stop_label, QMessageBox.ButtonRole.DestructiveRole)
        keep = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(keep)  # Return keeps it running, as Escape does
        box.exec()
        return box.clickedButton() is stop

    def ask_unsaved_tokenizers(self, names: list[str]) -> str:
        """The window is closing and tokenizers trained in it were never saved: 'save' (each in
        turn asks where), 'discard' or 'cancel'."""
        if len(names) == 1:
            text = f"The trained tokenizer “{names[0]}” is not saved."
        else:
            text = f"{len(names)} trained tokenizers are not saved: " + ", ".join(f"“{n}”" for n in names) + "."
        box = QMessageBox(QMessageBox.Icon.Warning, "Trained tokenizers not saved", text, parent=self.parent)
        box.setInformativeText("They live only in this window and are gone once it closes. Save them to open "
                               "them again later (Save… asks where, one at a time).")
        save = box.addButton("Save…", QMessageBox.ButtonRole.AcceptRole)
        discard = box.addButton(QMessageBox.StandardButton.Discard)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(save)
        box.exec()
        return {save: "save", discard: "discard"}.get(box.clickedButton(), "cancel")

    def ask_restore(self, name: str, when: str, chars: int) -> str:
        """After an abnormal exit: 'restore', 'discard' or 'later' (kept for the next start). `name`
        is the recorded path in full (or "Untitled"): the user sees exactly which file it claims."""
        box = QMessageBox(QMessageBox.Icon.Question, "Unsaved text found",
                          f"Restore the unsaved text from {when}?", parent=self.parent)
        # escaped: a path is shown as it is, never read as markup
        box.setInformativeText(f"<p>{html.escape(name)}, {chars:,} characters, was not saved when "
                               "tokexplorer last stopped.</p>")
        restore = box.addButton("Restore", QMessageBox.ButtonRole.AcceptRole)
        discard = box.addButton("Discard", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton("Not Now", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(restore)
        box.exec()
        return {restore: "restore", discard: "discard"}.get(box.clickedButton(), "later")

    def ask_changed_on_disk(self, path: str) -> str:
        """Save over a file that changed on disk since it was opened or saved here: 'reload',
        'overwrite', 'save_as' or 'cancel'."""
        box = QMessageBox(QMessageBox.Icon.Warning, "File changed on disk",
                          "The file has changed on disk since it was opened or saved here.", parent=self.parent)
        box.setInformativeText(f"<p>{html.escape(path)}</p><p>Reload it (your changes here are dropped), "
                               "overwrite it with your text (the other changes are lost), or save your "
                               "text under another name?</p>")
        reload = box.addButton("Reload", QMessageBox.ButtonRole.DestructiveRole)
        overwrite = box.addButton("Overwrite", QMessageBox.ButtonRole.AcceptRole)
        save_as = box.addButton("Save As…", QMessageBox.ButtonRole.ActionRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(save_as)  # Return loses nothing
        box.setEscapeButton(cancel)
        box.exec()
        return {reload: "reload", overwrite: "overwrite", save_as: "save_as"}.get(box.clickedButton(), "cancel")

    def ask_read_only(self, path: str) -> str:
        """Save to a read-only file: refused; 'save_as' (choose another name) or 'cancel'."""
        box = QMessageBox(QMessageBox.Icon.Warning, "File is read-only",
                          "The file is read-only; tokexplorer does not write over it.", parent=self.parent)
        box.setInformativeText(f"<p>{html.escape(path)}</p><p>Save your text under another name?</p>")
        save_as = box.addButton("Save As…", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(save_as)
        box.exec()
        return "save_as" if box.clickedButton() is save_as else "cancel"

    def choose_encoding(self, error: NotUtf8Error) -> str | None:
        """An encoding from FALLBACK_ENCODINGS, or None to give up."""
        labels = [label for _, label in FALLBACK_ENCODINGS]
        suggested = [i for i, (enc, _) in enumerate(FALLBACK_ENCODINGS) if enc == getattr(error, "encoding", None)]
        message = f"{error}." if suggested else not_utf8_message(error)  # UTF-16 without a BOM
        label, ok = QInputDialog.getItem(self.parent, "Not UTF-8", message, labels, suggested[0] if suggested else 0,
                                         False)
        if not ok:
            return None
        return dict((lab, enc) for enc, lab in FALLBACK_ENCODINGS)[label]

    def show_info(self, title: str, rich_text: str) -> None:
        info_dialog(self.parent, title, rich_text).exec()

    def show_details(self, title: str, text: str, details: str) -> None:
        """An error with its details folded away (the "Show Details…" button)."""
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Close, self.parent)
        box.setDetailedText(details)
        box.exec()


def info_dialog(parent: QWidget | None, title: str, rich_text: str) -> QDialog:
    """A dialog that shows rich text at its natural width (no name cut off), scrolling only
    beyond most of the screen."""
    dialog = QDialog(parent)
    dialog.setWindowTitle(title)
    browser = QTextBrowser()
    browser.setObjectName("info_text")
    browser.setOpenExternalLinks(True)
    browser.setFrameShape(QFrame.Shape.NoFrame)
    browser.setHtml(rich_text)
    doc = browser.document()
    doc.setTextWidth(doc.idealWidth())
    screen = (parent.screen() if parent is not None else dialog.screen()).availableGeometry()
    margin = 2 * doc.documentMargin() + browser.verticalScrollBar().sizeHint().width()
    browser.setMinimumSize(int(min(doc.idealWidth() + margin, 0.8 * screen.width())),
                           int(min(doc.size().height() + margin, 0.75 * screen.height())))
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    buttons.rejected.connect(dialog.reject)
    layout = QVBoxLayout(dialog)
    layout.addWidget(browser)
    layout.addWidget(buttons)
    return dialog


def display_name(path: Path | None) -> str:
    return path.name if path is not None else "Untitled"


def start_folder(key: str) -> Path:
    """Where a save or export dialog starts: the folder remembered under the settings `key` (the
    last one written to), while it exists; else the user's documents folder; else the home folder."""
    last = keys.open_settings().value(key, "", type=str)
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    for folder in (last, documents):
        if folder and Path(folder).is_dir():
            return Path(folder)
    return Path.home()


def remember_folder(key: str, path: str | Path) -> None:
    """A file was written at `path`: its folder is where the next dialog under `key` starts."""
    keys.open_settings().setValue(key, str(Path(path).parent))
