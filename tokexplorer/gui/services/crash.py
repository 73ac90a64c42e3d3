"""The one handler for errors nobody caught: an exception raised in a slot (Qt hands it to
`sys.excepthook`), in a thread (`threading.excepthook`), or in a worker's job (the workers call
`log_exception` from their error paths).

Each one is appended with its traceback to `errors.log` in the settings folder (`log_path`), printed
as one line on stderr, and announced through `CrashReporter.crashed(summary, details)`, which the
main window shows as a banner with a "Details…" button; the window keeps running. It does not
decide what the window shows, and it does not catch the user errors the core reports as
`TokexplorerError` (those have their own message).
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from tokexplorer.gui import settings as keys

LOG_NAME = "errors.log"
MAX_LOG_BYTES = 1 << 20  # a longer log is started afresh (the previous one kept as errors.log.1)


class CrashReporter(QObject):
    """Announces logged errors to the UI thread (emitted from any thread, delivered queued)."""

    crashed = Signal(str, str)  # one-line summary, details (the traceback and the log's path)


_reporter: CrashReporter | None = None


def reporter() -> CrashReporter:
    """The one reporter (created in the UI thread on first use, so its signal is delivered there)."""
    global _reporter
    if _reporter is None:
        _reporter = CrashReporter()
    return _reporter


def log_path() -> Path:
    """Where errors are logged: the settings folder (TOKEXPLORER_SETTINGS_DIR, or the user's)."""
    folder = os.environ.get(keys.ENV_DIR)
    if folder:
        return Path(folder) / LOG_NAME
    return Path(keys.open_settings().fileName()).parent / LOG_NAME


def log_exception(exc: BaseException, where: str, *, announce: bool = True) -> str:
    """Log an unexpected exception and (if `announce`) tell the window; returns the one-line
    message (for callers that show it themselves)."""
    details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return log_error(f"{type(exc).__name__}: {exc}", details, where, announce=announce)


def log_error(summary: str, details: str, where: str, *, announce: bool = True) -> str:
    """Log an unexpected error known by its one-line `summary` and its traceback's text (one in
    the tokenizing server, say); as `log_exception`."""
    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
            os.replace(path, path.with_name(LOG_NAME + ".1"))
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {where}\n{details}\n")
        saved = f"details in {path}"
    except OSError as err:  # the log is a help, not a requirement
        saved = f"the details could not be logged to {path}: {err.strerror or err}"
    message = f"internal error {where}: {summary} ({saved})"
    print(f"tokexplorer: {message}", file=sys.stderr)
    if announce and _reporter is not None:
        _reporter.crashed.emit(message, f"{details}\nLogged to {path}.")
    return message


def install() -> None:
    """Route uncaught exceptions (slots, threads) to `log_exception` (the application does this;
    tests leave pytest-qt's own hook in place unless they test this one)."""
    reporter()

    def hook(kind, exc, tb) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, exc, tb)
            return
        log_exception(exc.with_traceback(tb), "in the window")

    def thread_hook(args) -> None:
        if args.exc_value is not None and not issubclass(args.exc_type, SystemExit):
            log_exception(args.exc_value, f"in the thread {args.thread.name if args.thread else '?'}")

    sys.excepthook = hook
    threading.excepthook = thread_hook
