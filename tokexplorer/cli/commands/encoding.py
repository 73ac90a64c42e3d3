"""`tokexplorer encode | decode | split | compare`: text to tokens and back.

subtle: a short `encode` is a whole process a user waits for (issue 35: no longer than the
library's own load of the vocabulary), so this module imports at its top only what building the
parser needs; numpy, the streaming machinery, the Encoding and the analysis modules are imported
by the commands that use them. `encode --ids-only` of a short text asks the tokenizer for its ids
alone (`encode_ids`) and imports none of them, and a plain `encode` command line is read without
argparse (`quick_arguments`).
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING

from tokexplorer.cli.arguments import (
    add_special_argument, add_text_arguments, add_tokenizer_extension_argument, allowed_special, extend_tokenizer, megabytes,
    read_text_or_file,
)
from tokexplorer.core.registry import DEFAULT_TOKENIZER, builtin_names, load_tokenizer
from tokexplorer.core.tokenizer import TokexplorerError

if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

    import numpy as np

    from tokexplorer.core.encoding import Token, TokenFlag
    from tokexplorer.core.streaming import Totals


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("encode", help="text to token ids, with bytes and spans",
                       description="Encode text; print each token's id, bytes, text and span.")
    _add_tokenizer_argument(p)
    add_text_arguments(p)
    add_special_argument(p)
    add_tokenizer_extension_argument(p)
    p.add_argument("--ids-only", action="store_true", help="print only the ids, space-separated")
    p.add_argument("--json", action="store_true", help="print JSON")
    _add_max_mb_argument(p)
    p.set_defaults(handler=run_encode)

    p = sub.add_parser("decode", help="token ids to text", description="Decode token ids to text.")
    _add_tokenizer_argument(p)
    p.add_argument("ids", nargs="*", help="token ids (spaces or commas); '-' or none reads stdin")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run_decode)

    p = sub.add_parser("split", help="the regex pre-split into chunks",
                       description="Split text into chunks as a BPE pre-tokenizer does.")
    p.add_argument("--pattern", "-p", default="gpt4",
                   help="gpt2, gpt4, o200k, a tokenizer's name or file (its own pattern), or a regex "
                   "(default gpt4)")
    add_text_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run_split)

    p = sub.add_parser("compare", help="token counts per tokenizer for the same text",
                       description="Tokens, bytes/token and chars/token per tokenizer.")
    p.add_argument("-t", "--tokenizer", action="append", dest="tokenizers", metavar="NAME",
                   help="a built-in name or a tokenizer file; repeat (default: all built-ins)")
    add_text_arguments(p)
    add_special_argument(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    _add_max_mb_argument(p)
    p.set_defaults(handler=run_compare)


def _add_tokenizer_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", "--tokenizer", default=DEFAULT_TOKENIZER, metavar="NAME",
                   help=f"{', '.join(builtin_names())} or a tokenizer file (default {DEFAULT_TOKENIZER})")


def _add_max_mb_argument(p: argparse.ArgumentParser) -> None:
    from tokexplorer.core.budgets import WHOLE_TEXT_DEFAULTS, WHOLE_TEXT_PEAK_MB

    p.add_argument(
        "--max-mb", type=megabytes, metavar="N",
        help="memory budget: texts of any size stream in pieces through tokenizers with the GPT-2, "
        "GPT-4 or o200k split (about 150 MB beside twice the file's size); others encode whole, and "
        f"refuse a text of over N million characters (default {WHOLE_TEXT_DEFAULTS}: about "
        f"{WHOLE_TEXT_PEAK_MB / 1000:g} GB at the peak)")


# What a plain `encode` command line may hold to be read without argparse: these options (each
# followed by a value that does not start with '-', or a flag) and at most one text that does not
# start with '-'. argparse reads anything else (-h, --file, abbreviations, '--', -tNAME, a text
# that starts with '-' ...), with its help and its error messages.
_QUICK_VALUES = {"-t": "tokenizer", "--tokenizer": "tokenizer", "--allowed-special": "allowed_special"}
_QUICK_FLAGS = {"--ids-only": "ids_only", "--json": "json"}


def quick_arguments(argv: list[str]) -> SimpleNamespace | None:
    """`encode`'s arguments (`argv` after the word encode) as its argparse parser reads them, for
    a command line of only the options above and one text; None for any other (argparse then
    reads it). tests/cli/test_quick_arguments.py holds the two to the same answers.

    subtle: argparse with gettext and locale, and the parsers of encode's sibling commands, were a
    tenth of a short encode's start; this reads what a script or a user typing a quick encode
    writes.

    >>> vars(quick_arguments(["-t", "gpt2", "--ids-only", "hello"]))["tokenizer"]
    'gpt2'
    >>> quick_arguments(["--file", "x.txt"]) is None
    True
    """
    from types import SimpleNamespace

    values: dict[str, object] = {
        "command": "encode", "tokenizer": DEFAULT_TOKENIZER, "text": None, "file": None, "encoding": None,
        "allowed_special": None, "add_special": [], "ids_only": False, "json": False, "max_mb": None,
        "handler": run_encode,
    }
    words = iter(argv)
    for word in words:
        if word in _QUICK_FLAGS:
            values[_QUICK_FLAGS[word]] = True
        elif word in _QUICK_VALUES:
            value = next(words, "-")
            if value.startswith("-"):
                return None
            values[_QUICK_VALUES[word]] = value
        elif word.startswith("-") or values["text"] is not None:
            return None
        else:
            values["text"] = word
    return SimpleNamespace(**values)


_SHOWN_FLAGS = ("SPECIAL", "BYTE_FALLBACK", "PARTIAL", "NORMALIZED")
_flag_names: dict[int, list[str]] = {}  # flag bits -> their names (enum arithmetic per token is slow on a book)


def flag_names(flags: TokenFlag) -> list[str]:
    """['special', 'byte_fallback', 'partial', 'normalized'] as they apply.

    >>> from tokexplorer.core.encoding import TokenFlag
    >>> flag_names(TokenFlag.SPECIAL | TokenFlag.PARTIAL)
    ['special', 'partial']
    """
    if not _flag_names:  # every combination, made at the first token shown
        from tokexplorer.core.encoding import TokenFlag

        shown = [TokenFlag[name] for name in _SHOWN_FLAGS]
        _flag_names.update({bits: [f.name.lower() for f in shown if bits & f] for bits in range(1 << len(shown))})
    return list(_flag_names[int(flags) & ((1 << len(_SHOWN_FLAGS)) - 1)])


def token_json(t: Token) -> dict:
    return {"index": t.index, "id": t.id, "bytes": t.bytes.hex(), "text": t.text,
            "start": t.start, "end": t.end, "flags": flag_names(t.flags)}


# A text given on the command line or stdin that is shorter than this is encoded in one call for
# `--ids-only`: no pieces, threads or arrays (a text of this size is one piece anyway).
SHORT_TEXT = 1 << 16


def run_encode(args: argparse.Namespace) -> int:
    tok = extend_tokenizer(load_tokenizer(args.tokenizer), args)
    text = read_text_or_file(args)
    if args.ids_only and isinstance(text, str) and len(text) < SHORT_TEXT:
        ids = tok.encode_ids(text, allowed_special=allowed_special(args))
        sys.stdout.write(" ".join(map(str, ids)) + "\n")
        return 0
    from tokexplorer.cli.output import print_table_stream
    from tokexplorer.core.analysis.unicode_info import token_label
    from tokexplorer.core.streaming import Totals, encode_pieces, map_ids

    if args.ids_only:
        _write_ids(map_ids(tok, text, lambda ids, _: ids_text(ids), allowed_special=allowed_special(args),
                           limit_mb=args.max_mb))
        return 0
    pieces = encode_pieces(tok, text, allowed_special=allowed_special(args), limit_mb=args.max_mb)
    totals = Totals()
    if args.json:
        _write_encoding_json(tok.name, pieces, totals)
    else:
        def batches():
            """The table's rows, TABLE_BATCH at a time (a piece's rows at once took 500 MB)."""
            base = 0
            for piece in pieces:
                off, enc = piece.offset, piece.encoding
                # Text the split pattern did not match has no token: a row of its own, before the
                # first token that starts at or after it.
                dropped, k = enc.dropped, 0
                rows: list[list[object]] = []
                for t in enc:
                    while k < len(dropped) and dropped[k][0] <= t.start:
                        rows.append(_dropped_row(enc, off, *dropped[k]))
                        k += 1
                    rows.append([base + t.index, t.id, t.bytes.hex(" "), token_label(t.bytes),
                                 f"{off + t.start}:{off + t.end}", ",".join(flag_names(t.flags))])
                    if len(rows) >= TABLE_BATCH:
                        yield rows
                        rows = []
                rows += [_dropped_row(enc, off, s, e) for s, e in dropped[k:]]
                if rows:
                    yield rows
                base += len(enc)
                totals.add(enc)

        print_table_stream(["#", "id", "bytes", "text", "span", "flags"], batches(), right={0, 1})
        _print_stats(tok.name, totals.stats())
    return 0


TABLE_BATCH = 10_000  # rows of the encode and split tables formatted and written at a time

_digit_rows: list[np.ndarray | None] = [None]  # item i: b"i " padded with NULs to 8 bytes
_digit_rows_lock = threading.Lock()
ID_DIGITS = 7  # the table's ids have at most this many digits


def ids_text(ids: np.ndarray) -> bytes:
    """The ids in decimal, each followed by a space, formatted by numpy (a piece's ids at a time,
    in the thread that encoded it: `str` of each id took a third of `encode --ids-only`'s time).

    subtle: each id's text is read from a table as one 8-byte word, and the NUL padding dropped.

    >>> import numpy as np
    >>> ids_text(np.array([0, 31373, 995]))
    b'0 31373 995 '
    """
    import numpy as np

    if not len(ids):
        return b""
    top = int(ids.max()) + 1
    if top > 10 ** ID_DIGITS:
        return (" ".join(map(str, ids.tolist())) + " ").encode("ascii")
    with _digit_rows_lock:
        table = _digit_rows[0]
        if table is None or len(table) < top:
            size = min(1 << max(10, (top - 1).bit_length()), 10 ** ID_DIGITS)  # rarely grown again
            table = _digit_rows[0] = np.array([b"%d " % i for i in range(size)], dtype="S8")
    return np.take(table.view(np.uint64), ids).tobytes().translate(None, b"\0")


def _write_ids(texts) -> None:
    """Each piece's `ids_text`, as one line of ids separated by spaces."""
    sys.stdout.flush()
    out = getattr(sys.stdout, "buffer", None)
    write = out.write if out is not None else (lambda data: sys.stdout.write(bytes(data).decode("ascii")))
    sep = b""
    for data in texts:
        if data:
            write(sep)
            write(memoryview(data)[:-1])
            sep = b" "
    write(b"\n")
    if out is not None:
        out.flush()


def _dropped_row(enc, offset: int, start: int, end: int) -> list[object]:
    from tokexplorer.core.analysis.unicode_info import token_label

    data = enc.text[start:end].encode("utf-8", "surrogatepass")
    return ["", "-", data.hex(" "), token_label(data), f"{offset + start}:{offset + end}", "dropped"]


def _write_encoding_json(name: str, pieces, totals: Totals) -> None:
    """{"tokenizer", "tokens", "ids", "dropped", "stats"}, written a piece at a time."""
    import json

    import numpy as np

    out = sys.stdout
    out.write('{\n "tokenizer": ' + json.dumps(name) + ',\n "tokens": [')
    base, sep, ids, dropped = 0, "\n  ", [], []
    for piece in pieces:
        for t in piece.encoding:
            row = token_json(t._replace(index=base + t.index, start=piece.offset + t.start,
                                        end=piece.offset + t.end))
            out.write(sep + json.dumps(row, ensure_ascii=False))
            sep = ",\n  "
        ids.append(piece.encoding.id_array.astype(np.int32))
        dropped += [{"start": piece.offset + s, "end": piece.offset + e, "text": piece.encoding.text[s:e]}
                    for s, e in piece.encoding.dropped]
        base += len(piece.encoding)
        totals.add(piece.encoding)
    out.write('\n ],\n "ids": [')
    sep = ""
    for part in ids:
        if len(part):
            out.write(sep + ", ".join(map(str, part.tolist())))
            sep = ", "
    # Text the split pattern did not match, so no token covers (the ids skip it, as minbpe's do).
    out.write('],\n "dropped": ' + json.dumps(dropped, ensure_ascii=False))
    out.write(',\n "stats": ' + json.dumps(totals.stats()) + "\n}\n")


def _print_stats(name: str, s: dict) -> None:
    print(f"{name}: {s['tokens']} tokens, {s['chars']} characters, {s['bytes']} bytes, "
          f"{s['bytes_per_token']:.2f} bytes/token, {s['chars_per_token']:.2f} chars/token",
          file=sys.stderr)


def parse_ids(values: list[str]) -> list[int]:
    """Ids from arguments or stdin, separated by spaces, commas or brackets (none: an empty list).

    >>> parse_ids(["[1,", "2]", "3"])
    [1, 2, 3]
    """
    if not values or values == ["-"]:
        values = [sys.stdin.read()]
    from tokexplorer.core.analysis import id_lookup

    text = " ".join(values)
    return id_lookup.parse_ids(text) if text.strip(" \t\n,[]") else []


def run_decode(args: argparse.Namespace) -> int:
    from tokexplorer.cli.output import print_json
    from tokexplorer.core.encoding import is_utf8

    tok = load_tokenizer(args.tokenizer)
    ids = parse_ids(args.ids)
    data = tok.decode_bytes(ids)
    text = data.decode("utf-8", errors="replace")
    if args.json:
        print_json({"tokenizer": tok.name, "ids": ids, "text": text, "bytes": data.hex(),
                    "valid_utf8": is_utf8(data)})
    else:
        sys.stdout.write(text + ("" if text.endswith("\n") else "\n"))
        if not is_utf8(data):
            print("tokexplorer: note: the bytes are not valid UTF-8; invalid bytes shown as U+FFFD",
                  file=sys.stderr)
    return 0


PATTERN_NAME = r"[\w.-]+"  # what a name looks like; a regex of only such characters is not useful


def split_pattern_argument(value: str) -> str:
    """--pattern: a named pattern, a tokenizer's own pattern, or a regex; an unknown name is refused
    rather than used as a regex that matches nothing."""
    import os
    import re

    from tokexplorer.core.patterns import NAMED_PATTERNS, resolve_pattern

    if value.lower() in NAMED_PATTERNS:
        return resolve_pattern(value)
    if value in builtin_names() or os.path.isfile(value):
        tok = load_tokenizer(value)
        pattern = tok.split_pattern
        if not pattern:
            raise TokexplorerError(f"{tok.name} has no regex split pattern (it is a {tok.family} tokenizer)")
        return pattern
    if re.fullmatch(PATTERN_NAME, value):
        raise TokexplorerError(
            f"unknown pattern {value!r}: use {', '.join(NAMED_PATTERNS)}, a tokenizer "
            f"({', '.join(builtin_names())} or a file), or a regex")
    return resolve_pattern(value)


def run_split(args: argparse.Namespace) -> int:
    import json

    from tokexplorer.cli.output import print_table_stream
    from tokexplorer.core.analysis.unicode_info import token_label
    from tokexplorer.core.streaming import split_pieces

    pattern = split_pattern_argument(args.pattern)
    text = read_text_or_file(args)
    found = chars = 0
    if args.json:
        out, sep = sys.stdout, "\n  "
        out.write('{\n "pattern": ' + json.dumps(pattern) + ',\n "chunks": [')
        for piece in split_pieces(text, pattern):
            t, off = piece.text, piece.offset
            for a, b in piece.spans:
                out.write(sep + json.dumps({"text": t[a:b], "start": off + a, "end": off + b}, ensure_ascii=False))
                sep = ",\n  "
            found += len(piece.spans)
            chars += len(t)
        out.write("\n ]\n}\n")
    else:
        def batches():
            nonlocal found, chars
            for piece in split_pieces(text, pattern):
                t, off, spans = piece.text, piece.offset, piece.spans
                for k in range(0, len(spans), TABLE_BATCH):
                    yield [[found + k + i, token_label(t[a:b].encode("utf-8", "surrogatepass")), f"{off + a}:{off + b}"]
                           for i, (a, b) in enumerate(spans[k:k + TABLE_BATCH])]
                found += len(spans)
                chars += len(t)

        print_table_stream(["#", "chunk", "span"], batches(), right={0})
    if chars and not found:
        print("tokexplorer: note: the pattern matched nothing in the text", file=sys.stderr)
    return 0


def run_compare(args: argparse.Namespace) -> int:
    from tokexplorer.cli.output import print_json, print_table
    from tokexplorer.core.analysis.compare import cheapest, counts_from_stats, summary
    from tokexplorer.core.files.text_blocks import TextFile
    from tokexplorer.core.streaming import count, streams

    names = args.tokenizers or builtin_names()
    text = read_text_or_file(args)
    tokenizers = [load_tokenizer(name) for name in names]
    if isinstance(text, TextFile) and not all(streams(t) for t in tokenizers):
        text = text.read()  # once for all, rather than once for each tokenizer that must see it whole
    counts = counts_from_stats([t.name for t in tokenizers], [
        count(t, text, allowed_special=allowed_special(args), limit_mb=args.max_mb) for t in tokenizers])
    if args.json:
        print_json({"chars": counts[0].chars, "cheapest": [counts[i].name for i in cheapest(counts)],
                    "results": [{"tokenizer": c.name, "n_vocab": t.n_vocab, "tokens": c.tokens,
                                 "chars": c.chars, "bytes": c.bytes, "bytes_per_token": c.bytes_per_token,
                                 "chars_per_token": c.chars_per_token, "delta": c.delta,
                                 "delta_pct": c.delta_pct} for c, t in zip(counts, tokenizers)]})
    else:
        print_table(["tokenizer", "vocab", "tokens", "vs first", "bytes/token", "chars/token"],
                    [[c.name, t.n_vocab, c.tokens, c.delta_label(), f"{c.bytes_per_token:.2f}",
                      f"{c.chars_per_token:.2f}"] for c, t in zip(counts, tokenizers)], right={1, 2, 3, 4, 5})
        print(summary(counts))
    return 0
