"""The training workbench: the settings form (`form`), a run in the background with its progress
(`progress`) and merge log (`merge_log`), cancel keeping what was learned, and the result: used in
the editor, or saved.

Training runs in a child process (`TrainingService`). The result joins the tokenizer picker as soon
as the tokenizing server has built it, and Save has the server write it in any format the core
writes (`SaveTokenizer`). Closing the window while it trains asks first, and so does closing it
with trained tokenizers that were never saved (they live in the server's memory only: Save…, one at
a time, Discard or Cancel); `may_close`, the window's closeEvent calls it.

It does not train, split or save by itself: the core does, in the child process or the server.
"""

from __future__ import annotations

import html
from typing import Callable

from PySide6.QtCore import QEventLoop, Qt
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from tokexplorer.core.files.trained import save_formats
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.training.bpe import MergeRecord
from tokexplorer.gui.panels.training.form import TrainingForm
from tokexplorer.gui.panels.training.merge_log import MergeLogModel, MergeLogView
from tokexplorer.gui.panels.training.progress import TrainingProgress
from tokexplorer.gui.services.training import TrainingResult, TrainingService, while_alive
from tokexplorer.gui import settings as keys
from tokexplorer.gui.state import AppState
from tokexplorer.gui.widgets.dialogs import remember_folder, start_folder
from tokexplorer.gui.widgets.wheel_guard import guard_wheel
from tokexplorer.server.protocol import SaveTokenizer


class TrainingPanel(TrainingForm):
    """The form above, the run's progress and merge log below, in a splitter; the buttons under both."""

    def __init__(self, state: AppState, service: TrainingService, dialogs,
                 text_source: Callable[[], str], parent=None):
        super().__init__(state, dialogs, text_source, parent)
        self.setObjectName("training_panel")
        self.service = service
        self.result: TrainingResult | None = None
        self.result_name = ""  # the result's name in the picker
        self.unsaved: dict[str, TrainingResult] = {}  # picker name -> a result never saved
        self._training_name = ""  # of the run under way (or the last one)

        log = QWidget()
        lv = QVBoxLayout(log)
        lv.setContentsMargins(0, 0, 0, 0)
        self.run_progress = TrainingProgress(state)
        self.progress, self.rate_label = self.run_progress.progress, self.run_progress.rate_label
        lv.addWidget(self.run_progress)
        self.log_model = MergeLogModel(self)
        self.log_view = MergeLogView(self.log_model)
        lv.addWidget(self.log_view, 1)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.settings_scroll)
        splitter.addWidget(log)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        outer.addWidget(splitter, 1)
        outer.addWidget(self.actions)  # Train, Save… stay in view however the settings scroll
        guard_wheel(self)  # the wheel scrolls the panel; it changes a value only once clicked
        self._set_running(False)

        self.train_button.clicked.connect(self.train)
        self.cancel_button.clicked.connect(self.service.cancel)
        self.save_button.clicked.connect(self.save)
        self.use_button.clicked.connect(lambda: self.result_name and self.state.set_tokenizer(self.result_name))
        self.service.phase.connect(self.run_progress.show_phase)
        self.service.started.connect(self.run_progress.start_merging)
        self.service.records.connect(self._on_records)
        self.service.finished.connect(self._on_finished)
        self.service.failed.connect(self._on_failed)
        self._on_algorithm()
        self.corpus.show_corpus()

    # --- training ------------------------------------------------------------------------

    def train(self) -> None:
        if self.service.running:
            return
        try:
            request = self.request()
        except TokexplorerError as exc:
            self.say(str(exc), error=True)
            return
        self.log_model.clear()
        self.result = None
        self.result_name = ""
        self.say("")
        self.run_progress.clear()
        self._set_running(True)
        self._training_name = request.name
        self.service.start(request, self.state.add_trained)

    def _set_running(self, running: bool) -> None:
        self.train_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.save_button.setEnabled(not running and self.result is not None)
        self.use_button.setEnabled(not running and self.result is not None)

    def _on_records(self, batch: list[MergeRecord]) -> None:
        self.log_view.append(batch)
        self.run_progress.show_records(batch)

    def _on_finished(self, result: TrainingResult) -> None:
        self.result = result
        self.result_name = result.name  # the service offered it: it is in the picker
        self.unsaved[self.result_name] = result
        self._set_running(False)
        n_vocab = result.info.n_vocab
        merges = len(self.log_model.records)
        total = self.run_progress.total
        if result.request.algorithm == "sentencepiece":
            what = f"trained {n_vocab:,} pieces in {result.seconds:.1f} s"
        elif result.stopped:
            what = f"cancelled: kept the first {merges:,} merges (vocab size {n_vocab:,})"
        elif merges < total:
            what = (f"{merges:,} merges in {result.seconds:.1f} s: no pair left to merge, so the vocab "
                    f"size is {n_vocab:,} (asked for {result.request.vocab_size:,})")
        else:
            what = f"{merges:,} merges in {result.seconds:.1f} s"
        self.run_progress.show_finished(result.stopped, merges,
                                        self.log_model.records[-1].tokens if merges else None)
        self.say(f"{what}. “{self.result_name}” is in the tokenizer picker: Use in Editor, or Save…")

    def _on_failed(self, message: str) -> None:
        self._set_running(False)
        self.run_progress.show_failed()
        self.say(message, error=True)

    # --- closing -------------------------------------------------------------------------

    def may_close(self) -> bool:
        """Whether the window may close: the user's answers when a training runs (stopping ends
        the child and loses what it has learned: a result is kept only by Cancel, then Save) and
        when trained tokenizers were never saved (each saved in turn, or all discarded)."""
        return self._may_stop() and self._may_lose_unsaved()

    def _may_stop(self) -> bool:
        if not self.service.running:
            return True
        merges = self.service.merges_so_far
        if merges:
            lost = (f"The {merges:,} merges learned so far (of {self.run_progress.total:,}) will be lost. To keep "
                    "them, choose Cancel here, then Cancel in the Training panel (which keeps what was learned) "
                    "and save the result.")
        else:
            lost = "Nothing learned so far will be kept."
        return self.dialogs.ask_stop_training(f"“{self._training_name}”", lost)

    def _may_lose_unsaved(self) -> bool:
        names = list(self.unsaved)
        if not names:
            return True
        answer = self.dialogs.ask_unsaved_tokenizers(names)
        if answer != "save":
            return answer == "discard"
        for name in names:
            formats = self.unsaved[name].info.save_formats
            answer = self.dialogs.save_tokenizer_path(self._suggested_path(name), save_formats(formats))
            if not answer:
                return False  # a cancelled save dialog cancels the close
            problem = self._save_before_closing(name, *answer)
            if not problem:
                remember_folder(keys.SAVE_FOLDER, answer[0])
            if problem:
                message = f"cannot save {name}: {problem}"
                self.say(message, error=True)
                self.dialogs.show_info("Tokenizer not saved", html.escape(message))
                return False
            del self.unsaved[name]
        return True

    def _save_before_closing(self, name: str, path: str, fmt: str) -> str:
        """Have the server write the tokenizer, and wait for it; returns "" or why it failed.

        subtle: the window closes as soon as `may_close` returns, so the answer is waited for
        here, in a local event loop (as a modal dialog waits): the window still repaints."""
        problem: list[str] = []
        loop = QEventLoop()

        def failed(message: str) -> None:
            problem.append(message)
            loop.quit()

        self.state.server.ask(SaveTokenizer(name, path, fmt), lambda written: loop.quit(), failed)
        loop.exec()
        return problem[0] if problem else ""

    # --- saving --------------------------------------------------------------------------

    def _suggested_path(self, name: str) -> str:
        """The run's name as a file name, in the folder saved to last, else the user's documents
        folder (not the corpus's: a corpus folder is seldom where a tokenizer belongs)."""
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name).strip("_")
        return str(start_folder(keys.SAVE_FOLDER) / safe)

    def save(self) -> None:
        if self.result is None:
            return
        name = self.result_name
        answer = self.dialogs.save_tokenizer_path(self._suggested_path(name), save_formats(self.result.info.save_formats))
        if not answer:
            return
        path, fmt = answer

        def saved(written: tuple[str, ...]) -> None:
            self.unsaved.pop(name, None)
            remember_folder(keys.SAVE_FOLDER, path)
            self.say("saved " + ", ".join(written))

        self.state.server.ask(SaveTokenizer(name, path, fmt), while_alive(self, saved),
                              while_alive(self, lambda message: self.say(f"cannot save: {message}", error=True)))

