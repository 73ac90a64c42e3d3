"""What the sub-commands print: JSON, tables whose columns line up for wide characters too
(CJK, emoji), whole or a batch of rows at a time, and progress on stderr.

Nothing here reads arguments or runs a tokenizer.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Iterable


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


class Progress:
    """Progress on stderr: a rewritten line on a terminal, a line per 10% otherwise."""

    def __init__(self, what: str):
        self.what = what
        self.tty = sys.stderr.isatty()
        self.shown = -1
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        if self.tty:
            now = time.monotonic()
            if now - self.last > 0.1 or done == total:
                self.last = now
                print(f"\r{self.what}: {done}/{total}", end="\n" if done == total else "",
                      file=sys.stderr, flush=True)
        elif total and done * 10 // total > self.shown:
            self.shown = done * 10 // total
            print(f"{self.what}: {done}/{total}", file=sys.stderr, flush=True)
