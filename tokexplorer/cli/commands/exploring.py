"""`tokexplorer vocab | trace | chunks`: the vocabulary browser's, the encode trace's and the chunk
view's twins.

`vocab` lists the tokens of a tokenizer that match a search (text, hex bytes or id), a filter and a
sort, with their count in a text when one is given; `trace` prints, for each chunk of a text, the
merges that encoded it (the core's reference trace; with --by-rule the lecture's loop, one line per
merge rule) and checks its final ids against the encoder's; `chunks` prints each chunk of the
tokenizer's pre-split with the alternative of the pattern that matched it, and with --compare
which chunks another pattern (encoder.py's GPT-2, r50k, cl100k, o200k) does not make.
"""

from __future__ import annotations

import argparse

from tokexplorer.cli.arguments import add_text_arguments, add_tokenizer_argument, read_text_argument
from tokexplorer.cli.output import print_json, print_table
from tokexplorer.core.analysis.encode_trace import AROUND, WHOLE_SEQUENCE, chunk_at, trace_at
from tokexplorer.core.analysis.pattern_parts import COMPARABLE, compare_splits, explain_chunks
from tokexplorer.core.analysis.rule_trace import rules_at
from tokexplorer.core.registry import load_tokenizer
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.analysis.unicode_info import token_label
from tokexplorer.core.analysis.vocabulary import FILTERS, SORT_KEYS, Kind, Vocabulary

DEFAULT_LIMIT = 50


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("vocab", help="search a tokenizer's vocabulary by text, hex bytes or id",
                       description="List the tokens of a vocabulary that match a search, with their "
                       "id, bytes, length and kind (special, byte fallback, not UTF-8 on its own).")
    add_tokenizer_argument(p)
    what = p.add_mutually_exclusive_group()
    what.add_argument("--search", metavar="TEXT", help="tokens containing this text (␣ or a space for spaces)")
    what.add_argument("--hex", metavar="HEX", help="tokens containing these bytes, e.g. 'e2 80 99'")
    what.add_argument("--id", metavar="N[,N...]", help="these token ids")
    p.add_argument("--match-case", action="store_true", help="--search tells upper from lower case")
    p.add_argument("--filter", choices=list(FILTERS), default="all", help="which tokens (default all)")
    p.add_argument("--sort", choices=list(SORT_KEYS), default="id",
                   help="order by id (the rank, for BPE), byte length or count in --count-in")
    p.add_argument("--reverse", action="store_true", help="largest first")
    p.add_argument("--count-in", metavar="FILE", help="count each token in this UTF-8 text file")
    p.add_argument("--limit", type=int, default=DEFAULT_LIMIT, metavar="N",
                   help=f"print at most N tokens (default {DEFAULT_LIMIT}; 0 for all)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run_vocab)

    p = sub.add_parser("trace", help="the BPE merges that encoded each chunk of a text",
                       description="For each chunk of the text (the regex pre-split, or a SentencePiece "
                       "word), the merges in the order BPE applied them, and whether the final ids "
                       "equal the tokenizer's own.")
    add_tokenizer_argument(p)
    add_text_arguments(p)
    p.add_argument("--by-rule", action="store_true",
                   help="the lecture's encode loop: one line per merge rule applied (every occurrence of its "
                   "pair at once), with where it applied and the length after")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run_trace)

    p = sub.add_parser("chunks", help="which alternative of the split pattern made each chunk",
                       description="The tokenizer's regex pre-split of the text, each chunk with the "
                       "alternative of the pattern that matched it (contraction, letters, numbers, "
                       "punctuation, whitespace, ...); with --compare, the chunks another pattern does "
                       "not make are marked (*).")
    add_tokenizer_argument(p, default="gpt2")
    add_text_arguments(p)
    p.add_argument("--compare", choices=list(COMPARABLE),
                   help="mark the chunks this pattern does not make: " + "; ".join(
                       f"{name}: {what}" for name, (_, what) in COMPARABLE.items()))
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run_chunks)


def _kinds(kind: int) -> list[str]:
    return [name for bit, name in ((Kind.SPECIAL, "special"), (Kind.BYTE_FALLBACK, "byte_fallback"),
                                   (Kind.NOT_UTF8, "not_utf8")) if kind & bit]


def run_vocab(args: argparse.Namespace) -> int:
    from tokexplorer.core.files.textfile import read_text_file

    if args.limit < 0:
        raise TokexplorerError("--limit must be 0 (all) or more")
    tok = load_tokenizer(args.tokenizer)
    vocab = Vocabulary.of(tok)
    if args.hex is not None:
        ids = vocab.search(args.hex, by="hex")
    elif args.id is not None:
        ids = vocab.search(args.id, by="id")
    else:
        ids = vocab.search(args.search or "", match_case=args.match_case)
    if args.filter != "all":
        ids = ids[(vocab.kinds[ids] & FILTERS[args.filter][0]) != 0]
    counts = None
    if args.count_in:
        counts = vocab.counts(tok.encode(read_text_file(args.count_in), allowed_special="none"))
    elif args.sort == "count":
        raise TokexplorerError("--sort count needs --count-in FILE, the text to count tokens in")
    ids = vocab.order(ids, args.sort, counts=counts, descending=args.reverse)
    total = len(ids)
    if args.limit:
        ids = ids[: args.limit]
    rows = []
    for i in ids.tolist():
        data = vocab.token_bytes(i)
        row = {"id": i, "bytes": data.hex(), "text": data.decode("utf-8", "replace"), "length": len(data),
               "kinds": _kinds(int(vocab.kinds[i]))}
        if counts is not None:
            row["count"] = int(counts[i])
        if vocab.scores is not None:
            row["score"] = float(vocab.scores[i])
        rows.append(row)
    if args.json:
        print_json({"tokenizer": tok.name, "matches": total, "tokens": rows})
        return 0
    headers = ["id", "text", "bytes", "length"] + (["count"] if counts is not None else []) + ["kind"]
    table = [[r["id"], token_label(bytes.fromhex(r["bytes"])),
              " ".join(r["bytes"][k:k + 2] for k in range(0, len(r["bytes"]), 2)), r["length"]]
             + ([r["count"]] if counts is not None else []) + [", ".join(r["kinds"])] for r in rows]
    print_table(headers, table, right={0, 3, 4} if counts is not None else {0, 3})
    shown = f"{len(rows)} of {total:,}" if len(rows) < total else f"{total:,}"
    print(f"{shown} matching tokens of {tok.name} ({len(vocab.ids()):,} tokens)")
    return 0


def run_trace(args: argparse.Namespace) -> int:
    tok = load_tokenizer(args.tokenizer)
    text = read_text_argument(args)
    encoding = tok.encode(text, allowed_special="none")
    traces, i = [], 0  # (trace or the reason there is none, chunk text, the encoder's ids)
    while i < len(encoding):
        first, stop = chunk_at(tok, encoding, i)
        try:
            trace = rules_at(tok, encoding, first, stop) if args.by_rule else trace_at(tok, encoding, i)
        except TokexplorerError as exc:
            trace = str(exc)
        chunk = encoding.text[int(encoding.starts[first]):int(encoding.ends[stop - 1])]
        traces.append((trace, chunk, encoding.ids[first:stop]))
        i = stop
    agree = all(isinstance(t, str) or t.final == own for t, _, own in traces)
    if args.json:
        print_json({"tokenizer": tok.name, "chunks": [
            {"chunk": chunk, "ids": own, "not_traced": t} if isinstance(t, str)
            else dict(t.to_dict(), agrees=t.final == own) for t, chunk, own in traces]})
        return 0 if agree else 1
    for trace, chunk, own in traces:
        if isinstance(trace, str):
            print(f"chunk {token_label(chunk.encode('utf-8', 'surrogatepass'))}: not traced: {trace}")
            continue
        if args.by_rule:
            _print_rules(trace, own, tok.name)
            continue
        label = token_label(trace.chunk)
        print(f"chunk {label} ({len(trace.chunk)} bytes): {len(trace.steps)} merge{'s' * (len(trace.steps) != 1)}")
        parts = len(trace.initial_ids)
        for k, (s, first, shown) in enumerate(trace.walk(WHOLE_SEQUENCE if parts <= WHOLE_SEQUENCE else AROUND), 1):
            parts -= 1
            pair = f"{token_label(s.left.bytes)} + {token_label(s.right.bytes)}"
            ids = ", ".join(map(str, shown))
            ids = ("..., " if first else "") + ids + (", ..." if first + len(shown) < parts else "")
            print(f"  {k:3}. {pair} -> {s.new_id} (rank {s.rank}): [{ids}]")
        if trace.fallback:
            print(f"  byte fallback: {', '.join(trace.fallback)}")
        ok = trace.final == own
        print(f"  final {trace.final}" + ("" if ok else f" but {tok.name} gave {own}"))
    return 0 if agree else 1


def _print_rules(trace, own: list[int], name: str) -> None:
    """One chunk's by-rule trace: a line per rule (pair, new id, places, length after)."""
    n = len(trace.rules)
    print(f"chunk {token_label(trace.chunk)} ({len(trace.chunk)} bytes): {n} rule{'s' * (n != 1)}, "
          f"{trace.occurrences} merge{'s' * (trace.occurrences != 1)}")
    for k, rule in enumerate(trace.rules, 1):
        places = ", ".join(map(str, rule.positions[:12])) + (", ..." if len(rule.positions) > 12 else "")
        print(f"  {k:3}. ({rule.pair[0]}, {rule.pair[1]}) -> {rule.new_id}  "
              f"{token_label(rule.left)} + {token_label(rule.right)}  at {len(rule.positions)} "
              f"place{'s' * (len(rule.positions) != 1)} [{places}]  length {rule.length}")
    ok = trace.final == own
    shown = trace.final if len(trace.final) <= 32 else f"{trace.final[:32]}... ({len(trace.final)} ids)"
    print(f"  final {shown}" + ("" if ok else f" but {name} gave {own}"))


def run_chunks(args: argparse.Namespace) -> int:
    tok = load_tokenizer(args.tokenizer)
    text = read_text_argument(args)
    encoding = tok.encode(text, allowed_special="none")
    arrays = encoding.chunk_arrays()
    if arrays is None or tok.split_pattern is None:
        raise TokexplorerError(f"{tok.name} has no regex pre-split (SentencePiece and Basic BPE split no chunks "
                               "with a pattern); try -t gpt2, cl100k_base or o200k_base")
    explained = explain_chunks(text, tok.split_pattern, *arrays)
    differs = compare_splits(text, *arrays, COMPARABLE[args.compare][0]) if args.compare else None
    rows = []
    for k, (a, b, alt) in enumerate(zip(explained.starts.tolist(), explained.ends.tolist(),
                                        explained.alternatives.tolist())):
        row = {"text": text[a:b], "start": a, "end": b, "alternative": alt,
               "matched_by": explained.names[alt] if alt >= 0 else None}
        if differs is not None:
            row["differs"] = bool(differs[k])
        rows.append(row)
    if args.json:
        print_json({"tokenizer": tok.name, "pattern": tok.split_pattern, "alternatives": list(explained.names),
                    "compare": args.compare, "chunks": rows})
        return 0
    headers = ["#", "chunk", "span", "matched by"] + (["differs"] if differs is not None else [])
    print_table(headers, [[k, token_label(r["text"].encode("utf-8", "surrogatepass")), f"{r['start']}:{r['end']}",
                           r["matched_by"] or "-"] + (["*" if r["differs"] else ""] if differs is not None else [])
                          for k, r in enumerate(rows)], right={0})
    if differs is not None:
        n, what = int(differs.sum()), COMPARABLE[args.compare][1]
        print(f"{n} of {len(rows)} chunks are not chunks of {what}" if n else
              f"{what} splits this text into the same {len(rows)} chunks")
    return 0
