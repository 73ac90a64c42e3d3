"""`tokexplorer lesson bpe`: the lecture's BPE by hand on a text, the BPE-by-hand view's twin.

Runs N merges (new ids 256, 257, ...) on the text's UTF-8 bytes, whole or pre-split by the GPT-2 /
GPT-4 pattern, and prints each merge (its pair as ids and as text, its count, the new id and the
length after it) and the compression; `--json` adds, for each merge, the sorted table of pair
counts it was chosen from. Where several pairs shared the top count, the table says which one
minbpe's rule took and which one the sorted table lists first.
"""

from __future__ import annotations

import argparse

from tokexplorer.cli.arguments import add_text_arguments, read_text_argument
from tokexplorer.cli.output import print_json, print_table
from tokexplorer.core.analysis.bpe_by_hand import PATTERNS, BpeByHand, MergeStep
from tokexplorer.core.analysis.unicode_info import token_label
from tokexplorer.core.tokenizer import TokexplorerError


def add_parsers(sub: argparse._SubParsersAction) -> None:
    lesson = sub.add_parser("lesson", help="the lecture's experiments, step by step",
                            description="The lecture's experiments as commands.")
    steps = lesson.add_subparsers(dest="lesson", metavar="STEP", required=True)
    p = steps.add_parser("bpe", help="byte-pair merges by hand: the pair counts and each merge",
                         description="Count the byte pairs of the text (the lecture's get_stats), merge the "
                         "most frequent into a new id (256, 257, ...) and repeat N times. Among equal "
                         "counts the pair met first in the text wins, as in minbpe.")
    add_text_arguments(p)
    p.add_argument("--merges", type=_merges, required=True, metavar="N", help="how many merges (0 or more)")
    p.add_argument("--pattern", choices=list(PATTERNS), default="none",
                   help="count pairs within the GPT-2 or GPT-4 regex chunks only (default none: the whole text)")
    p.add_argument("--json", action="store_true", help="print JSON, with the table of pair counts before each merge")
    p.set_defaults(handler=run_bpe)


def _merges(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of merges (0 or more)")
    return number


def run_bpe(args: argparse.Namespace) -> int:
    text = read_text_argument(args)
    if not text:
        raise TokexplorerError("the text is empty: give some text to merge")
    lesson = BpeByHand(text, args.pattern)
    steps = lesson.run(args.merges)
    ratio = lesson.n_bytes / lesson.length
    if args.json:
        print_json({"bytes": lesson.n_bytes, "tokens": lesson.length, "ratio": ratio,
                    "steps": [{"pair": list(s.pair), "count": s.count, "new_id": s.new_id, "length": s.length,
                               "top": [[count, list(pair)] for count, pair in s.top]} for s in steps]})
        return 0
    rows = [[k, f"({s.pair[0]}, {s.pair[1]})",
             f"{token_label(lesson.token_bytes(s.pair[0]))} + {token_label(lesson.token_bytes(s.pair[1]))}",
             s.count, s.new_id, s.length, _tie(s)] for k, s in enumerate(steps, 1)]
    if rows:
        print_table(["step", "pair", "as text", "count", "new id", "length", "tie"], rows, right={0, 3, 4, 5})
    if len(steps) < args.merges:
        print(f"no pair left after {len(steps)} merges")
    print(f"{lesson.n_bytes} bytes -> {lesson.length} tokens, compression ratio {ratio:.2f}")
    return 0


def _tie(step: MergeStep) -> str:
    """Where the tie rule decided: how many pairs shared the count, and the sorted table's first."""
    if not step.tied:
        return ""
    if step.table_first == step.pair:
        return f"first met of {len(step.tied)}"
    first = step.table_first
    return f"first met of {len(step.tied)}; sorted() lists ({first[0]}, {first[1]}) first"
