"""Start the desktop application: `tokexplorer` with no sub-command ends up in `run_gui`.

Options: --open FILE (with --encoding NAME if it is not UTF-8); -t/--tokenizer NAME, repeatable:
the first is shown, all join the picker; --screenshot PATH: wait until the text is tokenized and
coloured, save a PNG of the window and exit (with several -t, one PNG per tokenizer, named
PATH-NAME.png), printing one JSON line per PNG (its path, the view, the tokenizer and the status
bar's counts); --workspace NAME shows that workspace (Explore, Compare, Learn, Train, Chat:
gui/workspaces.py); --view NAME brings that view to the front (the editor, a dock:
`MainWindow.views`), in a workspace that holds it if it is not open;
--view compare with several -t shows one pane per tokenizer, in one PNG);
--select START[:END] selects those code points (or puts the caret at START) once the text is
tokenized; --settings-dir DIR keeps settings in DIR/tokexplorer.ini instead of the user's (a
screenshot without it uses a fresh temporary folder: it never changes the user's settings).
--probe-startup starts as a first start does (the welcome text), prints the times of the window's
first paint and of its first paint with the text's tokens coloured, and exits (`tokexplorer bench
--startup`, `--gui`).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Callable

from tokexplorer.core.headless import PLATFORM_VARIABLE, has_screen, use_offscreen

SCREENSHOT_TIMEOUT_S = 120.0
APP_ID = "io.github.tokexplorer.tokexplorer"  # packaging/*.desktop and *.metainfo.xml are named so
ICON_SIZES = (16, 32, 48, 64, 128, 256, 512)


def window_parser() -> argparse.ArgumentParser:
    """The window's options (`tokexplorer --help` lists them too)."""
    p = argparse.ArgumentParser(prog="tokexplorer", description="Open the tokexplorer window.")
    p.add_argument("file", nargs="?", metavar="FILE", help="open this text file (as --open FILE)")
    p.add_argument("--open", metavar="FILE", help="open this text file")
    p.add_argument("--encoding", help="the file's encoding when it is not UTF-8 (e.g. latin-1)")
    p.add_argument("-t", "--tokenizer", action="append", default=[], metavar="NAME",
                   help="a built-in tokenizer or a tokenizer file; repeat to add more")
    p.add_argument("--screenshot", metavar="PATH", help="save a PNG of the window once coloured, then exit")
    p.add_argument("--workspace", metavar="NAME",
                   help="show this workspace: Explore, Compare, Learn, Train or Chat (else the last one)")
    p.add_argument("--view", metavar="NAME", help="show this view: editor (the default), or a panel's name")
    p.add_argument("--select", metavar="START[:END]", type=parse_select,
                   help="select these characters (code-point offsets), or put the caret at START")
    p.add_argument("--settings-dir", metavar="DIR", help="keep settings in DIR instead of the user's")
    p.add_argument("--probe-startup", action="store_true", help=argparse.SUPPRESS)
    return p


def parse_args(argv: list[str]) -> argparse.Namespace:
    args = window_parser().parse_args(argv)
    if args.file and args.open and args.file != args.open:
        window_parser().error("give one file to open, as FILE or --open FILE")
    args.open = args.open or args.file
    return args


def parse_select(value: str) -> tuple[int, int]:
    """--select: "START:END" or "START" (a caret), code-point offsets.

    >>> parse_select("3:7"), parse_select("5")
    ((3, 7), (5, 5))
    """
    parts = value.split(":")
    try:
        start, end = (int(parts[0]), int(parts[-1])) if len(parts) <= 2 else (-1, -1)
    except ValueError:
        start = end = -1
    if start < 0 or end < start:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not START[:END] (code-point offsets, 0 <= START <= END)")
    return start, end


def screenshot_paths(path: str, names: list[str]) -> list[Path]:
    """One PNG per tokenizer: PATH itself for one, PATH-NAME.png for several.

    >>> [str(p) for p in screenshot_paths("out/a.png", ["gpt2", "llama-sp"])]
    ['out/a-gpt2.png', 'out/a-llama-sp.png']
    """
    p = Path(path)
    if len(names) <= 1:
        return [p]
    return [p.with_name(f"{p.stem}-{Path(n).name}{p.suffix or '.png'}") for n in names]


def settled(window) -> bool:
    """Nothing left to do: tokenizer loaded, text tokenized (or refused), the open views up to date
    (the editor paints the result's colours on its next paint; a closed dock waits until opened)."""
    return (window.service.idle and not window.state.busy and not window.editor.isReadOnly()
            and (window.state.result is not None or window.state.refusal is not None
                 or window.banner.kind == "error")
            and all(getattr(view.widget(), "up_to_date", True) or view.isHidden()
                    for view in window.views.values() if hasattr(view, "widget"))
            and window.compare.up_to_date)


def when_settled(window, then: Callable[[], None], timeout_s: float) -> None:
    """Call `then` once `settled(window)`, polling from the event loop; give up after timeout_s."""
    from PySide6.QtCore import QTimer

    deadline = time.monotonic() + timeout_s

    def poll() -> None:
        if settled(window):
            then()
        elif time.monotonic() > deadline:
            print("tokexplorer: error: timed out waiting for the text to be tokenized", file=sys.stderr)
            window.app_exit(1)
        else:
            QTimer.singleShot(30, poll)

    QTimer.singleShot(30, poll)


def run_gui(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.settings_dir:
        os.environ["TOKEXPLORER_SETTINGS_DIR"] = args.settings_dir
    elif args.screenshot or args.probe_startup:  # a picture never changes the user's settings
        import atexit
        import shutil
        import tempfile

        folder = tempfile.mkdtemp(prefix="tokexplorer-settings-")
        os.environ["TOKEXPLORER_SETTINGS_DIR"] = folder
        atexit.register(shutil.rmtree, folder, ignore_errors=True)  # (the last exit handler to run)
    problem = display_problem()
    if problem is not None:
        # subtle: Qt aborts the process (qFatal) where it cannot open a window; say what to do.
        if not (args.screenshot or args.probe_startup):
            print(f"tokexplorer: error: {problem}", file=sys.stderr)
            return 2
        use_offscreen(always=True, replace=True)  # a screenshot needs no screen
    from tokexplorer.server import launch

    launch.start_early()  # the server imports its modules on another core while the window imports Qt
    from PySide6.QtCore import QTimer, qInstallMessageHandler
    from PySide6.QtWidgets import QApplication

    from tokexplorer.core.tokenizer import TokexplorerError
    from tokexplorer.gui.services import crash
    from tokexplorer.gui.main_window import MainWindow
    from tokexplorer.gui.widgets.theme_style import ThemeStyle

    qInstallMessageHandler(_qt_message)
    crash.install()

    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "tokexplorer"])
    app.setApplicationName("tokexplorer")
    app.setOrganizationName("tokexplorer")
    app.setStyle(ThemeStyle())  # Fusion, with check boxes one can see in the dark theme
    app.setDesktopFileName(APP_ID)  # the .desktop file's name: desktops match the window to it
    app.setWindowIcon(app_icon())
    headless = bool(args.screenshot or args.probe_startup)
    window = MainWindow(dialogs=HeadlessDialogs() if headless else None)
    exit_code = [0]

    def app_exit(code: int) -> None:
        exit_code[0] = code
        window.editor.document().setModified(False)  # nothing to ask about when exiting on purpose
        window.close()
        app.exit(code)

    window.app_exit = app_exit
    if headless:
        window.dialogs.fail = app_exit
        # Nobody is there to read the banner: an error ends the run, and says why.
        window.reported.connect(lambda message: (print(f"tokexplorer: error: {message}", file=sys.stderr),
                                                 app_exit(1)))
    names = []
    try:
        for t in args.tokenizer:
            names.append(t if t in window.state.catalog.names() else _add_tokenizer_file(window, t))
    except TokexplorerError as exc:
        print(f"tokexplorer: error: {exc}", file=sys.stderr)
        return 1
    if args.view == "compare" and len(names) > 1:
        window.compare.set_tokenizers(names)  # one pane each, in one picture
        names = []
    elif names:
        window.state.set_tokenizer(names[0])
    restored = not headless and window.autosave.recover()  # text a crash left unsaved
    if args.open:
        if not Path(args.open).is_file():
            print(f"tokexplorer: error: no such file: {args.open}", file=sys.stderr)
            return 1
        window.autosave.after_restore(  # a restored text first: opening asks about saving it
            lambda: window.documents.open_text(Path(args.open), encoding=args.encoding, asked=not restored))
    elif window.window_settings.first_run and not restored:
        window.documents.show_welcome()
    if args.view is not None and args.view not in window.views:
        print(f"tokexplorer: error: unknown view {args.view!r}; the views are: {', '.join(window.views)}",
              file=sys.stderr)
        return 2
    if args.workspace is not None and args.workspace.lower() not in map(str.lower, window.workspaces.names()):
        print(f"tokexplorer: error: unknown workspace {args.workspace!r}; the workspaces are: "
              f"{', '.join(window.workspaces.names())}", file=sys.stderr)
        return 2
    window.show()
    if args.workspace is not None:
        window.workspaces.switch(args.workspace)
    if args.view is not None:
        window.show_view(args.view, switch=True)
    # Ctrl-C in the terminal closes the window (asking about unsaved changes, as the menu does).
    # subtle: Python runs signal handlers only between bytecodes; a timer lets it in now and then.
    signal.signal(signal.SIGINT, lambda *_: window.close())
    wake = QTimer()
    wake.timeout.connect(lambda: None)
    wake.start(250)
    if args.probe_startup:
        _report_first_paint(window)
    elif args.screenshot:
        _take_screenshots(window, screenshot_paths(args.screenshot, names or [window.state.tokenizer]),
                          names, args.select, args.view or "editor")
    elif args.select is not None:
        when_settled(window, lambda: select_code_points(window, *args.select), SCREENSHOT_TIMEOUT_S)
    app.exec()
    window.wait_for_jobs(3000)  # (a job started after the window closed: none may outlive it)
    return exit_code[0]


# What Qt's xcb platform plugin needs beyond a desktop's usual libraries (Qt for X11's docs).
X11_PACKAGES = ("libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "libxcb-image0",
                "libxcb-render-util0", "libxcb-shape0", "libxcb-randr0", "libxcb-xkb1",
                "libxkbcommon-x11-0")


def display_problem() -> str | None:
    """Why Qt could not open a window here (no display, a missing X11 library), or None."""
    if not sys.platform.startswith("linux") or (os.environ.get(PLATFORM_VARIABLE) or "xcb") != "xcb":
        return None
    if not has_screen():
        return ("no display to open the window on (DISPLAY is not set); use a sub-command "
                "(tokexplorer --help), or --screenshot PATH")
    missing = missing_x11_library()
    if missing is not None:
        return (f"Qt cannot open a window on the X display: {missing}. On Debian or Ubuntu: sudo apt "
                f"install {' '.join(X11_PACKAGES)}. The sub-commands work without it (tokexplorer --help).")
    return None


def missing_x11_library(plugin: Path | None = None) -> str | None:
    """Why Qt's X11 plugin would fail to load here ("libxcb-icccm.so.4 is missing"), or None.

    Checked only where Qt would use X11 (DISPLAY set, no Wayland); `plugin` is for tests. Loading
    the plugin resolves every library it needs, as Qt will.
    """
    if plugin is None:
        if not os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
            return None  # Qt would use Wayland, or nothing
        import PySide6

        plugin = Path(PySide6.__file__).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
        if not plugin.is_file():
            return None
    import ctypes
    import re

    try:
        ctypes.CDLL(str(plugin))
    except OSError as exc:
        found = re.search(r"([\w.+-]+\.so[\w.]*): cannot open shared object file", str(exc))
        return f"{found.group(1)} is missing" if found else f"its plugin does not load ({exc})"
    return None


class HeadlessDialogs:
    """For --screenshot: nobody is there to answer, so a question that matters ends the run."""

    def __init__(self):
        self.fail: Callable[[int], None] = sys.exit

    def choose_encoding(self, error) -> None:
        print(f"tokexplorer: error: {error}", file=sys.stderr)
        self.fail(1)

    def ask_unsaved(self, name: str) -> str:
        return "discard"  # the screenshot run never edits the text

    def show_details(self, title: str, text: str, details: str) -> None:
        pass  # the error itself ends the run (MainWindow.reported)


# Qt warnings that say nothing to a user (the offscreen platform cannot resize to hints).
_QUIET = ("This plugin does not support propagateSizeHints",)


def app_icon():
    """The window icon at every size the package carries (resources/icons)."""
    from PySide6.QtGui import QIcon

    from tokexplorer.core.resources import resource_path

    icon = QIcon()
    for size in ICON_SIZES:
        icon.addFile(str(resource_path("icons", f"tokexplorer-{size}.png")))
    return icon


def _qt_message(mode, context, message: str) -> None:
    if not message.startswith(_QUIET):
        print(message, file=sys.stderr)


def _add_tokenizer_file(window, path: str) -> str:
    from tokexplorer.core.files.file_budget import check_regular
    from tokexplorer.core.tokenizer import TokexplorerError

    if not os.path.lexists(path):
        raise TokexplorerError(f"unknown tokenizer {path!r}: not a built-in "
                               f"({', '.join(window.state.catalog.names())}) and not a file")
    check_regular(path, what="tokenizer file")  # a socket, a folder, a link loop: said as such
    return window.state.add_tokenizer_file(path)


def _report_first_paint(window) -> None:
    """Print {"visible_at": ..., "coloured_at": ...} (wall-clock times) once the editor has painted,
    and once it has painted the text's tokens (a first start's welcome text), then exit."""
    from PySide6.QtCore import QTimer

    times: dict[str, float] = {}

    def poll() -> None:
        painted = window.editor.painted_at
        if painted and "visible_at" not in times:
            times["visible_at"] = time.time()
        coloured = window.state.result is not None and settled(window)
        if coloured and "settled_at" not in times:
            times["settled_at"] = time.time()
            window.editor.painted_at = 0.0
            window.editor.viewport().update()  # the paint that shows the tokens' colours
        elif "settled_at" in times and painted:
            print(json.dumps({"visible_at": times["visible_at"], "coloured_at": time.time()}), flush=True)
            window.app_exit(0)
            return
        QTimer.singleShot(2, poll)

    poll()


def select_code_points(window, start: int, end: int) -> bool:
    """Select code points [start, end) of the tokenized text (a caret at start when equal), as Qt's
    UTF-16 positions; False, with a message, when the text is shorter."""
    from PySide6.QtGui import QTextCursor

    from tokexplorer.gui.editor.selection import utf16_at

    result = window.state.result
    length = len(result.encoding.text) if result is not None else 0
    if end > length:
        print(f"tokexplorer: error: --select {start}:{end} is past the end of the text "
              f"({length} characters)", file=sys.stderr)
        return False
    cursor = window.editor.textCursor()
    cursor.setPosition(utf16_at(result, start))
    cursor.setPosition(utf16_at(result, end), QTextCursor.MoveMode.KeepAnchor)
    window.editor.setTextCursor(cursor)
    return True


def screenshot_record(window, path: Path, view: str) -> dict:
    """What a picture shows, for scripts: its path, the view, the tokenizer and the status bar's
    counts (None when the text has no tokens yet)."""
    result = window.state.result
    stats = result.stats if result is not None else {}
    return {"path": str(path), "view": view, "tokenizer": window.state.tokenizer,
            "policy": window.state.effective_policy, "tokens": stats.get("tokens"),
            "characters": stats.get("chars"), "bytes": stats.get("bytes")}


def _take_screenshots(window, paths: list[Path], names: list[str],
                      select: tuple[int, int] | None = None, view: str = "editor") -> None:
    todo = list(zip(paths, names or [None] * len(paths)))

    def next_shot() -> None:
        if not todo:
            window.app_exit(0)
            return
        path, name = todo[0]
        if name is not None:
            window.state.set_tokenizer(name)
        when_settled(window, lambda: select_then_save(path), SCREENSHOT_TIMEOUT_S)

    def select_then_save(path: Path) -> None:
        if select is None:
            save(path)
        elif select_code_points(window, *select):
            when_settled(window, lambda: save(path), SCREENSHOT_TIMEOUT_S)
        else:
            window.app_exit(1)

    def save(path: Path) -> None:
        from PySide6.QtCore import QCoreApplication, QEvent

        todo.pop(0)
        # subtle: a label that got its text in this event-loop turn (the status bar's selection
        # counts) has not been given its new width yet: lay out first, or it is drawn squeezed.
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        window.repaint()
        if not window.grab().save(str(path), "PNG"):
            print(f"tokexplorer: error: cannot write {path}", file=sys.stderr)
            window.app_exit(1)
            return
        print(json.dumps(screenshot_record(window, path, view), ensure_ascii=False), flush=True)
        next_shot()

    next_shot()
