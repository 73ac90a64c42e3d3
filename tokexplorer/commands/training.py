"""`tokexplorer train | merges | sweep`: train a tokenizer, show merge trees, vocab size vs length."""

from __future__ import annotations

import argparse
import sys
import time

from ..cli import parse_token_id, print_json, print_table, visible
from ..core.tokenizer import TokexplorerError


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train", help="train a BPE or SentencePiece tokenizer on your text",
        description="Train byte-level BPE (minbpe's merges, exactly) or SentencePiece on corpus "
        "files and write PREFIX.model + PREFIX.vocab (with the other files asked for, all together "
        "or none). Ctrl-C stops training and keeps the merges learned so far (in PREFIX-partial.* "
        "when a model is already at PREFIX: a complete model is not replaced by a partial one).")
    p.add_argument("corpus", nargs="+", metavar="CORPUS", help="UTF-8 text files, concatenated")
    p.add_argument("--vocab-size", type=int, required=True, metavar="N",
                   help="vocabulary size, special tokens included")
    p.add_argument("--algorithm", choices=["bpe", "sentencepiece"], default="bpe")
    _add_pattern_argument(p)
    p.add_argument("--special", action="append", default=[], metavar="TOKEN[=ID]",
                   help="a special token (repeat); BPE gives it the next free id unless =ID")
    p.add_argument("--model-type", choices=["bpe", "unigram"], default="bpe",
                   help="SentencePiece model type (default bpe)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="change a SentencePiece option of the Llama 2 preset, e.g. byte_fallback=false")
    p.add_argument("--show-options", action="store_true",
                   help="print the SentencePiece options that would be used, and stop")
    p.add_argument("--tiktoken", action="store_true", help="BPE: also write PREFIX.tiktoken")
    p.add_argument("--gpt2", action="store_true",
                   help="BPE: also write GPT-2's encoder.json and vocab.bpe into the folder PREFIX-gpt2")
    p.add_argument("-o", "--output", metavar="PREFIX", help="write PREFIX.model and PREFIX.vocab (a file prefix, not a folder)")
    p.add_argument("--encoding", help="the corpus encoding when it is not UTF-8 (e.g. latin-1)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(handler=run_train)

    p = sub.add_parser("merges", help="the merge tree behind a token",
                       description="Show how BPE built a token, merge by merge, down to bytes.")
    p.add_argument("-t", "--tokenizer", default="cl100k_base", metavar="NAME",
                   help="a built-in name or a tokenizer file (default cl100k_base)")
    p.add_argument("--token", required=True, metavar="ID|TEXT",
                   help="a token id, or text (each of its tokens is shown)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run_merges)

    p = sub.add_parser("sweep", help="sequence length vs vocab size",
                       description="Train BPE once up to the largest vocab size; every smaller size "
                       "is a prefix of the same merges. Report the evaluation text's token count.")
    p.add_argument("corpus", metavar="CORPUS", help="UTF-8 text file to train on")
    p.add_argument("--vocab-sizes", required=True, metavar="N,N,...",
                   help="comma-separated vocab sizes, e.g. 256,512,1024")
    p.add_argument("--eval", metavar="FILE", help="text to count tokens of (default: the corpus)")
    _add_pattern_argument(p)
    p.add_argument("--encoding", help="the files' encoding when it is not UTF-8")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run_sweep)


def _add_pattern_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pattern", "-p", default="gpt4",
                   help="BPE split pattern: gpt4, gpt2, o200k, none (Basic: bytes only) or a regex")


def _pattern(value: str) -> str | None:
    from ..core.patterns import resolve_pattern

    return None if value.lower() == "none" else resolve_pattern(value)


class _Progress:
    """Progress on stderr: a rewritten line on a terminal, a line per 10% otherwise."""

    def __init__(self, what: str):
        self.what = what
        self.tty = sys.stderr.isatty()
        self.shown = -1
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        if self.tty:
            now = time.monotonic()
            if now - self.last > 0.1 or done == total:
                self.last = now
                print(f"\r{self.what}: {done}/{total}", end="\n" if done == total else "",
                      file=sys.stderr, flush=True)
        elif total and done * 10 // total > self.shown:
            self.shown = done * 10 // total
            print(f"{self.what}: {done}/{total}", file=sys.stderr, flush=True)


def _check_output(prefix: str) -> None:
    """Refuse an output prefix that names a folder, or whose folder is missing or not writable,
    before any time is spent training."""
    import os
    import tempfile
    from pathlib import Path

    if prefix.endswith(("/", os.sep)) or Path(prefix).is_dir():
        example = Path(prefix) / "mymodel"
        raise TokexplorerError(f"-o {prefix} is a folder; -o takes a file prefix, e.g. -o {example} "
                               f"(writes {example}.model and {example}.vocab)")
    folder = Path(prefix).parent
    if not folder.is_dir():
        raise TokexplorerError(f"the folder of -o {prefix} does not exist ({folder}); create it first")
    try:  # subtle: os.access says yes to root on a read-only file system such as /sys
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise TokexplorerError(f"cannot write into {folder} ({exc.strerror or exc}); choose another -o") from None


def _write_outputs(files: dict, prefix: str, interrupted: bool) -> tuple[list, str | None]:
    """Write one output's files together; returns (paths written, the prefix used).

    An interrupted run does not replace a complete model already at PREFIX: what it learned goes
    to PREFIX-partial instead.
    """
    import os
    from pathlib import Path

    from ..core.minbpe_files import write_files

    if interrupted and any(p.exists() for p in files):
        partial = f"{prefix}-partial"
        files = {Path(partial + os.fspath(p)[len(prefix):]): data for p, data in files.items()}
        write_files(files)
        return list(files), partial
    write_files(files)
    return list(files), None


def _read_corpora(paths: list[str], encoding: str | None) -> str:
    from ..core.textfile import read_text_file

    return "".join(read_text_file(p, encoding=encoding) for p in paths)


def _parse_specials(items: list[str]) -> dict[str, int | None]:
    specials: dict[str, int | None] = {}
    for item in items:
        token, token_id = parse_token_id(item, "--special")
        if token in specials:
            raise TokexplorerError(f"special token {token!r} is given twice")
        specials[token] = token_id
    return specials


def _special_ids(specials: dict[str, int | None], first_free: int) -> dict[str, int]:
    """Ids for --special: the given ones, checked; the others the next free ones in order."""
    from ..core.bpe_training import assign_special_ids

    return assign_special_ids({token: first_free + i if given is None else given
                               for i, (token, given) in enumerate(specials.items())}, first_free)


def _parse_options(items: list[str]) -> dict[str, object]:
    """--option KEY=VALUE: true/false, integers and numbers become such, the rest stays text.

    >>> _parse_options(["byte_fallback=false", "vocab_size=300", "character_coverage=0.995"])
    {'byte_fallback': False, 'vocab_size': 300, 'character_coverage': 0.995}
    """
    options: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise TokexplorerError(f"--option {item!r}: write KEY=VALUE, e.g. byte_fallback=false")
        parsed: object = value
        if value.lower() in ("true", "false"):
            parsed = value.lower() == "true"
        else:
            for kind in (int, float):
                try:
                    parsed = kind(value)
                    break
                except ValueError:
                    pass
        options[key] = parsed
    return options


def run_train(args: argparse.Namespace) -> int:
    from ..core.bpe_training import MAX_VOCAB_SIZE

    if args.vocab_size is None or not 1 <= args.vocab_size <= MAX_VOCAB_SIZE:
        raise TokexplorerError(f"--vocab-size must be a whole number from 1 to {MAX_VOCAB_SIZE:,}")
    if args.algorithm == "sentencepiece":
        return _train_sentencepiece(args)
    if args.option or args.show_options or args.model_type != "bpe":
        raise TokexplorerError("--option, --show-options and --model-type are for --algorithm sentencepiece")
    if not args.output:
        raise TokexplorerError("give the output prefix with -o PREFIX (writes PREFIX.model, PREFIX.vocab)")
    _check_output(args.output)
    from ..core.bpe_tokenizer import BPETokenizer
    from ..core.bpe_training import check_vocab_size, iter_train
    from ..core.minbpe_files import gpt2_files, minbpe_files, model_text, tiktoken_file

    pattern = _pattern(args.pattern)
    specials = _parse_specials(args.special)
    total = check_vocab_size(args.vocab_size, len(specials))
    text = _read_corpora(args.corpus, args.encoding)
    n_bytes = len(text.encode("utf-8"))
    # Check what can be checked before spending time on training.
    model_text(BPETokenizer({}, pattern, _special_ids(specials, 256 + total)))
    merges: dict[tuple[int, int], int] = {}
    merged = 0  # occurrences merged: each shortens the corpus by one token
    progress = _Progress("merges")
    started = time.perf_counter()
    interrupted = False
    steps = iter_train(text, args.vocab_size, pattern=pattern, n_special=len(specials))
    try:
        for step in steps:
            merges[step.pair] = step.new_id
            merged += step.merged
            progress(step.step, step.total)
    except KeyboardInterrupt:
        interrupted = True
    seconds = time.perf_counter() - started
    tok = BPETokenizer(merges, pattern, _special_ids(specials, 256 + len(merges)), name=args.output)
    files = minbpe_files(tok, args.output)
    if args.tiktoken:
        files.update(tiktoken_file(tok, f"{args.output}.tiktoken"))
    if args.gpt2:
        files.update(gpt2_files(tok, f"{args.output}-gpt2"))
    written, moved = _write_outputs(files, args.output, interrupted)
    tokens = n_bytes - merged
    summary = {
        "algorithm": "bpe", "mode": "basic" if pattern is None else "regex", "pattern": pattern,
        "merges": len(merges), "requested_merges": total, "vocab_size": tok.n_vocab,
        "special_tokens": tok.special_tokens, "seconds": round(seconds, 3),
        "corpus_bytes": n_bytes, "corpus_tokens": tokens,
        "compression": round(n_bytes / tokens, 4) if tokens else None,
        "stopped": "interrupted" if interrupted else "no pair left" if len(merges) < total else None,
        "files": [str(p) for p in written],
    }
    if args.json:
        print_json(summary)
    else:
        print(f"learned {len(merges)} merges in {seconds:.2f} s: vocab size {tok.n_vocab}")
        if interrupted:
            where = (f" in {moved}.model; the complete model at {args.output} is unchanged"
                     if moved else "")
            print(f"interrupted: kept the {len(merges)} merges learned so far{where}")
        elif len(merges) < total:
            print(f"stopped early: no pair left to merge; the vocab size reached is {tok.n_vocab} "
                  f"(asked for {args.vocab_size})")
        print(f"corpus: {n_bytes} bytes -> {tokens} tokens, compression ratio "
              f"{n_bytes / max(tokens, 1):.2f}X")
        print("wrote " + ", ".join(str(p) for p in written))
    return 130 if interrupted else 0


def _train_sentencepiece(args: argparse.Namespace) -> int:
    from ..core.sentencepiece_training import llama2_options, sentencepiece_files, train_sentencepiece

    overrides = _parse_options(args.option)
    for key, flag in (("model_type", "--model-type"), ("vocab_size", "--vocab-size")):
        if key in overrides:
            raise TokexplorerError(f"--option {key}=…: set it with {flag} instead")
    options = llama2_options(args.vocab_size, args.model_type, **overrides)
    specials = _parse_specials(args.special)
    if any(i is not None for i in specials.values()):
        raise TokexplorerError("SentencePiece assigns special-token ids itself; give --special TOKEN without =ID")
    if specials:
        options["user_defined_symbols"] = list(specials)
    if args.show_options:
        print_json(options)
        return 0
    if not args.output:
        raise TokexplorerError("give the output prefix with -o PREFIX (writes PREFIX.model, PREFIX.vocab)")
    _check_output(args.output)
    text = _read_corpora(args.corpus, args.encoding)
    started = time.perf_counter()
    print("sentencepiece: reading sentences, then training (no progress inside the library)",
          file=sys.stderr)
    tok = train_sentencepiece(text, options, name=args.output, progress=_Progress("sentences"))
    seconds = time.perf_counter() - started
    written, _ = _write_outputs(sentencepiece_files(tok, args.output), args.output, False)
    ids = tok.encode_ids(text, allowed_special="none")
    n_bytes = len(text.encode("utf-8"))
    summary = {"algorithm": "sentencepiece", "model_type": args.model_type, "vocab_size": tok.n_vocab,
               "seconds": round(seconds, 3), "corpus_bytes": n_bytes, "corpus_tokens": len(ids),
               "options": options, "files": [str(p) for p in written]}
    if args.json:
        print_json(summary)
    else:
        print(f"trained SentencePiece {args.model_type} in {seconds:.2f} s: vocab size {tok.n_vocab}")
        print(f"corpus: {n_bytes} bytes -> {len(ids)} tokens, {n_bytes / max(len(ids), 1):.2f} bytes/token")
        print("wrote " + ", ".join(str(p) for p in written))
    return 0


def render_tree(node) -> list[str]:
    """A merge tree as text lines, children indented below their token.

    >>> from tokexplorer.core.merge_tree import MergeNode
    >>> render_tree(MergeNode(256, b"hi", MergeNode(104, b"h"), MergeNode(105, b"i")))
    ['256 hi', '├─ 104 h', '└─ 105 i']
    """
    def label(n) -> str:
        return f"{'-' if n.id is None else n.id} {visible(n.text)}"

    lines = [label(node)]

    def walk(n, prefix: str) -> None:
        for child, last in ((n.left, False), (n.right, True)):
            lines.append(prefix + ("└─ " if last else "├─ ") + label(child))
            if not child.is_leaf:
                walk(child, prefix + ("   " if last else "│  "))

    if not node.is_leaf:
        walk(node, "")
    return lines


def run_merges(args: argparse.Namespace) -> int:
    from ..core.merge_tree import merge_tree
    from ..core.registry import load_tokenizer

    tok = load_tokenizer(args.tokenizer)
    if args.token.isdigit():
        ids = [int(args.token)]
    else:
        ids = tok.encode(args.token, allowed_special="none").ids
        if not ids:
            raise TokexplorerError("--token is empty; give a token id or some text")
    trees = [merge_tree(tok, i) for i in ids]
    if args.json:
        print_json({"tokenizer": tok.name, "trees": [t.to_dict() for t in trees]})
    else:
        for t in trees:
            print("\n".join(render_tree(t)))
    return 0


def run_sweep(args: argparse.Namespace) -> int:
    from ..core.bpe_tokenizer import BPETokenizer
    from ..core.bpe_training import iter_train

    try:
        sizes = sorted({int(v) for v in args.vocab_sizes.split(",") if v.strip()})
    except ValueError:
        raise TokexplorerError("--vocab-sizes takes integers separated by commas, e.g. 256,512,1024") from None
    from ..core.bpe_training import MAX_VOCAB_SIZE

    if not sizes or sizes[0] < 256 or sizes[-1] > MAX_VOCAB_SIZE:
        raise TokexplorerError(f"--vocab-sizes needs sizes from 256 to {MAX_VOCAB_SIZE:,}, e.g. 256,512,1024")
    pattern = _pattern(args.pattern)
    text = _read_corpora([args.corpus], args.encoding)
    evaluation = _read_corpora([args.eval], args.encoding) if args.eval else text
    progress = _Progress("merges")
    merges: list[tuple[int, int]] = []
    for step in iter_train(text, sizes[-1], pattern=pattern):
        merges.append(step.pair)
        progress(step.step, step.total)
    n_bytes = len(evaluation.encode("utf-8"))
    rows = []
    for size in sizes:
        used = merges[: size - 256]
        tok = BPETokenizer({pair: 256 + i for i, pair in enumerate(used)}, pattern)
        n = len(tok.encode_ids(evaluation, allowed_special="none"))
        rows.append({"vocab_size": size, "reached": 256 + len(used) == size, "tokens": n,
                     "bytes_per_token": round(n_bytes / n, 4) if n else None})
    if args.json:
        print_json({"pattern": pattern, "eval_bytes": n_bytes, "results": rows})
    else:
        print_table(["vocab size", "tokens", "bytes/token", "note"],
                    [[r["vocab_size"], r["tokens"], f"{r['bytes_per_token'] or 0:.2f}",
                      "" if r["reached"] else f"no pair left at {256 + len(merges)}"] for r in rows],
                    right={0, 1, 2})
    return 0
