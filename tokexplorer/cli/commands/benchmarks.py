"""`tokexplorer bench`: the performance table, each measurement beside its peer in the same run.

Each section is a module in `tokexplorer.bench` with `run(args) -> dict` returning
{"title", "headers", "rows", "notes"}; `--NAME` picks sections, none picks every default one.
"""

from __future__ import annotations

import argparse
import importlib

from tokexplorer.cli.output import print_json, print_table

# flag -> (module in tokexplorer.bench, runs when no flag is given)
SECTIONS: dict[str, tuple[str, bool]] = {
    "encode": ("encoding", True),
    "startup": ("startup", False),
    "training": ("training", False),
    "gui": ("gui", False),
    "panels": ("panels", False),
    "compare": ("compare", False),
    "encode-file": ("encode_file", False),
}


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="performance against the libraries, side by side",
                       description="Measure tokexplorer beside its peers in one run.")
    for flag, (module, _) in SECTIONS.items():
        p.add_argument(f"--{flag}", action="store_true", help=f"run the {module} benchmarks")
    p.add_argument("--corpus", metavar="PATH", help="text to measure on (default tinyshakespeare)")
    p.add_argument("--repeat", type=int, default=3, help="runs per measurement (1 or more); the best is kept")
    p.add_argument("--huge-mb", type=int, default=0, metavar="N",
                   help="with --gui: also open an N MB text (the corpus repeated), e.g. 50")
    p.add_argument("--panes", type=int, default=4, metavar="N",
                   help="with --compare: how many compare panes to type into (2 to 4)")
    p.add_argument("--soak", type=int, default=0, metavar="N",
                   help="N random edits with tokenizer switches on a 1 MB text in a window: memory "
                   "growth, threads, tokens (e.g. 300; the long run is 10000)")
    p.add_argument("--long-line", type=_sizes, default=(), metavar="N[,N...]",
                   help="open a text of one N-character line without break points in a window and type "
                   "into it: open time, stalls, key latency (e.g. 200000,1000000)")
    p.add_argument("--training-case", action="append", choices=["tinyshakespeare", "all", "large"],
                   metavar="CASE", help="with --training: only this whole-process case (repeat): "
                   "tinyshakespeare, all (the shared corpora) or large (100 MB); no training-only rows")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run)


def _sizes(value: str) -> tuple[int, ...]:
    """--long-line: line lengths separated by commas, each 1 or more.

    >>> _sizes("200000,1000000")
    (200000, 1000000)
    """
    try:
        sizes = tuple(int(v) for v in value.split(","))
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"{value!r}: give numbers of characters, e.g. 200000,1000000")
    return sizes


def run(args: argparse.Namespace) -> int:
    from tokexplorer.core.files.textfile import read_text_file
    from tokexplorer.core.tokenizer import TokexplorerError

    if args.repeat < 1:
        raise TokexplorerError(f"--repeat {args.repeat}: give 1 or more runs per measurement")
    if args.corpus:
        read_text_file(args.corpus)  # a missing, binary or non-UTF-8 corpus: one clear line now
    if args.soak < 0:
        raise TokexplorerError(f"--soak {args.soak}: give a number of edits, e.g. 300")
    chosen = ([flag for flag in SECTIONS if getattr(args, flag.replace("-", "_"))] + (["soak"] if args.soak else [])
              + (["long_line"] if args.long_line else []))
    if not chosen:
        chosen = [flag for flag, (_, default) in SECTIONS.items() if default]
    results = []
    for flag in chosen:
        module = importlib.import_module(f"tokexplorer.bench.{SECTIONS.get(flag, (flag,))[0]}")
        sections = module.run(args)  # one table, or a list of them
        for section in sections if isinstance(sections, list) else [sections]:
            results.append(section)
            if not args.json:
                print(f"\n== {section['title']} ==")
                print_table(section["headers"], section["rows"],
                            right=set(range(1, len(section["headers"]))))
                for note in section.get("notes", []):
                    print(note)
    if args.json:
        print_json(results)
    return 0
