"""Workspaces: a named arrangement of the window's docks for each task (explore one tokenizer,
compare several, learn, train, chat), picked from the workspace bar, View > Workspace or
Ctrl+1..Ctrl+5; and the one way a single view is brought forward.

`WORKSPACES` is the table: which views sit in which dock area, tabbed together, and how much of
the window they take. `Workspaces` applies one to a `MainWindow`: the docks it does not list are
hidden, those it lists are placed, tabbed, sized and the first of each group raised. Each workspace
remembers how the user left it (`QMainWindow.saveState`, one per workspace in QSettings); Reset
Layout goes back to the table's arrangement. The current workspace is remembered across runs.

The window keeps its screen: a switch first hides the docks shown, then gives the window the size
it had when this workspace was last left (else the size it had before the switch), then places the
docks. The window grows only as far as the docks' minimum sizes need, never past the screen's
available geometry: where even that does not fit, the minimum widths (or heights) of the views
shown are lowered until it does (`fit_screen`), again if a view grows later. Qt's offscreen
stand-in screen is not fitted (window_settings.real_screen).

`bring_forward` shows a dock, raises it from behind a tab and gives it focus: the View menu's
items, their shortcuts, `MainWindow.show_view` and `--view` all go through it.

`show_for_step` is how a Learn step's view comes forward, under one rule: a view the workspace
holds is brought forward; a dock of a workspace that shows the text beside it (the inspector, Token
IDs, Chunks: Explore's) is shown here as a guest, a tab in the workspace's first tab group, until
the next step is loaded or the workspace is left, and is never saved in its layout; a view that
has a workspace to itself (Compare, Train, Chat) takes the window there. It answers with one
sentence saying which happened, for the Learn view and the status bar.

It creates no view: the window makes the docks and names them in `window.views`. A name the table
lists that the window lacks is skipped, so a view added later joins a workspace by its name here
and one `_dock` call in `main_window.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QByteArray, QCoreApplication, QEvent, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QDockWidget, QWidget

from tokexplorer.gui import settings as keys
from tokexplorer.gui.window_settings import fitted, real_screen

AREAS = {"left": Qt.DockWidgetArea.LeftDockWidgetArea, "right": Qt.DockWidgetArea.RightDockWidgetArea,
         "bottom": Qt.DockWidgetArea.BottomDockWidgetArea}
LAYOUT_VERSION = 1  # saveState's version: a layout saved by an older table is not restored
FLOOR = 160  # px: a view's minimum width or height is never lowered below this to fit a screen


@dataclass(frozen=True)
class Group:
    """Docks tabbed together in one dock area, the first in front."""

    area: str  # a key of AREAS
    views: tuple[str, ...]  # names of `MainWindow.views`
    size: float  # share of the window's width (left, right) or height (bottom)


@dataclass(frozen=True)
class Workspace:
    name: str  # on the bar and in the menu; `--workspace` takes it in any case
    shortcut: str
    tip: str
    groups: tuple[Group, ...]
    compare: bool = False  # the compare panes fill the central area
    text: bool = True  # the central area (the text) is shown; else the docks share the window

    def holds(self, view: str) -> bool:
        return (view == "editor" and self.text) or (view == "compare" and self.compare) or any(
            view in g.views for g in self.groups)


WORKSPACES = (
    Workspace("Explore", "Ctrl+1", "One tokenizer: the text, its token ids, chunks and vocabulary, the inspector",
              (Group("right", ("ids", "chunks", "vocab"), 0.28), Group("bottom", ("inspector",), 0.30))),
    Workspace("Compare", "Ctrl+2", "The text in 2 to 4 tokenizers side by side, filling the window",
              (), compare=True),
    Workspace("Learn", "Ctrl+3", "How a tokenizer is built and runs: lessons, BPE by hand, merge trees, "
              "encode traces, glitch tokens",
              # one tab group the window's height: below the lesson, the merge tree's minimum
              # height left the step's text and numbers three lines on a 768-pixel screen
              (Group("right", ("learn", "bpe", "glitch", "merges", "trace", "vocab"), 0.55),)),
    # The plots need about 760 px and the training form 350: beside the text they do not fit a
    # 1366-pixel screen, so here they have the window to themselves, as the chat view (which
    # shows its own text) does.
    Workspace("Train", "Ctrl+4", "Train a tokenizer on a corpus and plot what it does",
              (Group("left", ("training",), 0.36), Group("right", ("plots",), 0.64)), text=False),
    Workspace("Chat", "Ctrl+5", "A conversation as the chat model receives it",
              (Group("right", ("chat",), 0.62),), text=False),
)


def find_workspace(name: str, workspaces=WORKSPACES) -> Workspace:
    """The workspace called `name` (any case); KeyError naming the known ones."""
    for ws in workspaces:
        if ws.name.lower() == name.lower():
            return ws
    raise KeyError(f"unknown workspace {name!r} (the workspaces are: {', '.join(w.name for w in workspaces)})")


def in_front(dock: QDockWidget) -> bool:
    """Whether the dock is on screen: shown, and not a tab behind another.

    subtle: Qt keeps a tabbed dock that is not the current tab visible, moved off the window;
    only its empty visible region tells."""
    return dock.isVisible() and not dock.widget().visibleRegion().isEmpty()


def focus_target(widget: QWidget) -> QWidget:
    """What takes the keyboard in a view: the view itself, or its first child that takes focus."""
    if widget.focusPolicy() != Qt.FocusPolicy.NoFocus:
        return widget
    for child in widget.findChildren(QWidget):
        if child.focusPolicy() & Qt.FocusPolicy.TabFocus and child.isEnabled() and child.isVisibleTo(widget):
            return child
    return widget


def minimum(view: QWidget, across: bool) -> int:
    """A view's minimum width (`across`) or height: the one set on it, else its own hint."""
    if across:
        return view.minimumWidth() or view.minimumSizeHint().width()
    return view.minimumHeight() or view.minimumSizeHint().height()


class Workspaces(QObject):
    """Applies `WORKSPACES` to a main window and keeps each one's layout in `settings`.

    `actions` (checkable, one checked) go to the workspace bar and the View menu; `reset_action`
    is View > Reset Layout."""

    changed = Signal(str)  # the name of the workspace now shown

    def __init__(self, window, settings, workspaces=WORKSPACES):
        super().__init__(window)
        self.window, self.settings, self.workspaces = window, settings, workspaces
        self.current: Workspace | None = None
        self.group = QActionGroup(self)
        self.actions: dict[str, QAction] = {}
        for ws in workspaces:
            action = QAction(ws.name, self)
            action.setCheckable(True)
            action.setShortcut(QKeySequence(ws.shortcut))
            action.setStatusTip(ws.tip)
            action.setToolTip(f"{ws.tip} ({ws.shortcut})")
            action.triggered.connect(lambda checked=False, name=ws.name: self.switch(name))
            self.group.addAction(action)
            self.actions[ws.name] = action
        self.reset_action = QAction("Reset &Layout", self)
        self.reset_action.setStatusTip("Put this workspace's views back where they start")
        self.reset_action.triggered.connect(self.reset)
        self.sizes: dict[str, QSize] = {}  # workspace name -> the window's size when it was last left
        self.guest: QDockWidget | None = None  # a step's view shown here for the step (show_for_step)
        self._host: QDockWidget | None = None  # the dock whose tab group the guest joined
        self._lowered: dict[QWidget, QSize] = {}  # view -> its minimum size before fit_screen lowered it
        self._refits = 0  # late fits left for the workspace shown (eventFilter)
        window.installEventFilter(self)

    # --- the window's docks --------------------------------------------------------------

    def docks(self) -> dict[str, QDockWidget]:
        return {name: v for name, v in self.window.views.items() if isinstance(v, QDockWidget)}

    def view_action(self, dock: QDockWidget, shortcut: str) -> QAction:
        """The View menu's item for a dock: shows it and brings it forward; a second press on a
        dock already in front hides it. Checked while the dock is open (in front or not)."""
        action = QAction(dock.windowTitle(), self)
        action.setCheckable(True)
        action.setShortcut(QKeySequence(shortcut))
        action.setStatusTip(f"Show the {dock.windowTitle()} view")
        dock.toggleViewAction().toggled.connect(action.setChecked)

        def toggle() -> None:
            if in_front(dock):
                dock.hide()
            else:
                self.bring_forward(dock)
            action.setChecked(not dock.isHidden())

        action.triggered.connect(toggle)
        return action

    def bring_forward(self, dock: QDockWidget) -> None:
        """Show the dock, in front of any it is tabbed with, and give its view the keyboard.

        A dock the current workspace does not show joins the tab group of a dock shown in its
        area, so it takes that group's room rather than squeezing it."""
        if dock.isHidden() and not dock.isFloating():
            area = self.window.dockWidgetArea(dock)
            shown = [d for d in self.docks().values()
                     if d is not dock and not d.isHidden() and not d.isFloating()
                     and self.window.dockWidgetArea(d) == area]
            if shown:
                self.window.tabifyDockWidget(shown[0], dock)
        dock.show()
        dock.raise_()
        focus_target(dock.widget()).setFocus(Qt.FocusReason.OtherFocusReason)

    # --- a Learn step's view -------------------------------------------------------------

    def show_for_step(self, view: str) -> str:
        """Bring a step's view (a name of `window.views`) forward under the module's rule: held
        here, a guest tab, or a switch. Answers the sentence that says what happened ("" when the
        view was here), also shown in the status bar."""
        self.dismiss_guest()
        dock = self.docks().get(view)
        title = dock.windowTitle() if dock is not None else "The compare view"
        if self.current is None or self.current.holds(view) or (dock is not None and not dock.isHidden()):
            self.window.show_view(view)
            return ""
        home = next(ws for ws in self.workspaces if ws.holds(view))
        here = self.current
        host = next((d for g in here.groups for name in g.views
                     if (d := self.docks().get(name)) is not None and not d.isHidden() and not d.isFloating()),
                    None)
        if dock is not None and home.text and not home.compare and here.text and host is not None:
            self.window.tabifyDockWidget(host, dock)
            self.bring_forward(dock)
            self.guest, self._host = dock, host
            said = (f"{title}, a view of the {home.name} workspace, is shown here as a tab for this "
                    f"step; it leaves with the next step or the {here.name} workspace.")
        else:
            self.switch(home.name)
            self.window.show_view(view)
            said = (f"{title} is in the {home.name} workspace: the step opened there. {here.shortcut} "
                    f"comes back to {here.name}.")
        self.window.statusBar().showMessage(said, 10000)
        return said

    def dismiss_guest(self) -> None:
        """The step's guest view leaves the workspace (hidden, as it was before the step); when it
        was in front, the tab it joined comes forward (Qt would raise the tab beside it)."""
        if self.guest is not None:
            front = in_front(self.guest)
            self.guest.hide()
            if front and not self._host.isHidden():
                self._host.raise_()
            self.guest = self._host = None

    # --- switching -----------------------------------------------------------------------

    def names(self) -> list[str]:
        return [ws.name for ws in self.workspaces]

    def restore(self) -> None:
        """The workspace of the last run, as it was left (the compare mode is the settings' own)."""
        name = str(self.settings.value(keys.WORKSPACE, self.workspaces[0].name))
        try:
            ws = find_workspace(name, self.workspaces)
        except KeyError:
            ws = self.workspaces[0]
        self._enter(ws)

    def switch(self, name: str) -> None:
        """Show the workspace called `name`, as the user left it, else as the table has it, in
        the window's size of then, else of now."""
        ws = find_workspace(name, self.workspaces)
        if ws is self.current:
            self.actions[ws.name].setChecked(True)
            return
        size = self.sizes.get(ws.name, self.window.size())
        self.save_layout()
        if self.current is not None:
            self.sizes[self.current.name] = self.window.size()
        self._refits = 0
        self._hide_docks()
        self.window.compare.set_active(ws.compare)  # before the window is sized: the panes' minimum
        self._enter(ws, size)

    def switch_to_hold(self, view: str) -> None:
        """For a view asked for by name: stay when it is open or the workspace holds it, else go
        to the first workspace that does."""
        dock = self.docks().get(view)
        if (dock is not None and not dock.isHidden()) or (self.current and self.current.holds(view)):
            return
        for ws in self.workspaces:
            if ws.holds(view):
                self.switch(ws.name)
                return

    def reset(self) -> None:
        """View > Reset Layout: the current workspace as the table has it."""
        if self.current is None:
            return
        self.guest = self._host = None  # arrange hides it with the rest
        self.settings.remove(keys.workspace_layout(self.current.name))
        self.arrange(self.current)
        self.fit_screen(self.window.size())
        self.window.compare.set_active(self.current.compare)

    def save_layout(self) -> None:
        """Keep how the current workspace looks now (called on a switch and when the window
        closes); a step's guest view leaves first, so the layout never keeps it."""
        self.dismiss_guest()
        if self.current is not None:
            self.settings.setValue(keys.workspace_layout(self.current.name), self.window.saveState(LAYOUT_VERSION))

    def _hide_docks(self) -> None:
        for dock in self.docks().values():
            dock.hide()

    def _enter(self, ws: Workspace, size: QSize | None = None) -> None:
        """Show `ws` in a window of `size` (else the window's size now)."""
        w = self.window
        size = size or w.size()
        # subtle: the docks of the workspace left go first, and the window takes its size before
        # the new docks come: their minimums and those left behind would add up and hold it wide.
        self._hide_docks()
        self._restore_minimums()
        self.current = ws
        w.centralWidget().setVisible(ws.text)
        if not (w.isMaximized() or w.isFullScreen()):
            w.resize(size)
        self.settings.setValue(keys.WORKSPACE, ws.name)
        self.actions[ws.name].setChecked(True)
        layout = self.settings.value(keys.workspace_layout(ws.name))
        if not (isinstance(layout, QByteArray) and not layout.isEmpty()
                and w.restoreState(layout, LAYOUT_VERSION)):
            self.arrange(ws)
        self.fit_screen(size)
        self._refits = 3
        self.changed.emit(ws.name)

    # --- the window within its screen ----------------------------------------------------

    def fit_screen(self, size: QSize) -> None:
        """Give the window `size`, or as near as the docks shown allow, inside the screen's
        available geometry: minimum widths and heights too large for it are lowered (never below
        FLOOR), the window moved to stay on the screen. A maximized window is left as it is."""
        w = self.window
        if w.isMaximized() or w.isFullScreen():
            return
        if not real_screen():
            w.resize(size)
            return
        available = w.screen().availableGeometry()
        frame = w.frameGeometry().size() - w.geometry().size()  # the title bar and borders
        room = QSize(available.width() - frame.width(), available.height() - frame.height())
        for across in (True, False):
            self._lower_minimums(room, across)
        self._settle()
        w.resize(size.boundedTo(room).expandedTo(w.minimumSizeHint()).boundedTo(room))
        w.move(fitted(w.frameGeometry(), available).topLeft())  # a window's pos is its frame's

    def eventFilter(self, watched, event) -> bool:
        """A view that grows its minimum later (made when first shown, or filled by an answer)
        can push the window past the screen after the switch: then it is fitted again, a few
        times per workspace shown at most (a window that cannot fit is not fought over)."""
        if (watched is self.window and event.type() == QEvent.Type.Resize and self._refits > 0
                and real_screen() and not self.window.isMaximized()):
            available = self.window.screen().availableGeometry().size()
            frame = self.window.frameGeometry().size()
            if frame.width() > available.width() or frame.height() > available.height():
                self._refits -= 1
                QTimer.singleShot(0, self, lambda: self.fit_screen(self.window.size()))
        return False

    def _lower_minimums(self, room: QSize, across: bool) -> None:
        """Lower the minimum widths (`across`) or heights of the docks shown until the window's
        minimum fits `room`; a few rounds, as tabbed and side-by-side docks count differently."""
        w = self.window
        areas = {AREAS["left"], AREAS["right"]} if across else {AREAS["bottom"]}
        for _ in range(4):
            self._settle()
            need = w.minimumSizeHint()
            excess = (need.width() - room.width()) if across else (need.height() - room.height())
            shown = [d for d in self.docks().values()
                     if not d.isHidden() and not d.isFloating() and w.dockWidgetArea(d) in areas]
            if excess <= 0 or not shown:
                return
            cut = -(-excess // len({w.dockWidgetArea(d) for d in shown}))  # each area gives its part
            lowered = False
            for dock in shown:
                view = dock.widget()
                now = minimum(view, across)
                if now > FLOOR:
                    lowered = True
                    self._lowered.setdefault(view, view.minimumSize())
                    if across:
                        view.setMinimumWidth(max(FLOOR, now - cut))
                    else:
                        view.setMinimumHeight(max(FLOOR, now - cut))
                    dock.layout().invalidate()
            if not lowered:
                return

    def _settle(self) -> None:
        """Lay the window out now, so its minimum size is that of the docks shown.

        subtle: a minimum changed inside a dock (a view made when its dock is first shown,
        gui/widgets/lazy_view.py) reaches the window's layout only through posted layout requests,
        one level of widgets at a time."""
        for _ in range(4):
            self.window.layout().invalidate()
            self.window.layout().activate()
            QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)

    def _restore_minimums(self) -> None:
        for view, size in self._lowered.items():
            view.setMinimumSize(size)  # (0, 0): the view's own minimum size hint again
        self._lowered.clear()

    def arrange(self, ws: Workspace) -> None:
        """Place the workspace's docks as the table has it and hide every other dock."""
        w = self.window
        docks = self.docks()
        # subtle: hidden first, then placed: docks shown side by side for a moment add up their
        # widths, and the window grows past the screen, never to shrink back.
        for dock in docks.values():
            dock.hide()
        sized: list[tuple[QDockWidget, Group]] = []
        for group in ws.groups:
            present = [docks[name] for name in group.views if name in docks]
            if not present:
                continue
            for dock in present:
                dock.setFloating(False)
                w.addDockWidget(AREAS[group.area], dock)
            for dock in present[1:]:
                w.tabifyDockWidget(present[0], dock)
            for dock in present:
                dock.show()
            present[0].raise_()
            sized.append((present[0], group))
        for dock, group in sized:
            across = group.area != "bottom"
            length = w.width() if across else w.height()
            w.resizeDocks([dock], [round(group.size * length)],
                          Qt.Orientation.Horizontal if across else Qt.Orientation.Vertical)
