"""argparse's parser with its help formatted to the terminal's width: the class of the
`tokexplorer` command's parser and of every sub-command's (`main.build_parser` builds them).

It is imported only when a command line is parsed by argparse: a short `encode` is parsed without
it (`commands.encoding.quick_arguments`), and argparse with gettext and locale was a tenth of that
command's start.
"""

from __future__ import annotations

import argparse
import os
import sys


def terminal_width() -> int:
    """Columns for help text: $COLUMNS, else the terminal's width, else 80 (less 2, as argparse).

    subtle: argparse asks `shutil.get_terminal_size` for this each time an argument is added, and
    shutil's import (with bz2 and lzma) was 5 ms of every command's start.
    """
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return (columns or 80) - 2


class Parser(argparse.ArgumentParser):
    """argparse's parser, its help formatted to `terminal_width` (sub-parsers are of its class)."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        return self.formatter_class(prog=self.prog, width=terminal_width())
