"""`tokexplorer bench`: the performance table, each measurement beside its peer in the same run."""

from __future__ import annotations

import argparse

from ..cli import print_json, print_table


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="performance against the libraries, side by side",
                       description="Measure tokexplorer beside its peers in one run.")
    p.add_argument("--encode", action="store_true", help="encoding throughput and cold start")
    p.add_argument("--corpus", metavar="PATH", help="text to measure on (default tinyshakespeare)")
    p.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best is kept")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..bench import encoding as encoding_bench

    sections = []
    if args.encode or not any([args.encode]):
        sections.append(encoding_bench.run(args))
    if args.json:
        print_json(sections)
        return 0
    for section in sections:
        print(f"\n== {section['title']} ==")
        print_table(section["headers"], section["rows"], right=set(range(1, len(section["headers"]))))
        for note in section.get("notes", []):
            print(note)
    return 0
