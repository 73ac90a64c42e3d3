"""`tokexplorer quirks [NAME]`: the quirks gallery, each sample encoded by every tokenizer."""

from __future__ import annotations

import argparse

from tokexplorer.cli.output import print_json, print_table
from tokexplorer.core.analysis.quirks import QUIRKS, description, quirk
from tokexplorer.core.registry import builtin_names, load_tokenizer
from tokexplorer.core.analysis.unicode_info import token_label


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("quirks", help="why LLMs stumble: samples from the lecture, side by side",
                       description="List the quirks, or show one: each sample's tokens in every "
                       "tokenizer.")
    p.add_argument("name", nargs="?", help="a quirk (without it: the list)")
    p.add_argument("-t", "--tokenizer", action="append", dest="tokenizers", metavar="NAME",
                   help="a built-in name or tokenizer file; repeat (default: all built-ins)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.name is None:
        if args.json:
            print_json([{"name": q.name, "question": q.question, "view": q.view,
                         "tokenizers": list(q.tokenizers)} for q in QUIRKS])
        else:
            print_table(["quirk", "question"], [[q.name, q.question] for q in QUIRKS])
        return 0
    q = quirk(args.name)
    tokenizers = [load_tokenizer(n) for n in (args.tokenizers or builtin_names())]
    results = []
    for label, text in q.samples:
        for tok in tokenizers:
            enc = tok.encode(text, allowed_special=q.allowed_special)
            results.append({"sample": label, "tokenizer": tok.name, "tokens": len(enc),
                            "pieces": [t.text for t in enc]})
    if args.json:
        print_json({"name": q.name, "question": q.question, "observation": q.observation, "try_next": q.try_next,
                    "view": q.view, "tokenizers": list(q.tokenizers),
                    "samples": [{"label": lab, "text": text} for lab, text in q.samples],
                    "results": results})
        return 0
    print(q.question)
    print_table(["sample", "tokenizer", "tokens", "pieces"],
                [[r["sample"], r["tokenizer"], r["tokens"],
                  "|".join(token_label(p.encode("utf-8")) for p in r["pieces"])] for r in results], right={2})
    print(f"\n{description(q)}")
    return 0
