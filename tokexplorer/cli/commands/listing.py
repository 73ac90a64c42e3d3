"""`tokexplorer list`: the built-in tokenizers."""

from __future__ import annotations

import argparse

from tokexplorer.cli.output import print_json, print_table
from tokexplorer.core.registry import BUILTINS


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("list", help="the built-in tokenizers", description="The built-in tokenizers.")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    infos = list(BUILTINS.values())
    if args.json:
        print_json([{"name": i.name, "family": i.family, "n_vocab": i.n_vocab,
                     "description": i.description, "source": i.source, "licence": i.licence}
                    for i in infos])
    else:
        print_table(["name", "family", "vocab", "description", "source (PyPI package: file)", "licence"],
                    [[i.name, i.family, i.n_vocab, i.description, i.source, i.licence] for i in infos],
                    right={2})
    return 0
