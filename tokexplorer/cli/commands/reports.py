"""`tokexplorer report languages | lengths | glitch`: tokens per language on parallel text,
token-length histograms of a text, per tokenizer (with `--plot PATH.png`, see `plotting`), and a
vocabulary's glitch tokens (`core.analysis.glitch`).
"""

from __future__ import annotations

import argparse
import codecs
import os
import sys

from tokexplorer.cli.arguments import add_text_arguments, add_tokenizer_argument, read_text_or_file
from tokexplorer.cli.output import Progress, print_json, print_table
from tokexplorer.core.files.text_budget import WINDOW_TEXT_LIMIT_MB
from tokexplorer.core.registry import REFERENCE_TOKENIZERS
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.cli.commands.plotting import add_plot_arguments
from tokexplorer.cli.commands.plotting import check_plot_path
from tokexplorer.cli.commands.plotting import write_plot

DEFAULT_TOKENIZERS = list(REFERENCE_TOKENIZERS)
SORT_KEYS = ["ratio", "language", "script", "bytes", "file"]
CORPUS_LIMIT_MB = WINDOW_TEXT_LIMIT_MB  # per --corpus file: the window's text budget
SHOWN_TEXT = 40  # characters of a token's text in the glitch table (JSON has it whole)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="reports over many texts: tokens per language",
                       description="Reports that count many texts at once.")
    reports = p.add_subparsers(dest="report", metavar="REPORT", required=True)
    q = reports.add_parser(
        "languages", help="tokens per language on parallel text, relative to English",
        description="Encode the same document (the Universal Declaration of Human Rights in 56 "
        "languages, installed with tokexplorer) with each tokenizer and compare every language's "
        "token count with English's: the 'non-English tax'.")
    q.add_argument("-t", "--tokenizer", action="append", metavar="NAME",
                   help="a built-in name or a tokenizer file (repeat; default: "
                   + ", ".join(DEFAULT_TOKENIZERS) + ")")
    q.add_argument("--texts", metavar="DIR",
                   help="a folder of parallel texts instead, one KEY.txt per language (with an eng.txt)")
    q.add_argument("--reference", default="eng", metavar="KEY",
                   help="the language the ratios divide by (default eng)")
    q.add_argument("--sort", choices=SORT_KEYS, default="ratio",
                   help="row order: ratio (the first tokenizer's, largest first; default), language, "
                   "script, bytes or file")
    q.add_argument("--json", action="store_true", help="print JSON")
    add_plot_arguments(q)
    q.set_defaults(handler=run_languages)


    q = reports.add_parser(
        "lengths", help="token-length histogram (bytes per token) of a text, per tokenizer",
        description="How many of a text's tokens cover 1, 2, 3... bytes of it, per tokenizer.")
    q.add_argument("-t", "--tokenizer", action="append", metavar="NAME",
                   help="a built-in name or a tokenizer file (repeat; default: "
                   + ", ".join(DEFAULT_TOKENIZERS) + ")")
    add_text_arguments(q)
    q.add_argument("--json", action="store_true", help="print JSON")
    add_plot_arguments(q)
    q.set_defaults(handler=run_lengths)

    q = reports.add_parser(
        "glitch", help="a vocabulary's glitch tokens: unreachable, not UTF-8, never produced, special, "
        "reported under-trained",
        description="List the tokens a model is likely to have learned badly or never, each with "
        "why: encoding its own text does not give it back, it is not valid UTF-8 alone, a reference "
        "corpus never produces it (the longest and rarest first), it is special, or the literature "
        "reports it under-trained (GPT-2, cl100k_base, o200k_base).")
    add_tokenizer_argument(q)
    q.add_argument("--corpus", action="append", metavar="PATH",
                   help="a text file to use as the reference corpus instead of the bundled texts "
                   f"(repeat for more; each at most {CORPUS_LIMIT_MB} MB)")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(handler=run_glitch)


def sorted_rows(report, sort: str):
    rows = list(report.rows)
    if sort == "ratio":
        return sorted(rows, key=lambda r: (-r.ratios[0], r.language))
    if sort == "language":
        return sorted(rows, key=lambda r: r.language.casefold())
    if sort == "script":
        return sorted(rows, key=lambda r: (r.script, r.language.casefold()))
    if sort == "bytes":
        return sorted(rows, key=lambda r: -r.bytes)
    return rows


def run_languages(args: argparse.Namespace) -> int:
    from tokexplorer.core.analysis.languages import LanguageReport, read_parallel_texts, tokens_per_language
    from tokexplorer.core.registry import load_tokenizer

    check_plot_path(args.plot)
    names = args.tokenizer or DEFAULT_TOKENIZERS
    tokenizers = [load_tokenizer(name) for name in dict.fromkeys(names)]
    texts = read_parallel_texts(args.texts)
    report = tokens_per_language(texts, tokenizers, reference=args.reference)
    rows = sorted_rows(report, args.sort)
    shown = LanguageReport(report.tokenizers, report.reference, tuple(rows))
    if args.json:
        print_json(shown.to_dict())
    else:
        headers = ["language", "script", "chars", "bytes"]
        for name in report.tokenizers:
            headers += [name, "×" + report.reference]
        print_table(headers, [[r.language, r.script, r.chars, r.bytes]
                              + [c for n, q in zip(r.tokens, r.ratios) for c in (n, f"{q:.2f}")] for r in rows],
                    right=set(range(2, len(headers))))
    if args.plot:
        write_plot(shown, args.plot, dark=args.dark)
    return 0


def run_lengths(args: argparse.Namespace) -> int:
    from tokexplorer.core.registry import load_tokenizer
    from tokexplorer.core.analysis.token_lengths import histogram_table
    from tokexplorer.core.files.text_blocks import TextFile
    from tokexplorer.core.streaming import streams

    check_plot_path(args.plot)
    text = read_text_or_file(args)
    if isinstance(text, TextFile) and os.path.getsize(text.path) <= len(codecs.BOM_UTF8):
        text = text.read()  # a file of a BOM at most may be an empty text
    if not text:
        raise TokexplorerError("the text is empty; give some text to count")
    tokenizers = [load_tokenizer(name) for name in dict.fromkeys(args.tokenizer or DEFAULT_TOKENIZERS)]
    if isinstance(text, TextFile) and not all(streams(t) for t in tokenizers):
        text = text.read()  # once for all, rather than once for each tokenizer that must see it whole
    counted = [streamed_histogram(tok, text) for tok in tokenizers]
    hists = [h for h, _ in counted]
    if args.json:
        print_json({"bytes": counted[0][1], "tokenizers": [
            {"tokenizer": h.tokenizer, "tokens": h.tokens, "bytes_per_token": round(h.mean, 4),
             "counts": list(h.counts)} for h in hists]})
    else:
        table = histogram_table(hists)
        rows = table[1:] + [["tokens"] + [h.tokens for h in hists],
                            ["bytes/token"] + [f"{h.mean:.2f}" for h in hists]]
        print_table(["bytes"] + table[0][1:], rows, right=set(range(len(table[0]))))
    if args.plot:
        write_plot(hists, args.plot, dark=args.dark)
    return 0


def streamed_histogram(tok, text):
    """`token_lengths.length_histograms`' histogram of the whole text (special-token text read as
    plain text), summed over its pieces, each encoded and counted on a thread (`map_pieces`), and
    the text's length in UTF-8 bytes."""
    import numpy as np

    from tokexplorer.core.analysis.token_lengths import LengthHistogram, length_histogram
    from tokexplorer.core.streaming import map_pieces

    def work(enc):
        return np.asarray(length_histogram(enc, tok.name).counts, dtype=np.int64), enc.n_bytes

    total, n_bytes = np.zeros(0, dtype=np.int64), 0
    for _, (counts, piece_bytes) in map_pieces(tok, text, work, allowed_special="none"):
        if len(counts) > len(total):
            total = np.pad(total, (0, len(counts) - len(total)))
        total[:len(counts)] += counts
        n_bytes += piece_bytes
    return LengthHistogram(tok.name, tuple(int(n) for n in total)), n_bytes


def read_corpus(paths: list[str]):
    """The --corpus files as a reference corpus, each refused before reading if it is not a
    regular file or is over CORPUS_LIMIT_MB."""
    from tokexplorer.core.analysis.glitch import Corpus
    from tokexplorer.core.files.file_budget import read_limited
    from tokexplorer.core.files.textfile import decode_text

    texts = tuple(decode_text(read_limited(path, limit=int(CORPUS_LIMIT_MB * 1e6), what="text file"), source=path)
                  for path in paths)
    return Corpus(texts, ", ".join(paths))


def run_glitch(args: argparse.Namespace) -> int:
    from tokexplorer.core.analysis.glitch import find_glitch_tokens
    from tokexplorer.core.registry import load_tokenizer

    corpus = read_corpus(args.corpus) if args.corpus else None
    tok = load_tokenizer(args.tokenizer)
    report = find_glitch_tokens(tok, corpus, progress=Progress("tokens and corpus texts"))
    if args.json:
        print_json(report.to_dict())
        print(f"reference corpus: {report.corpus}", file=sys.stderr)
        return 0
    print_table(["id", "text", "reasons"], [[t.id, shorten(t.text.replace(" ", "␣")), "; ".join(t.reasons)]
                                            for t in report.tokens], right={0})
    print(f"\n{len(report.tokens):,} tokens of {report.tokenizer}; reference corpus: {report.corpus}")
    return 0


def shorten(text: str) -> str:
    """A token's text cut to SHOWN_TEXT characters for a table cell.

    >>> shorten("x" * 50)[-2:], len(shorten("x" * 50))
    ('x…', 40)
    """
    return text if len(text) <= SHOWN_TEXT else text[:SHOWN_TEXT - 1] + "…"
