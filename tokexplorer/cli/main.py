"""The `tokexplorer` command: no arguments opens the main window; sub-commands use the core.

Human tables by default, JSON with `--json`; text comes from an argument, `--file PATH` or `-`
(stdin). Bad input exits 1 with one line on stderr and no traceback; usage errors exit 2.

A short command is a whole process a user waits for: only the sub-command's own module is imported
and its parsers built (`build_parser`), `--version` builds none, and a short `encode` is parsed
without argparse (`commands.encoding.quick_arguments`) and, run as the program, ends without the
interpreter's teardown (`_exit_without_teardown`); this module imports only `sys` at its top.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    from typing import Sequence

# Sub-command name -> module in tokexplorer.cli.commands that defines add_parser(subparsers) and run(args).
COMMANDS = {
    "list": "listing",
    "encode": "encoding",
    "decode": "encoding",
    "split": "encoding",
    "compare": "encoding",
    "inspect": "inspecting",
    "quirks": "quirks",
    "bench": "benchmarks",
    "train": "training",
    "merges": "training",
    "sweep": "training",
    "chat": "chatting",
    "vocab": "exploring",
    "trace": "exploring",
    "chunks": "exploring",
    "report": "reports",
    "lesson": "lesson",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every sub-command, or only of `command`'s module (start-up stays short: a
    module imports what its commands need)."""
    import argparse

    from tokexplorer.cli import commands
    from tokexplorer.cli.parser import Parser

    from tokexplorer import __version__

    epilog = None
    if command not in COMMANDS:  # the top-level help only: the window's parser costs an import
        from tokexplorer.gui.app import window_parser

        epilog = window_options_help(window_parser())
    parser = Parser(
        prog="tokexplorer",
        usage="tokexplorer [WINDOW OPTIONS] | tokexplorer COMMAND ...",
        description="Explore how LLM tokenizers turn text into tokens. "
        "With no command, opens the main window.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"tokexplorer {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", prog="tokexplorer")
    modules = [COMMANDS[command]] if command in COMMANDS else COMMANDS.values()
    for module in dict.fromkeys(modules):
        commands.load(module).add_parsers(sub)
    return parser


def window_options_help(window: argparse.ArgumentParser) -> str:
    """The window's own options, as the epilog of the command's help."""
    body = window.format_help().split("options:", 1)[-1]
    lines = [line for line in body.splitlines() if line.strip() and "-h, --help" not in line]
    return "window options (without a COMMAND):\n" + "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv` (the process's own when None) and give its exit status."""
    status = _main(list(sys.argv[1:] if argv is None else argv), as_program=argv is None)
    _statuses.append(status)
    return status


# What main() returned, for `_exit_without_teardown` (a short list: one item a call).
_statuses: list[int] = []


def _exit_without_teardown() -> None:
    """The exit handler of a plain `encode` run as the program: its output flushed, the process
    ends with main()'s status, without the interpreter's teardown.

    subtle: freeing a vocabulary at exit (a dict of 200,000 tokens, the library's own tables) and
    every module took 15 ms (llama-sp) to 200 ms (qwen3.6) of CPU after the ids were out, a fifth
    of the whole command. Registered when the command line is read, before the tokenizer's library
    loads, it runs after the exit handlers the libraries register (exit handlers run last-in
    first-out), and the command leaves nothing for a teardown: no thread, no child process, no
    file open for writing. Exit handlers registered before the command line started (a plain
    interpreter has none) are not run.
    """
    import os

    if not _statuses:  # main() did not return (a traceback): Python's own exit and status
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: what is left cannot reach the reader anyway
            pass
    os._exit(_statuses[-1])


def _main(argv: list[str], *, as_program: bool) -> int:
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    if argv == ["--version"]:
        from tokexplorer import __version__

        print(f"tokexplorer {__version__}")
        return 0
    try:  # subtle: Ctrl-C while the libraries import (a second or two) is an interrupt too
        if not argv or argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version"):
            return _run_gui(argv)
        args = None
        if argv[0] == "encode":  # the short command most often waited on: no argparse unless needed
            from tokexplorer.cli.commands.encoding import quick_arguments

            args = quick_arguments(argv[1:])
            if args is not None and as_program:
                import atexit

                atexit.register(_exit_without_teardown)
        if args is None:
            args = build_parser(argv[0]).parse_args(argv)
        return args.handler(args) or 0
    except KeyboardInterrupt:
        print("tokexplorer: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except BaseException as exc:
        from tokexplorer.core.tokenizer import TokexplorerError, native_panic

        if isinstance(exc, TokexplorerError):
            print(f"tokexplorer: error: {exc}", file=sys.stderr)
            return 1
        if _interrupted_import(exc):
            print("tokexplorer: interrupted", file=sys.stderr)
            return 130
        if not native_panic(exc):
            raise
        print(f"tokexplorer: error: a tokenizer library failed inside its native core: {exc}",
              file=sys.stderr)
        return 1


def _interrupted_import(exc: BaseException) -> bool:
    """Whether an ImportError comes from a Ctrl-C during the import (numpy turns one into this)."""
    seen = exc
    while isinstance(exc, ImportError) and seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _run_gui(argv: list[str]) -> int:
    """Start the window."""
    try:
        from tokexplorer.gui.app import run_gui
    except ImportError as exc:
        print(f"tokexplorer: the desktop app cannot start: {exc}", file=sys.stderr)
        return 2
    return run_gui(argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
