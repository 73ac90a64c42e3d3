"""`tokexplorer inspect`: code points, names, categories, scripts, UTF-8/16/32, graphemes, and the
lists Python prints for `list(text.encode("utf-8" / "utf-16" / "utf-32"))`, byte order mark
included; with -t NAME, also which token covers each byte (the inspector panel's view,
`core.selection`), SentencePiece tokens with sentencepiece's names for them; `--lookup` reads what
the inspector's decode box reads (token ids, or characters as chr and ord see them:
`core.id_lookup`). `--numbers decimal` writes the bytes and code units as Python prints them."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from tokexplorer.cli.arguments import (
    add_special_argument, add_text_arguments, allowed_special, megabytes, read_text_argument,
)
from tokexplorer.cli.output import print_json, print_table
from tokexplorer.core.budgets import WHOLE_TEXT_DEFAULTS, max_mb_for, whole_encoding_over_budget, whole_text_peak_gb
from tokexplorer.core.registry import load_tokenizer
from tokexplorer.core.analysis.id_lookup import piece_names
from tokexplorer.core.analysis.selection import inspect_selection
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.analysis.unicode_info import (BASES, BYTE_ORDER, code_values, inspect_text, name_of,
                                                    python_bytes, token_label, visible)

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
    p.add_argument("--numbers", choices=BASES, default="hex",
                   help="write bytes and code units in hex (the default) or in decimal, as Python prints them")
    p.add_argument("--lookup", metavar="WHAT",
                   help="with -t: look WHAT up as the inspector's decode box does: token ids (104, "
                   "'15339, 1917'), or characters as chr and ord see them (U+0068, chr(104), \"'h'\", h)")
    p.add_argument("--max-mb", type=megabytes, metavar="N",
                   help="with -t: memory budget; a text is tokenized whole and each token kept, up to "
                   f"{WHOLE_TEXT_DEFAULTS} million characters without asking; N million goes on")
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
    why = whole_encoding_over_budget(tok.name, tok.family, len(text), args.max_mb)
    if why is not None:  # (not streamed: the table's tokens and the counts come from one Encoding)
        raise TokexplorerError(f"{why}; cut the file, or pass --max-mb {max_mb_for(len(text))} to go on "
                               f"(about {whole_text_peak_gb(tok.family, len(text)):.1f} GB)")
    encoding = tok.encode(text, allowed_special=allowed_special(args))
    # Rows for the whole range up to TABLE_BUDGET code points; past it, the first --limit of them
    # (the counts still cover the whole range; --select shows any other part).
    rows = end - start if end - start <= TABLE_BUDGET else args.limit
    info = inspect_selection(encoding, start, end, tokenizer=tok.name, limit=max(rows, 1))
    names = piece_names(tok, [t.id for t in info.tokens])
    if args.json:
        data = info.as_dict()
        if names is not None:
            for token, name in zip(data["tokens"], names):
                token["piece"] = name
        print_json(data)
    else:
        sys.stdout.write(info.as_text())
        if names is not None:
            print("pieces: " + " ".join(f"{t.id}:{name}" for t, name in zip(info.tokens, names)))
    return 0


def run_lookup(args: argparse.Namespace) -> int:
    """What the decode box shows for --lookup, in the -t tokenizer."""
    from tokexplorer.core.analysis.id_lookup import CharacterLookup, lookup

    if not args.tokenizer:
        raise TokexplorerError("--lookup needs a tokenizer (-t NAME)")
    tok = load_tokenizer(args.tokenizer)
    found = lookup(tok, args.lookup)
    tokens = [{"id": i, "bytes": list(b) if args.numbers == "decimal" else b.hex(), "text": label}
              for i, b, label in zip(found.ids, found.token_bytes,
                                     found.pieces or [token_label(b) for b in found.token_bytes])]
    if isinstance(found, CharacterLookup):
        chars = [{"char": c, "ord": ord(c), "code_point": f"U+{ord(c):04X}", "name": name_of(c),
                  "utf8": code_values(c)["utf8"]} for c in found.chars]
        if args.json:
            print_json({"tokenizer": tok.name, "asked": found.asked, "characters": chars, "tokens": tokens})
            return 0
        for c in chars:
            print(f"ord({c['char']!r}) = {c['ord']}  chr({c['ord']}) = {c['char']!r}  {c['code_point']} {c['name']}  "
                  f"UTF-8 {_numbers(c['utf8'], args.numbers)}")
    else:
        point = found.code_point
        if args.json:
            print_json({"tokenizer": tok.name, "ids": found.ids, "text": found.text, "valid_utf8": found.valid_utf8,
                        "tokens": tokens, "code_point": None if point is None else
                        {"char": point, "code_point": f"U+{ord(point):04X}", "name": name_of(point)}})
            return 0
        print(f"text: {found.text!r}")
        if point is not None:
            print(f"as a code point instead: chr({found.ids[0]}) = {point!r} (U+{ord(point):04X} {name_of(point)})")
    print(f"in {tok.name}: " + "  ".join(f"{t['id']} {t['text']!r}" for t in tokens))
    return 0


def _numbers(values: list[int] | None, base: str) -> str:
    """A list of byte values as Python's list() prints it, or as hex bytes."""
    if values is None:
        return "(Python cannot encode it: a lone surrogate)"
    return str(values) if base == "decimal" else " ".join(f"{v:02X}" for v in values)


def run(args: argparse.Namespace) -> int:
    from tokexplorer.core.tokenizer import TokexplorerError

    if args.offset < 0 or not 0 <= args.limit <= TABLE_BUDGET:
        raise TokexplorerError(f"--offset must be 0 or more and --limit from 0 to {TABLE_BUDGET:,}")
    if args.lookup is not None:
        return run_lookup(args)
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
            "python_bytes": python_bytes(info.text), "byte_order": BYTE_ORDER,
        })
        return 0
    grapheme_of = {}
    for g, (a, b) in enumerate(info.graphemes):
        for i in range(a, b):
            grapheme_of[i] = g
    print_table(
        ["#", "char", "code point", "name", "cat", "script", "UTF-8", "UTF-16", "grapheme", "note"],
        [[c.index, visible(c.char) if not c.kinds else "", c.codepoint, c.name, c.category,
          c.script, *_units(c, args.numbers), grapheme_of.get(c.index, ""), ", ".join(c.kinds)]
         for c in info.code_points],
        right={0, 8},
    )
    s = info.sizes
    print(f"\n{s['code_points']} code points, {s['graphemes']} graphemes, {s['utf8']} UTF-8 bytes, "
          f"{s['utf16_units']} UTF-16 code units, {s['utf32']} UTF-32 bytes (Unicode {info.unicode_version})")
    for form, text in info.normal_forms.items():
        print(f"{form} differs: '{visible(text)}' ({len(text)} code points)")
    for codec, values in python_bytes(info.text).items():
        print(f'list(text.encode("{codec}")) = {_numbers(values, args.numbers)}')
    print(f"(utf-16 and utf-32 begin with a byte order mark, then {BYTE_ORDER}-endian units: this machine's order)")
    return 0


def _units(c, base: str) -> list[str]:
    """A code point's UTF-8 bytes and UTF-16 code units, in hex or decimal."""
    if base == "hex" or 0xD800 <= ord(c.char) <= 0xDFFF:
        return [c.utf8, c.utf16]
    values = code_values(c.char)
    return [" ".join(map(str, values["utf8"])), " ".join(map(str, values["utf16"]))]


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
