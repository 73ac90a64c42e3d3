"""The arguments several sub-commands share: the text (an argument, `--file PATH` or `-`), the
special-token policy, extra special tokens, and token ids typed as `TEXT=ID`.

Each helper adds arguments to a parser or reads them back; none prints or runs a command.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from tokexplorer.core.tokenizer import TokexplorerError, parse_allowed_special

if TYPE_CHECKING:  # (argparse is imported where a parser is built: a short encode has none)
    import argparse


def add_tokenizer_argument(p: argparse.ArgumentParser, default: str = "cl100k_base", *,
                           list_names: bool = True) -> None:
    """-t NAME: one tokenizer, built-in or a file. `list_names=False` leaves the built-ins' names
    out of the help, for a module whose parser must not import the registry (`train`'s start-up)."""
    names = "a built-in name"
    if list_names:
        from tokexplorer.core.registry import builtin_names

        names = ", ".join(builtin_names())
    p.add_argument("-t", "--tokenizer", default=default, metavar="NAME",
                   help=f"{names} or a tokenizer file (default {default})")


def add_text_arguments(p: argparse.ArgumentParser) -> None:
    """TEXT | --file PATH | - (stdin), with --encoding for files that are not UTF-8."""
    p.add_argument("text", nargs="?", help="the text; '-' reads stdin")
    p.add_argument("--file", "-f", metavar="PATH", help="read the text from a file")
    p.add_argument("--encoding", help="the file's encoding when it is not UTF-8 (e.g. latin-1)")


def read_text_argument(args: argparse.Namespace) -> str:
    if args.file is not None:
        if args.text is not None:
            raise TokexplorerError("give the text either as an argument or with --file, not both")
        from tokexplorer.core.files.textfile import read_text_file

        return read_text_file(args.file, encoding=args.encoding)
    if args.text is None or args.text == "-":
        if args.text is None and sys.stdin.isatty():
            raise TokexplorerError("no text: give it as an argument, with --file PATH, or on stdin with '-'")
        from tokexplorer.core.files.textfile import decode_text  # (imported here: an argument needs none of it)

        return decode_text(sys.stdin.buffer.read(), source="stdin", encoding=args.encoding)
    return args.text


def read_text_or_file(args: argparse.Namespace):
    """--file as a `TextFile`, for a command that reads it a block at a time; otherwise the text
    as `read_text_argument` gives it."""
    if args.file is not None and args.text is None:
        from tokexplorer.core.files.text_blocks import TextFile

        return TextFile(str(args.file), args.encoding)
    return read_text_argument(args)


def megabytes(value: str) -> float:
    """--max-mb's type: a number of MB above 0 (nan, inf, 0 and negative numbers are usage errors,
    not budgets).

    >>> megabytes("2.5")
    2.5
    >>> megabytes("nan")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 'nan' is not a number of MB above 0 (e.g. 300)
    """
    import argparse
    import math

    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number <= 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of MB above 0 (e.g. 300)")
    return number


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
