"""`tokexplorer inspect`: code points, names, categories, scripts, UTF-8/16/32, graphemes."""

from __future__ import annotations

import argparse
import dataclasses

from ..cli import add_text_arguments, print_json, print_table, read_text_argument
from ..core.unicode_info import visible
from ..core.unicode_info import inspect_text


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("inspect", help="what a string is made of, code point by code point",
                       description="Code points, names, categories, scripts, UTF-8/16/32 bytes, "
                       "grapheme clusters and normal forms of a text.")
    add_text_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    info = inspect_text(read_text_argument(args))
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
