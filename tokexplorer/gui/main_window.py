"""The main window: menus, tool bars (workspaces, tokenizer picker, special-token policy), status
bar and dock panels, created and wired to the one `AppState` and the `TokenizeService`.

Files in and out live in `documents.py`, what persists between runs in `window_settings.py`, where
the docks go in each workspace and how a view comes forward in `workspaces.py`, each view in its
own module; the window holds no token logic of its own. Slow work (reading a file, loading a tokenizer, tokenizing) happens in workers; every error
reaches `_report` and is shown in the window, never as a traceback.

It runs past 400 lines because it creates and wires every view, menu and action; there is no logic
in it to split off.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QThreadPool, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QApplication, QComboBox, QDockWidget, QLabel, QMainWindow,
                               QProgressBar, QToolButton, QVBoxLayout, QWidget)

from tokexplorer.core.analysis.quirks import QUIRKS, description
from tokexplorer.core.registry import BUILTINS
from tokexplorer.core.tokenizer import DisallowedSpecialError
from tokexplorer.gui import settings as keys
from tokexplorer.gui.services import crash
from tokexplorer.gui.widgets.about import about_html
from tokexplorer.gui.services.autosave import Autosave
from tokexplorer.gui.editor.banner import Banner
from tokexplorer.gui.panels.chunks import ChunkView
from tokexplorer.gui.widgets.colours import application_palette
from tokexplorer.gui.widgets.dialogs import Dialogs, display_name
from tokexplorer.gui.widgets.layout_fence import LayoutFence
from tokexplorer.gui.widgets.tool_bar_rows import ToolBarRows
from tokexplorer.gui.widgets.lazy_view import LazyView
from tokexplorer.gui.services.documents import Documents
from tokexplorer.gui.editor.editor import TokenEditor
from tokexplorer.gui.editor.find_bar import FindBar
from tokexplorer.gui.panels.legend import Legend, token_colours_menu
from tokexplorer.gui.panels.compare import CompareView
from tokexplorer.gui.panels.inspector import InspectorPanel
from tokexplorer.gui.panels.selection_counts import SelectionCountsLabel
from tokexplorer.gui.panels.status_counts import BusyLabel, CountsLabel
from tokexplorer.gui.panels.vocab import VocabPanel
from tokexplorer.gui.editor.repaint_pacer import RepaintPacer
from tokexplorer.gui.editor.selection import SelectionTracker
from tokexplorer.gui.state import AppState
from tokexplorer.gui.panels.token_ids import TokenTable
from tokexplorer.gui.services.server_link import ServerLink
from tokexplorer.gui.services.worker import POLICIES, TokenizeService
from tokexplorer.gui.window_settings import WindowSettings
from tokexplorer.gui.workspaces import Workspaces

SHORTCUTS = [
    ("Open text", QKeySequence.StandardKey.Open), ("Save", QKeySequence.StandardKey.Save),
    ("Save as", QKeySequence.StandardKey.SaveAs), ("Quit", QKeySequence.StandardKey.Quit),
    ("Undo", QKeySequence.StandardKey.Undo), ("Redo", QKeySequence.StandardKey.Redo),
    ("Select all", QKeySequence.StandardKey.SelectAll), ("Find", QKeySequence.StandardKey.Find),
    ("Find next", QKeySequence.StandardKey.FindNext),
    ("Find previous", QKeySequence.StandardKey.FindPrevious),
]


class MainWindow(QMainWindow):
    reported = Signal(str)  # every error shown to the user (a --screenshot run then fails)

    def __init__(self, state: AppState | None = None, *, dialogs=None, settings=None):
        super().__init__()
        self.setObjectName("main_window")
        self.state = state or AppState(self)
        self.settings = settings if settings is not None else keys.open_settings()
        self.dialogs = dialogs or Dialogs(self)
        self.editor = TokenEditor(self.state)
        self.banner = Banner()
        central = QWidget()
        central.setMinimumWidth(360)  # a narrow window squeezes the docks, not the text
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.banner)
        self.compare = CompareView(self.state, self.editor)  # holds the editor: its first pane
        layout.addWidget(self.compare)
        self.legend = Legend(self.state)
        layout.addWidget(self.legend)
        self.find_bar = FindBar(self.editor, self.state)
        layout.addWidget(self.find_bar)
        self.setCentralWidget(central)
        if self.state.server is None:  # the tokenizing server: every tokenizer runs there
            self.state.server = ServerLink(self)
        self.service = TokenizeService(self.state.server, self.state.catalog, self.editor.snapshot,
                                       lambda: (self.state.tokenizer, self.state.effective_policy), parent=self)
        self.state.doc = self.service.doc
        self.state.server.status.connect(lambda message: self.statusBar().showMessage(message, 15000))
        self.repaint_pacer = RepaintPacer(self)  # a keystroke painted once, with its tokens
        self.repaint_pacer.watch(self.service)
        self.compare.service_added.connect(self.repaint_pacer.watch)
        self.documents = Documents(self.state, self.editor, self.compare, self.service, self.dialogs, self.banner,
                                   self.settings, report=self._report, progress=self._progress,
                                   status=lambda message: self.statusBar().showMessage(message, 4000), parent=self)
        self.window_settings = WindowSettings(self, self.settings)
        self.workspaces = Workspaces(self, self.settings)
        self._create_actions()
        self._create_menus()
        self._create_tool_bars()
        self._create_status_bar()
        self._create_docks()
        self._connect()
        self._last_good = self.state.tokenizer  # what the picker falls back to from a bad file
        crash.reporter().crashed.connect(self._on_crash)
        self.window_settings.restore()
        self.autosave = Autosave(self.state, self.editor, self.service, self.dialogs, self.banner,
                                 keys.settings_folder(self.settings) / "recovery", documents=self.documents,
                                 parent=self)
        self.setAcceptDrops(True)
        self._update_title()
        QTimer.singleShot(0, self.service.submit)  # loads the tokenizer in the background

    # --- construction --------------------------------------------------------------------

    def _action(self, text: str, slot=None, shortcut=None, tip: str = "", checkable: bool = False) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
        action.setCheckable(checkable)
        if slot is not None:
            (action.toggled if checkable else action.triggered).connect(slot)
        return action

    def _create_actions(self) -> None:
        S = QKeySequence.StandardKey
        self.new_action = self._action("&New", self.documents.new_text, S.New, "An empty, untitled text")
        self.open_action = self._action("&Open Text…", self.documents.open_text_dialog, S.Open, "Open a text file")
        self.open_tokenizer_action = self._action(
            "Open &Tokenizer File…", self.documents.open_tokenizer_dialog, "Ctrl+Shift+O",
            "Open a .tiktoken, SentencePiece .model, minbpe .model or GPT-2 encoder.json file")
        self.save_action = self._action("&Save", self.documents.save, S.Save, "Save the text")
        self.save_as_action = self._action("Save &As…", self.documents.save_as, S.SaveAs, "Save the text under a new name")
        self.quit_action = self._action("&Quit", self.close, S.Quit, "Quit tokexplorer")
        e = self.editor
        self.undo_action = self._action("&Undo", e.undo, S.Undo)
        self.redo_action = self._action("&Redo", e.redo, S.Redo)
        self.cut_action = self._action("Cu&t", e.cut, S.Cut)
        self.copy_action = self._action("&Copy", e.copy, S.Copy)
        self.paste_action = self._action("&Paste", e.paste, S.Paste)
        self.select_all_action = self._action("Select &All", e.selectAll, S.SelectAll)
        self.copy_ids_action = self._action(
            "Copy Token &IDs", self.copy_token_ids, "Ctrl+Shift+C",
            "Copy the ids of the selected text's tokens (or of every token) as a JSON list")
        self.find_action = self._action("&Find…", self.find_bar.open, S.Find, "Find text in the editor")
        self.find_next_action = self._action("Find &Next", lambda: self.find_bar.find_again(), S.FindNext)
        self.find_previous_action = self._action("Find Pre&vious", lambda: self.find_bar.find_again(backward=True),
                                                 S.FindPrevious)
        self.undo_action.setEnabled(False)
        self.redo_action.setEnabled(False)
        e.undoAvailable.connect(self.undo_action.setEnabled)
        e.redoAvailable.connect(self.redo_action.setEnabled)
        self.whitespace_action = self._action("Show &Whitespace", self.state.set_show_whitespace, "Ctrl+Shift+W",
                                              "Mark spaces, tabs and line ends (the text is not changed)",
                                              checkable=True)
        self.dark_action = self._action("&Dark Theme", self.state.set_dark, "Ctrl+Shift+D",
                                        "Switch between the light and the dark theme (else the "
                                        "system's is followed)", checkable=True)
        self.dark_action.triggered.connect(self.window_settings.choose_dark)
        self.monospace_action = self._action("&Monospace Font", lambda on: self.state.set_font(monospace=on),
                                             "Ctrl+Shift+M", "Show the text in a fixed-width font",
                                             checkable=True)
        self.zoom_in_action = self._action("Zoom &In", lambda: self._zoom(+1), S.ZoomIn, "Larger text")
        self.zoom_out_action = self._action("Zoom &Out", lambda: self._zoom(-1), S.ZoomOut, "Smaller text")
        self.zoom_reset_action = self._action("&Reset Zoom", lambda: self.state.set_font(size=0), "Ctrl+0",
                                              "The default text size")
        self.shortcuts_action = self._action("&Keyboard Shortcuts", self.show_shortcuts, S.HelpContents)
        self.about_action = self._action("&About tokexplorer", self.show_about)
        self.welcome_action = self._action("&Welcome Text", self.documents.show_welcome,
                                           tip="Open the welcome text again (numbers, code, languages, emoji)")
        self.compare_action = self._action("&Compare Tokenizers", self.compare.set_active, None,
                                           "The text in 2 to 4 tokenizers side by side (the Compare "
                                           "workspace gives them the window)", checkable=True)
        self.compare.active_changed.connect(self.compare_action.setChecked)

    def _create_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addActions([self.new_action, self.open_action, self.open_tokenizer_action])
        file_menu.addMenu(self.documents.recent_menu)
        file_menu.addSeparator()
        file_menu.addActions([self.save_action, self.save_as_action])
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit_menu = bar.addMenu("&Edit")
        edit_menu.addActions([self.undo_action, self.redo_action])
        edit_menu.addSeparator()
        edit_menu.addActions([self.cut_action, self.copy_action, self.copy_ids_action, self.paste_action,
                              self.select_all_action])
        edit_menu.addSeparator()
        edit_menu.addActions([self.find_action, self.find_next_action, self.find_previous_action])
        self.view_menu = bar.addMenu("&View")
        workspace_menu = self.view_menu.addMenu("Wor&kspace")
        workspace_menu.addActions(list(self.workspaces.actions.values()))
        self.view_menu.addAction(self.workspaces.reset_action)
        self.view_menu.addSeparator()
        self.view_menu.addAction(self.compare_action)
        self.view_menu.addActions([self.whitespace_action, self.dark_action, self.monospace_action])
        self.view_menu.addMenu(token_colours_menu(self.state, self))
        self.view_menu.addSeparator()
        self.view_menu.addActions([self.zoom_in_action, self.zoom_out_action, self.zoom_reset_action])
        self.view_menu.addSeparator()
        samples_menu = bar.addMenu("&Samples")
        for q in QUIRKS:
            action = samples_menu.addAction(q.question)
            action.setStatusTip(description(q))
            action.triggered.connect(lambda checked=False, q=q: self.documents.open_sample(q))
        help_menu = bar.addMenu("&Help")
        help_menu.addActions([self.welcome_action, self.shortcuts_action, self.about_action])

    def _create_tool_bars(self) -> None:
        bar = self.addToolBar("Workspaces")
        bar.setObjectName("workspace_toolbar")
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        bar.addActions(list(self.workspaces.actions.values()))
        for button in bar.findChildren(QToolButton):
            button.setAutoRaise(False)  # the current one reads as pressed
        self.view_menu.addAction(bar.toggleViewAction())
        tb = self.addToolBar("Tokenizer")
        tb.setObjectName("tokenizer_toolbar")
        tb.addWidget(QLabel(" Tokenizer: "))
        self.tokenizer_box = QComboBox()
        self.tokenizer_box.setObjectName("tokenizer_picker")
        self.tokenizer_box.setMinimumContentsLength(14)
        self.tokenizer_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)  # no name clipped
        self.tokenizer_box.setToolTip("The tokenizer that colours the text")
        tb.addWidget(self.tokenizer_box)
        tb.addWidget(QLabel("  Special tokens: "))
        self.policy_box = QComboBox()
        self.policy_box.setObjectName("policy_picker")
        labels = {"refuse": "refuse (tiktoken default)", "all": "all: encode as special",
                  "none": "none: encode as text"}
        for policy in POLICIES:
            self.policy_box.addItem(labels[policy], policy)
        self.policy_box.setToolTip("What to do with text that spells a special token such as <|endoftext|>")
        tb.addWidget(self.policy_box)
        tb.addSeparator()
        # Dark Theme is in the View menu only: with it the bars overflowed a 1024 px wide window
        # (a 2560 px screen at 200 %) and it went behind the » extension. In a narrower window
        # the switches (in the View menu too) go behind it; when the pickers would, the bar takes
        # a row of its own (ToolBarRows).
        tb.addActions([self.compare_action, self.whitespace_action])
        self.view_menu.addAction(tb.toggleViewAction())
        self.tool_bar_rows = ToolBarRows(self, {tb: self.policy_box})
        self._fill_tokenizers()

    def _create_status_bar(self) -> None:
        self.counts_label = CountsLabel(self.state)
        self.busy_label = BusyLabel(self.state)
        self.progress_bar = QProgressBar()
        self.progress_bar.setMaximumWidth(200)
        self.progress_bar.hide()
        sb = self.statusBar()
        self.legend_action = self._action("Show &Legend", self.legend.setVisible, "Ctrl+Shift+L",
                                          "What the colours and marks in the text mean", checkable=True)
        self.view_menu.insertAction(self.whitespace_action, self.legend_action)
        sb.addPermanentWidget(self.progress_bar)
        sb.addPermanentWidget(self.busy_label)
        self.selection_counts = SelectionCountsLabel(self.state)
        sb.addPermanentWidget(self.selection_counts)
        sb.addPermanentWidget(LayoutFence(self.counts_label))  # its text changes at every keystroke

    def _create_docks(self) -> None:
        # name -> how to bring it to the front (`show_view`, `tokexplorer --view NAME`): a dock,
        # or a function for what is not a dock. Each dock adds itself through `_dock(view=...)`,
        # hidden: the workspace shown places and shows it (workspaces.WORKSPACES names it).
        self.views: dict[str, QDockWidget | Callable[[], None]] = {"editor": self.editor.setFocus}
        self.view_actions: dict[str, QAction] = {}  # view name -> its View menu item
        self.token_table = TokenTable(self.state)
        self.token_dock = self._dock("Token IDs", "token_ids_dock", self.token_table, "Ctrl+Shift+I", view="ids")
        self.chunk_view = ChunkView(self.state)
        self.chunk_dock = self._dock("Chunks", "chunks_dock", self.chunk_view, "Ctrl+Shift+K", view="chunks")
        self.vocab = VocabPanel(self.state)
        self.vocab_dock = self._dock("Vocabulary", "vocab_dock", self.vocab, "Ctrl+Shift+B", view="vocab")
        bottom = Qt.DockWidgetArea.BottomDockWidgetArea
        self.inspector = InspectorPanel(self.state)
        self.inspector_dock = self._dock("Inspector", "inspector_dock", self.inspector, "Ctrl+Shift+P",
                                         view="inspector", area=bottom)
        self.sweep_service = self.training_service = None  # made with the Plots and Training views
        # The views no workspace but Learn, Train and Chat shows are made when first shown (or
        # first asked for, as `window.learn`): their imports (pyqtgraph, the lessons) and widgets
        # are not paid for before the window appears. Each reads the state as it is when made.
        self.lazy_views: dict[str, LazyView] = {}
        for title, name, attr, shortcut, view, make in (
                ("Training", "training_dock", "training_panel", "Ctrl+Shift+R", "training", self._make_training),
                ("Merge Tree", "merge_tree_dock", "merge_tree", "Ctrl+Shift+T", "merges", self._make_merge_tree),
                ("Encode Trace", "trace_dock", "trace", "Ctrl+Shift+E", "trace", self._make_trace),
                ("Chat", "chat_dock", "chat", "Ctrl+Shift+H", "chat", self._make_chat),
                ("Plots", "plots_dock", "plots", "Ctrl+Shift+G", "plots", self._make_plots),
                ("BPE by Hand", "bpe_by_hand_dock", "bpe_by_hand", "Ctrl+Shift+U", "bpe", self._make_bpe_by_hand),
                ("Glitch Tokens", "glitch_dock", "glitch", "Ctrl+Shift+J", "glitch", self._make_glitch),
                ("Learn", "learn_dock", "learn", "Ctrl+Shift+N", "learn", self._make_learn)):
            self.lazy_views[attr] = LazyView(make)
            self._dock(title, name, self.lazy_views[attr], shortcut, view=view, area=bottom)
        self.merge_dock, self.trace_dock = self.views["merges"], self.views["trace"]
        self.chat_dock, self.plots_dock = self.views["chat"], self.views["plots"]
        self.training_dock = self.views["training"]
        self.views["compare"] = lambda: self.compare.set_active(True)

    # --- the views made when first shown (imported here, not at the top, for that reason) ---

    def __getattr__(self, name: str):
        lazy = self.__dict__.get("lazy_views", {}).get(name)
        if lazy is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return lazy.view()

    def _made(self, attr: str) -> bool:
        return self.lazy_views[attr].built

    def _make_training(self) -> QWidget:
        from tokexplorer.gui.panels.training import TrainingPanel

        from tokexplorer.gui.services.training import TrainingService

        self.training_service = TrainingService(self)
        return TrainingPanel(self.state, self.training_service, self.dialogs, self.editor.user_text)

    def _make_merge_tree(self) -> QWidget:
        from tokexplorer.gui.panels.merge_tree import MergeTreePanel

        return MergeTreePanel(self.state)

    def _make_trace(self) -> QWidget:
        from tokexplorer.gui.panels.trace import TracePanel

        return TracePanel(self.state)

    def _make_chat(self) -> QWidget:
        from tokexplorer.gui.panels.chat import ChatView

        return ChatView(self.state)

    def _make_plots(self) -> QWidget:
        from tokexplorer.gui.panels.plots import PlotsPanel

        from tokexplorer.gui.services.training import SweepService

        self.sweep_service = SweepService(self)
        return PlotsPanel(self.state, self.dialogs, self.sweep_service)

    def _make_bpe_by_hand(self) -> QWidget:
        from tokexplorer.gui.panels.bpe_by_hand import BpeByHandView

        return BpeByHandView(self.state)

    def _make_glitch(self) -> QWidget:
        from tokexplorer.gui.panels.glitch import GlitchView

        return GlitchView(self.state)

    def _make_learn(self) -> QWidget:
        from tokexplorer.gui.panels.learn import LearnView

        learn = LearnView(self.state)
        learn.step_opened.connect(  # the step's view: here, a tab for the step, or its workspace
            lambda step, text: self.documents.open_step(step, text)
            and learn.show_loaded(self.workspaces.show_for_step(step.view)))
        return learn

    def _dock(self, title: str, name: str, widget: QWidget, shortcut: str, *, view: str,
              area=Qt.DockWidgetArea.RightDockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)  # saveState needs it
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        dock.hide()
        self.view_actions[view] = self.workspaces.view_action(dock, shortcut)
        self.view_menu.addAction(self.view_actions[view])
        self.views[view] = dock
        return dock

    def show_view(self, name: str, *, switch: bool = False) -> None:
        """Bring the view called `name` (a key of `views`) to the front, as its View menu item
        does; with `switch` (--view), first go to a workspace that holds it if it is not open.
        KeyError if unknown."""
        if name not in self.views:
            raise KeyError(f"unknown view {name!r} (the views are: {', '.join(self.views)})")
        if switch:
            self.workspaces.switch_to_hold(name)
        view = self.views[name]
        if isinstance(view, QDockWidget):
            self.workspaces.bring_forward(view)
        else:
            view()

    def _connect(self) -> None:
        s = self.state
        self.selection_tracker = SelectionTracker(self.editor, s, self)
        self.editor.text_edited.connect(
            lambda: self.service.schedule(self.editor.document().characterCount()))
        self.editor.document().modificationChanged.connect(s.set_modified)
        self.editor.load_progress.connect(lambda done, total: self._progress("inserting text", done, total))
        self.documents.view_wanted.connect(lambda name: self.show_view(name, switch=True))  # a sample's
        self.service.result.connect(s.set_result)
        self.service.refused.connect(s.set_refusal)
        self.service.failed.connect(self._on_failed)
        self.service.busy.connect(s.set_busy)
        s.tokenizer_changed.connect(self._on_tokenizer_changed)
        s.tokenizers_changed.connect(self._fill_tokenizers)
        s.policy_changed.connect(self._on_policy_changed)
        # A new result answers an earlier error (a bad file, a refused text): it has gone.
        s.tokenized.connect(lambda r: r is not None and self.banner.kind == "error" and self.banner.clear())
        s.tokenized.connect(lambda r: r is not None and setattr(self, "_last_good", r.tokenizer))
        s.refusal_changed.connect(self._on_refusal)
        s.dark_changed.connect(self._on_dark)
        s.dark_changed.connect(self.banner.set_dark)
        s.show_whitespace_changed.connect(self.whitespace_action.setChecked)
        s.font_changed.connect(lambda: self.monospace_action.setChecked(s.monospace))
        s.document_changed.connect(self._update_title)
        self.tokenizer_box.currentIndexChanged.connect(
            lambda i: i >= 0 and s.set_tokenizer(self.tokenizer_box.itemText(i)))
        self.policy_box.currentIndexChanged.connect(lambda i: s.set_policy(self.policy_box.itemData(i)))

    # --- state -> widgets ----------------------------------------------------------------

    def _fill_tokenizers(self) -> None:
        box = self.tokenizer_box
        box.blockSignals(True)
        box.clear()
        for name in self.state.catalog.names():
            box.addItem(name)
            path = self.state.catalog.path_of(name)
            info = BUILTINS.get(name)
            tip = str(path) if path is not None else (
                f"{info.description} · {info.n_vocab:,} tokens · {info.family}" if info else "")
            box.setItemData(box.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        box.setCurrentText(self.state.tokenizer)
        box.blockSignals(False)

    def _on_tokenizer_changed(self, name: str) -> None:
        self.tokenizer_box.setCurrentText(name)
        self.service.submit()

    def _on_policy_changed(self, policy: str) -> None:
        self.policy_box.blockSignals(True)  # a document's own policy is not the global one
        self.policy_box.setCurrentIndex(self.policy_box.findData(policy))
        self.policy_box.blockSignals(False)
        self.service.submit()

    def _on_refusal(self, refusal: DisallowedSpecialError | None) -> None:
        if refusal is None:
            self.banner.clear("refusal")
            return
        self.banner.show_message(
            "refusal",
            f"The text spells the special token {refusal.token} (first at character {refusal.position}). "
            f"Under the “refuse” policy (tiktoken's default) {self.state.tokenizer} will not encode it: "
            "it is shown tokenized as plain text, marked in red. For this document:",
            [("Encode as special tokens", lambda: self.state.set_document_policy("all")),
             ("Encode as plain text", lambda: self.state.set_document_policy("none"))])

    def _on_failed(self, message: str) -> None:
        self.state.set_result(None)
        name, catalog = self.state.tokenizer, self.state.catalog
        path = catalog.path_of(name)
        if path is not None and not catalog.is_loaded(name) and name != self._last_good:
            # The file itself is bad: take it out of the picker and go back to the last good one.
            catalog.remove(path)
            self.state.tokenizers_changed.emit()
            self.state.set_tokenizer(self._last_good)
            text = f"Cannot open the tokenizer {path.name}: {message.rstrip('.')}. It was taken out of the picker."
            self.banner.show_message("note", text)  # a note: the next result must not clear it
            self.reported.emit(text)
            return
        if catalog.is_loaded(name) and name != self._last_good:
            # A tokenizer just picked cannot take this text (such as one too big for it to
            # encode whole): keep the picture with the one before, and say why.
            self.state.set_tokenizer(self._last_good)
            text = f"Cannot tokenize with {name}: {message.rstrip('.')}. Back to {self._last_good}."
            self.banner.show_message("note", text)
            self.reported.emit(text)
            return
        self._report("Cannot tokenize", message)

    def _on_crash(self, message: str, details: str) -> None:
        """An internal error (see `crash`): say so, offer the details, keep going."""
        self.banner.show_message("error", message, [
            ("Details…", lambda: self.dialogs.show_details("Internal error", message, details))])
        self.reported.emit(message)

    def copy_token_ids(self) -> None:
        """Put the ids of the tokens under the selection (all of them without one) on the clipboard."""
        result = self.state.result
        if result is None or not self.editor.tokens_current:
            self.statusBar().showMessage("no tokens to copy: the text is not tokenized (yet)", 4000)
            return
        cursor = self.editor.textCursor()
        if cursor.hasSelection():
            ids = [result.encoding.ids[i] for i in result.range16(cursor.selectionStart(), cursor.selectionEnd())]
        else:
            ids = result.encoding.id_array.tolist()
        QApplication.clipboard().setText(json.dumps(ids))
        self.statusBar().showMessage(f"copied {len(ids):,} {result.tokenizer} token ids", 4000)

    def _zoom(self, step: int) -> None:
        self.state.set_font(size=self.editor.font_size() + step)

    def _on_dark(self, dark: bool) -> None:
        self.dark_action.setChecked(dark)
        app = QApplication.instance()
        if app is not None:
            app.setPalette(application_palette(dark))

    def _update_title(self) -> None:
        self.setWindowTitle(f"{display_name(self.state.path)}[*] — tokexplorer")
        self.setWindowModified(self.state.modified)

    def _progress(self, what: str, done: int, total: int) -> None:
        self.progress_bar.setVisible(done < total)
        self.progress_bar.setRange(0, max(total, 1))
        self.progress_bar.setValue(done)
        self.progress_bar.setFormat(f"{what} %p%")

    def _report(self, title: str, message: str) -> None:
        """The one place errors reach the user: a banner, so nothing blocks (and the status bar,
        for a workspace that hides the text and its banner)."""
        self.banner.show_message("error", f"{title}: {message}")
        self.statusBar().showMessage(f"{title}: {message}", 15000)
        self.reported.emit(f"{title}: {message}")

    # --- drag and drop -------------------------------------------------------------------

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls() and all(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        self.documents.open_paths([Path(url.toLocalFile()) for url in event.mimeData().urls()])
        event.acceptProposedAction()

    # --- help ----------------------------------------------------------------------------

    def show_shortcuts(self) -> None:
        rows = [(name, QKeySequence(key).toString(QKeySequence.SequenceFormat.NativeText)) for name, key in SHORTCUTS]
        rows += [(a.text().replace("&", ""), a.shortcut().toString(QKeySequence.SequenceFormat.NativeText))
                 for a in (self.open_tokenizer_action, self.copy_ids_action, self.legend_action,
                           self.whitespace_action,
                           self.dark_action,
                           self.monospace_action, self.zoom_in_action, self.zoom_out_action,
                           self.zoom_reset_action, *self.workspaces.actions.values(),
                           *self.view_actions.values())]
        body = "".join(f"<tr><td>{n}</td><td><b>{k}</b></td></tr>" for n, k in rows)
        self.dialogs.show_info("Keyboard shortcuts", f"<table>{body}</table>")

    def show_about(self) -> None:
        self.dialogs.show_info("About tokexplorer", about_html())

    # --- closing -------------------------------------------------------------------------

    def wait_for_jobs(self, msecs: int) -> None:
        """Wait until no job of the window runs in the global pool, up to `msecs`.

        subtle: a job still running when the process exits emits into signals Python is
        tearing down: a crash on exit (3 in 12 error exits of `--screenshot` on the C heap
        without fast bins, where freed memory is reused at once)."""
        QThreadPool.globalInstance().waitForDone(msecs)

    def closeEvent(self, event) -> None:
        if not ((not self._made("training_panel") or self.training_panel.may_close())
                and (not self._made("plots") or self.plots.may_close()) and self.documents.maybe_save()):
            event.ignore()
            return
        self.window_settings.save()
        self.autosave.close()  # a clean exit keeps no unsaved text
        for service in (self.training_service, self.sweep_service):  # no trainer outlives the window
            if service is not None:
                service.shutdown()
        self.wait_for_jobs(3000)
        self.service.close()  # the server forgets this window's documents
        self.compare.close_documents()
        event.accept()
