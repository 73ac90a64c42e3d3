"""The `tokexplorer` command: no arguments opens the main window; sub-commands use the core.

Human tables by default, JSON with `--json`; text comes from an argument, `--file PATH` or `-`
(stdin). Bad input exits 1 with one line on stderr and no traceback; usage errors exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Callable, Iterable, Sequence

from .core.tokenizer import TokexplorerError, native_panic, parse_allowed_special

# Sub-command name -> module in tokexplorer.commands that defines add_parser(subparsers) and run(args).
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
    "report": "reports",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every sub-command, or only of `command`'s module (start-up stays short: a
    module imports what its commands need)."""
    from . import commands

    from . import __version__

    epilog = None
    if command not in COMMANDS:  # the top-level help only: the window's parser costs an import
        from .gui.app import window_parser

        epilog = window_options_help(window_parser())
    parser = argparse.ArgumentParser(
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
    argv = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:  # subtle: Ctrl-C while the libraries import (a second or two) is an interrupt too
        if not argv or argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version"):
            return _run_gui(argv)
        parser = build_parser(argv[0])
        args = parser.parse_args(argv)
        handler: Callable[[argparse.Namespace], int] = args.handler
        return handler(args) or 0
    except TokexplorerError as exc:
        print(f"tokexplorer: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tokexplorer: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except BaseException as exc:
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
        from .gui.app import run_gui
    except ImportError as exc:
        print(f"tokexplorer: the desktop app cannot start: {exc}", file=sys.stderr)
        return 2
    return run_gui(argv)


# --- shared helpers for sub-commands ------------------------------------------------------------


def add_text_arguments(p: argparse.ArgumentParser) -> None:
    """TEXT | --file PATH | - (stdin), with --encoding for files that are not UTF-8."""
    p.add_argument("text", nargs="?", help="the text; '-' reads stdin")
    p.add_argument("--file", "-f", metavar="PATH", help="read the text from a file")
    p.add_argument("--encoding", help="the file's encoding when it is not UTF-8 (e.g. latin-1)")


def read_text_argument(args: argparse.Namespace) -> str:
    from .core.textfile import decode_text, read_text_file

    if args.file is not None:
        if args.text is not None:
            raise TokexplorerError("give the text either as an argument or with --file, not both")
        return read_text_file(args.file, encoding=args.encoding)
    if args.text is None or args.text == "-":
        if args.text is None and sys.stdin.isatty():
            raise TokexplorerError("no text: give it as an argument, with --file PATH, or on stdin with '-'")
        return decode_text(sys.stdin.buffer.read(), source="stdin", encoding=args.encoding)
    return args.text


def add_special_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--allowed-special",
        metavar="all|none|TOKEN,...",
        help="special tokens to encode as such: all, none (encode their text as plain text), or a "
        "list; by default text that spells a special token is refused",
    )


def allowed_special(args: argparse.Namespace):
    return parse_allowed_special(args.allowed_special)


def add_tokenizer_extension_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--add-special", action="append", default=[], metavar="TOKEN[=ID]",
        help="add a special token to a tiktoken tokenizer, e.g. '<|im_start|>=100264' "
        "(without =ID it takes the next free id); repeat for more",
    )


def extend_tokenizer(tok, args: argparse.Namespace):
    """The tokenizer with the special tokens of --add-special, if any."""
    if not args.add_special:
        return tok
    if not hasattr(tok, "with_special_tokens"):
        raise TokexplorerError(f"--add-special works with tiktoken tokenizers, not {tok.name}")
    extra: dict[str, int | None] = {}
    for item in args.add_special:
        token, token_id = parse_token_id(item, "--add-special")
        extra[token] = token_id
    return tok.with_special_tokens(extra)


def parse_token_id(item: str, flag: str) -> tuple[str, int | None]:
    """TOKEN or TOKEN=ID (the last '=' counts): the token and its id, or None for the next free one.

    >>> parse_token_id("<|im_start|>=100264", "--special"), parse_token_id("a=b", "--special")
    (('<|im_start|>', 100264), ('a=b', None))
    """
    import re

    token, sep, number = item.rpartition("=")
    if not sep or not re.fullmatch(r"[-+]?[\d_]+", number):  # \d: any script's digits
        return item, None
    if not re.fullmatch(r"[0-9]+", number, re.ASCII):
        raise TokexplorerError(f"{flag} {item!r}: the id must be a whole number from 0 written in the "
                               "digits 0-9 (write TOKEN without =ID for the next free id)")
    if not token:
        raise TokexplorerError(f"{flag} {item!r}: the token before '=' is empty")
    return token, int(number)


def print_json(value: object) -> None:
    json.dump(value, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


def display_width(text: str) -> int:
    """Terminal columns: wide (CJK, emoji) characters take two, combining marks none.

    >>> display_width("a語👋\u0301")
    5
    """
    if text.isascii():  # most cells: one column a character
        return len(text)
    import unicodedata

    return sum(
        0 if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf")
        else 2 if unicodedata.east_asian_width(c) in ("W", "F")
        else 1
        for c in text
    )


def print_table(headers: list[str], rows: list[list[object]], *, right: set[int] = frozenset()) -> None:
    """A plain aligned table on stdout."""
    print_table_stream(headers, [rows], right=right)


def print_table_stream(headers: list[str], batches: Iterable[list[list[object]]], *,
                       right: set[int] = frozenset()) -> None:
    """A table printed a batch of rows at a time (a huge text's tokens, a piece at a time): the
    columns are as wide as the header and the first batch need; a wider cell later shifts its row."""
    widths: list[int] | None = None

    def fmt(row: list[str]) -> str:
        padded = []
        for i, (c, w) in enumerate(zip(row, widths)):
            pad = " " * (w - display_width(c))
            padded.append(pad + c if i in right else c + pad)
        return "  ".join(padded).rstrip()

    for rows in batches:
        cells = [[str(c) for c in row] for row in rows]
        if widths is None:
            widths = [max([display_width(h)] + [display_width(r[i]) for r in cells]) for i, h in enumerate(headers)]
            print(fmt(headers))
            print("  ".join("-" * w for w in widths))
        sys.stdout.write("".join(fmt(row) + "\n" for row in cells))
    if widths is None:  # no rows at all
        widths = [display_width(h) for h in headers]
        print(fmt(headers))
        print("  ".join("-" * w for w in widths))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
