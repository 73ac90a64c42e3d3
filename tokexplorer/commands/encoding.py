"""`tokexplorer encode | decode | split | compare`: text to tokens and back."""

from __future__ import annotations

import argparse
import re
import sys

from ..cli import (
    add_special_argument,
    add_text_arguments,
    add_tokenizer_extension_argument,
    allowed_special,
    extend_tokenizer,
    print_json,
    print_table,
    read_text_argument,
    visible,
)
from ..core.encoding import Encoding, Token, TokenFlag
from ..core.patterns import resolve_pattern, split
from ..core.registry import builtin_names, load_tokenizer
from ..core.tokenizer import TokexplorerError


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("encode", help="text to token ids, with bytes and spans",
                       description="Encode text; print each token's id, bytes, text and span.")
    _add_tokenizer_argument(p)
    add_text_arguments(p)
    add_special_argument(p)
    add_tokenizer_extension_argument(p)
    p.add_argument("--ids-only", action="store_true", help="print only the ids, space-separated")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run_encode)

    p = sub.add_parser("decode", help="token ids to text", description="Decode token ids to text.")
    _add_tokenizer_argument(p)
    p.add_argument("ids", nargs="*", help="token ids (spaces or commas); '-' or none reads stdin")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run_decode)

    p = sub.add_parser("split", help="the regex pre-split into chunks",
                       description="Split text into chunks as a BPE pre-tokenizer does.")
    p.add_argument("--pattern", "-p", default="gpt4", help="gpt2, gpt4, o200k, or a regex (default gpt4)")
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
    p.set_defaults(handler=run_compare)


def _add_tokenizer_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", "--tokenizer", default="cl100k_base", metavar="NAME",
                   help=f"{', '.join(builtin_names())} or a tokenizer file (default cl100k_base)")


def flag_names(flags: TokenFlag) -> list[str]:
    """['special', 'byte_fallback', 'partial'] as they apply."""
    return [f.name.lower() for f in (TokenFlag.SPECIAL, TokenFlag.BYTE_FALLBACK, TokenFlag.PARTIAL)
            if flags & f]


def token_json(t: Token) -> dict:
    return {"index": t.index, "id": t.id, "bytes": t.bytes.hex(), "text": t.text,
            "start": t.start, "end": t.end, "flags": flag_names(t.flags)}


def encoding_json(name: str, enc: Encoding) -> dict:
    return {"tokenizer": name, "ids": enc.ids, "tokens": [token_json(t) for t in enc],
            "stats": enc.stats()}


def run_encode(args: argparse.Namespace) -> int:
    tok = extend_tokenizer(load_tokenizer(args.tokenizer), args)
    text = read_text_argument(args)
    enc = tok.encode(text, allowed_special=allowed_special(args))
    if args.json:
        print_json(encoding_json(tok.name, enc))
    elif args.ids_only:
        print(" ".join(map(str, enc.ids)))
    else:
        print_table(
            ["#", "id", "bytes", "text", "span", "flags"],
            [[t.index, t.id, t.bytes.hex(" "), visible(t.text), f"{t.start}:{t.end}",
              ",".join(flag_names(t.flags))] for t in enc],
            right={0, 1},
        )
        _print_stats(tok.name, enc)
    return 0


def _print_stats(name: str, enc: Encoding) -> None:
    s = enc.stats()
    print(f"{name}: {s['tokens']} tokens, {s['chars']} characters, {s['bytes']} bytes, "
          f"{s['bytes_per_token']:.2f} bytes/token, {s['chars_per_token']:.2f} chars/token",
          file=sys.stderr)


def parse_ids(values: list[str]) -> list[int]:
    """Ids from arguments or stdin, separated by spaces, commas or brackets.

    >>> parse_ids(["[1,", "2]", "3"])
    [1, 2, 3]
    """
    if not values or values == ["-"]:
        values = [sys.stdin.read()]
    words = [w for v in values for w in re.split(r"[\s,\[\]]+", v) if w]
    # subtle: int() also takes "١٢", "１２", "1_000" and "+5"; an id is written in ASCII digits.
    bad = next((w for w in words if not re.fullmatch(r"-?[0-9]+", w, re.ASCII)), None)
    if bad is not None:
        raise TokexplorerError(f"{bad!r} is not a token id (ids are whole numbers in the digits 0-9)")
    return [int(w) for w in words]


def run_decode(args: argparse.Namespace) -> int:
    tok = load_tokenizer(args.tokenizer)
    ids = parse_ids(args.ids)
    data = tok.decode_bytes(ids)
    text = data.decode("utf-8", errors="replace")
    if args.json:
        print_json({"tokenizer": tok.name, "ids": ids, "text": text, "bytes": data.hex(),
                    "valid_utf8": _is_utf8(data)})
    else:
        sys.stdout.write(text + ("" if text.endswith("\n") else "\n"))
        if not _is_utf8(data):
            print("tokexplorer: note: the bytes are not valid UTF-8; invalid bytes shown as U+FFFD",
                  file=sys.stderr)
    return 0


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def run_split(args: argparse.Namespace) -> int:
    pattern = resolve_pattern(args.pattern)
    text = read_text_argument(args)
    chunks = split(text, pattern)
    if args.json:
        print_json({"pattern": pattern, "chunks": [
            {"text": text[a:b], "start": a, "end": b} for a, b in chunks]})
    else:
        print_table(["#", "chunk", "span"],
                    [[i, f"'{visible(text[a:b])}'", f"{a}:{b}"] for i, (a, b) in enumerate(chunks)],
                    right={0})
    return 0


def run_compare(args: argparse.Namespace) -> int:
    names = args.tokenizers or builtin_names()
    text = read_text_argument(args)
    rows = []
    for name in names:
        tok = load_tokenizer(name)
        s = tok.encode(text, allowed_special=allowed_special(args)).stats()
        rows.append({"tokenizer": tok.name, "n_vocab": tok.n_vocab, **s})
    if args.json:
        print_json({"chars": len(text), "results": rows})
    else:
        print_table(["tokenizer", "vocab", "tokens", "bytes/token", "chars/token"],
                    [[r["tokenizer"], r["n_vocab"], r["tokens"], f"{r['bytes_per_token']:.2f}",
                      f"{r['chars_per_token']:.2f}"] for r in rows], right={1, 2, 3, 4})
    return 0
