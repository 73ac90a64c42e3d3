"""`tokexplorer inspect`: code points, names, categories, scripts, UTF-8/16/32, graphemes; with
-t NAME, also which token covers each byte (the inspector panel's view, `core.selection`)."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from tokexplorer.cli.arguments import (
    add_special_argument, add_text_arguments, allowed_special, read_text_argument,
)
from tokexplorer.cli.output import print_json, print_table
from tokexplorer.core.registry import load_tokenizer
from tokexplorer.core.analysis.selection import inspect_selection
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.analysis.unicode_info import visible
from tokexplorer.core.analysis.unicode_info import inspect_text

# Code points above which the whole per-code-point table is not built (about 2 KB of memory and
# 20 microseconds each): a summary and one page of the table instead.
TABLE_BUDGET = 10_000


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("inspect", help="what a string is made of, code point by code point",
                       description="Code points, names, categories, scripts, UTF-8/16/32 bytes, "
                       "grapheme clusters and normal forms of a text. A text of more than "
                       f"{TABLE_BUDGET:,} code points is summarised instead (counts per script and "
                       "category, the unusual code points, sizes, normal forms) with one page of "
                       "the table (--offset, --limit); memory stays near the text's own size.")
    add_text_arguments(p)
    p.add_argument("-t", "--tokenizer", metavar="NAME",
                   help="also show the tokens of this tokenizer (built-in or file) covering each byte")
    p.add_argument("--select", metavar="START:END", type=_span,
                   help="with -t: only these characters (code-point offsets); a range of more than "
                   f"{TABLE_BUDGET:,} lists the first --limit of them")
    add_special_argument(p)
    p.add_argument("--offset", type=int, default=0, metavar="N",
                   help="a summary's page of the table starts at code point N (default 0)")
    p.add_argument("--limit", type=int, default=100, metavar="N",
                   help=f"a summary's page holds N code points (default 100, at most {TABLE_BUDGET:,})")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run)


def _span(value: str) -> tuple[int, int]:
    start, _, end = value.partition(":")
    if not (start.isdigit() and end.isdigit()) or int(end) < int(start):
        raise argparse.ArgumentTypeError(f"{value!r} is not START:END (code-point offsets)")
    return int(start), int(end)


def run_tokens(args: argparse.Namespace, text: str) -> int:
    """The bytes of the text (or of --select) with the tokens that cover them."""
    tok = load_tokenizer(args.tokenizer)
    start, end = args.select or (0, len(text))
    if end > len(text):
        raise TokexplorerError(f"--select {start}:{end} is past the end of the text ({len(text)} characters)")
    encoding = tok.encode(text, allowed_special=allowed_special(args))
    # Rows for the whole range up to TABLE_BUDGET code points; past it, the first --limit of them
    # (the counts still cover the whole range; --select shows any other part).
    rows = end - start if end - start <= TABLE_BUDGET else args.limit
    info = inspect_selection(encoding, start, end, tokenizer=tok.name, limit=max(rows, 1))
    if args.json:
        print_json(info.as_dict())
    else:
        sys.stdout.write(info.as_text())
    return 0


def run(args: argparse.Namespace) -> int:
    from tokexplorer.core.tokenizer import TokexplorerError

    if args.offset < 0 or not 0 <= args.limit <= TABLE_BUDGET:
        raise TokexplorerError(f"--offset must be 0 or more and --limit from 0 to {TABLE_BUDGET:,}")
    text = read_text_argument(args)
    if args.tokenizer:
        return run_tokens(args, text)
    if args.select:
        raise TokexplorerError("--select needs a tokenizer (-t NAME)")
    if len(text) > TABLE_BUDGET:
        return _summary(text, args)
    info = inspect_text(text)
    if args.json:
        print_json({
            "text": info.text,
            "unicode_version": info.unicode_version,
            "sizes": info.sizes,
            "graphemes": [{"text": info.text[a:b], "start": a, "end": b} for a, b in info.graphemes],
            "normal_forms": info.normal_forms,
            "code_points": [dataclasses.asdict(c) for c in info.code_points],
        })
        return 0
    grapheme_of = {}
    for g, (a, b) in enumerate(info.graphemes):
        for i in range(a, b):
            grapheme_of[i] = g
    print_table(
        ["#", "char", "code point", "name", "cat", "script", "UTF-8", "UTF-16", "grapheme", "note"],
        [[c.index, visible(c.char) if not c.kinds else "", c.codepoint, c.name, c.category,
          c.script, c.utf8, c.utf16, grapheme_of.get(c.index, ""), ", ".join(c.kinds)]
         for c in info.code_points],
        right={0, 8},
    )
    s = info.sizes
    print(f"\n{s['code_points']} code points, {s['graphemes']} graphemes, {s['utf8']} UTF-8 bytes, "
          f"{s['utf16_units']} UTF-16 code units, {s['utf32']} UTF-32 bytes (Unicode {info.unicode_version})")
    for form, text in info.normal_forms.items():
        print(f"{form} differs: '{visible(text)}' ({len(text)} code points)")
    return 0


def _summary(text: str, args: argparse.Namespace) -> int:
    from tokexplorer.core.analysis.text_summary import summarise_text

    s = summarise_text(text, offset=args.offset, limit=args.limit)
    if args.json:
        print_json({
            "summary": True, "table_budget": TABLE_BUDGET, "unicode_version": s.unicode_version,
            "sizes": s.sizes, "scripts": s.scripts, "categories": s.categories,
            "unusual": [{**dataclasses.asdict(u.info), "count": u.count} for u in s.unusual],
            "unusual_distinct": s.unusual_distinct, "normal_forms_differ": s.normal_forms_differ,
            "offset": s.offset, "code_points": [dataclasses.asdict(c) for c in s.page],
        })
        return 0
    z = s.sizes
    print(f"{z['code_points']:,} code points (over {TABLE_BUDGET:,}: a summary), {z['graphemes']:,} graphemes, "
          f"{z['utf8']:,} UTF-8 bytes, {z['utf16_units']:,} UTF-16 code units, {z['utf32']:,} UTF-32 bytes "
          f"(Unicode {s.unicode_version})")
    print_table(["script", "code points"], [[k, f"{v:,}"] for k, v in s.scripts.items()], right={1})
    print()
    print_table(["category", "code points"], [[k, f"{v:,}"] for k, v in s.categories.items()], right={1})
    if s.unusual:
        print(f"\nunusual code points ({s.unusual_distinct} distinct"
              + (f", the {len(s.unusual)} most frequent" if s.unusual_distinct > len(s.unusual) else "") + "):")
        print_table(["code point", "name", "count", "first at", "note"],
                    [[u.info.codepoint, u.info.name, f"{u.count:,}", u.info.index, ", ".join(u.info.kinds)]
                     for u in s.unusual], right={2, 3})
    for form in s.normal_forms_differ:
        print(f"{form} differs from the text")
    if s.page:
        end = s.offset + len(s.page)
        print(f"\ncode points {s.offset:,}-{end - 1:,} (more with --offset {end})")
        print_table(["#", "char", "code point", "name", "cat", "script", "UTF-8", "note"],
                    [[c.index, visible(c.char) if not c.kinds else "", c.codepoint, c.name, c.category,
                      c.script, c.utf8, ", ".join(c.kinds)] for c in s.page], right={0})
    return 0
