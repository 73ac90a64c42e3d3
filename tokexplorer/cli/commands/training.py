"""`tokexplorer train | merges | sweep`: train a tokenizer, show merge trees, vocab size vs length.

It runs past 400 lines: three commands' arguments, checks and output; the work itself is
`core.training`'s."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time

from tokexplorer.cli.arguments import add_tokenizer_argument, megabytes, parse_token_id
from tokexplorer.cli.output import Progress, print_json, print_table
from tokexplorer.core.budgets import (TRAIN_CHUNKS_LIMIT_MB, TRAIN_LIMIT_MB, TRAIN_PEAK_MB, WHOLE_TEXT_DEFAULTS,
                                      basic_piece_limit_mb, max_mb_for, memory_text, peak_key, training_over_budget,
                                      training_peak_gb)
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.training.runner import Report


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
    p.add_argument("--max-mb", type=megabytes, metavar="N",
                   help="memory budget. BPE with a named pattern reads the corpus a block at a time, "
                   f"any size: stop once its distinct chunks pass N MB (default {TRAIN_CHUNKS_LIMIT_MB}, "
                   f"peak near {_peak('bpe-stream')}). Otherwise refuse corpora of over N MB "
                   f"(default {TRAIN_LIMIT_MB['bpe']} for BPE with a custom pattern, which peaks "
                   f"near {_peak('bpe')}, or none, near {_peak('bpe-bytes')}; "
                   f"{TRAIN_LIMIT_MB['sentencepiece']} for SentencePiece, "
                   f"{_peak('sentencepiece')})")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(handler=run_train)

    p = sub.add_parser("merges", help="the merge tree behind a token",
                       description="Show how BPE built a token, merge by merge, down to bytes.")
    add_tokenizer_argument(p, list_names=False)
    p.add_argument("--token", required=True, metavar="ID|TEXT",
                   help="a token id, or text (each of its tokens is shown)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run_merges)

    p = sub.add_parser("sweep", help="sequence length vs vocab size",
                       description="Train BPE once up to the largest vocab size; every smaller size "
                       "is a prefix of the same merges. Report the evaluation text's token count, "
                       "and the built-in tokenizers' counts of the same text.")
    p.add_argument("corpus", metavar="CORPUS", help="UTF-8 text file to train on")
    p.add_argument("--vocab-sizes", required=True, metavar="N,N,...",
                   help="comma-separated vocab sizes, e.g. 256,512,1024")
    p.add_argument("--eval", metavar="FILE", help="text to count tokens of (default: the corpus)")
    p.add_argument("--held-out", type=float, metavar="FRACTION",
                   help="train on the corpus but its last FRACTION (e.g. 0.1) and count that part")
    p.add_argument("-t", "--tokenizer", action="append", metavar="NAME",
                   help="a reference tokenizer, built-in or file (repeat; default: the four built-ins; "
                   "'-t none' for none)")
    _add_pattern_argument(p)
    p.add_argument("--encoding", help="the files' encoding when it is not UTF-8")
    p.add_argument("--max-mb", type=megabytes, metavar="N",
                   help=f"memory budget: refuse a corpus of over N MB (default {TRAIN_LIMIT_MB['bpe']}: "
                   f"training peaks near {_peak('bpe')}, with no pattern {_peak('bpe-bytes')}); the BPE sizes and the "
                   "GPT-2, GPT-4 and o200k tokenizers count the evaluation text in pieces, others "
                   f"(SentencePiece, tokenizer.json, BPE with a custom pattern) whole: they refuse one of over N million "
                   f"characters (default {WHOLE_TEXT_DEFAULTS}); BPE with no pattern refuses a stretch of over N MB "
                   f"with no place to cut (default {basic_piece_limit_mb():g})")
    p.add_argument("--json", action="store_true", help="print JSON")
    from tokexplorer.cli.commands.plotting import add_plot_arguments

    add_plot_arguments(p)
    p.add_argument("--plot-merges", metavar="PATH.png",
                   help="also draw the training run's bytes per token after each merge into a PNG")
    p.set_defaults(handler=run_sweep)


def _peak(algorithm: str) -> str:
    base, per_mb = TRAIN_PEAK_MB[algorithm]
    return f"{base} MB + {per_mb}x the " + ("distinct chunks" if algorithm == "bpe-stream" else "corpus")


def _add_pattern_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pattern", "-p", default="gpt4",
                   help="BPE split pattern: gpt4, gpt2, o200k, none (Basic: bytes only) or a regex")


def _pattern(value: str) -> str | None:
    from tokexplorer.core.patterns import NAMED_PATTERNS, resolve_pattern

    if value.lower() == "none":
        return None
    # a named pattern is not compiled: on ASCII text, training never imports the `regex` module
    return NAMED_PATTERNS.get(value.lower()) or resolve_pattern(value)


def _preload(with_numpy: bool) -> None:
    """Import what training and saving need (run in a thread while the corpus is read and split);
    numpy only for the Python merge loop on a corpus large enough to train with it (see
    core.training.bpe.NUMPY_STREAM_MIN): the compiled loop needs none."""
    if with_numpy:
        import numpy  # noqa: F401

    import tokexplorer.core.backends.trained_bpe  # noqa: F401
    import tokexplorer.core.files.minbpe  # noqa: F401


def _check_output(prefix: str) -> None:
    """Refuse an output prefix that names a folder, or whose folder is missing or not writable,
    before any time is spent training."""
    from pathlib import Path

    if prefix.endswith(("/", os.sep)) or Path(prefix).is_dir():
        example = Path(prefix) / "mymodel"
        raise TokexplorerError(f"-o {prefix} is a folder; -o takes a file prefix, e.g. -o {example} "
                               f"(writes {example}.model and {example}.vocab)")
    folder = Path(prefix).parent
    if not folder.is_dir():
        raise TokexplorerError(f"the folder of -o {prefix} does not exist ({folder}); create it first")
    # subtle: os.access says yes to root on a read-only file system such as /sys, so a file is made
    # (and removed); not with `tempfile`, whose import (random, shutil and more) costs more than this.
    probe = folder / f".{Path(prefix).name}.{os.getpid()}.{os.urandom(4).hex()}.probe"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
    except OSError as exc:
        raise TokexplorerError(f"cannot write into {folder} ({exc.strerror or exc}); choose another -o") from None


def _file_bytes(paths: list[str]) -> int:
    """The files' total size, before reading them (0 for one that cannot be read: reading says why)."""
    import os

    total = 0
    for p in paths:
        try:
            total += os.path.getsize(p)
        except OSError:
            pass
    return total


def _check_corpus_size(paths: list[str], algorithm: str, max_mb: float | None, *, basic: bool = False) -> None:
    """Refuse, before reading it, a corpus over the training budget (--max-mb raises it); `basic`:
    BPE with no pattern."""
    size = _file_bytes(paths)
    why = training_over_budget(algorithm, size, max_mb, basic=basic)
    if why is not None:
        limit = TRAIN_LIMIT_MB[algorithm] if max_mb is None else max_mb  # above 0 (`megabytes`)
        # subtle: head's "M" is 1024 x 1024 bytes, "MB" a million: the budget's unit
        part = f"{int(limit)}MB" if limit >= 1 else f"{int(limit * 1e6)}"
        raise TokexplorerError(
            f"{why}; train on a part (e.g. the first {limit:g} MB: head -c {part} CORPUS > part.txt), "
            f"or pass --max-mb {max_mb_for(size)} to go on "
            f"(about {memory_text(training_peak_gb(peak_key(algorithm, basic), size / 1e6))})")


def _streams(args: argparse.Namespace) -> bool:
    """Whether `train` counts the corpus a block at a time, never holding it (BPE with a named
    pattern over UTF-8 files): its budget is then on the distinct chunks, checked while counting.

    subtle: a file that starts with a UTF-16 byte-order mark or has a NUL byte near its start is
    read whole (`counting.open_corpus` gives None), so it takes the whole-text budget: a 10 GB
    sparse file of NULs was read whole without it."""
    if args.algorithm != "bpe":
        return False
    from tokexplorer.core.training.counting import open_corpus
    from tokexplorer.core.training.runner import TrainingRequest, streams

    return (streams(TrainingRequest("", "bpe", 0, tuple(args.corpus), pattern=_pattern(args.pattern),
                                    encoding=args.encoding))
            and open_corpus(args.corpus) is not None)


def _read_corpora(paths: list[str], encoding: str | None) -> str:
    from tokexplorer.core.training.runner import read_corpus

    return read_corpus(paths, encoding=encoding)


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
    from tokexplorer.core.training.bpe import assign_special_ids

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
    from tokexplorer.core.training.bpe import MAX_VOCAB_SIZE

    if args.vocab_size is None or not 1 <= args.vocab_size <= MAX_VOCAB_SIZE:
        raise TokexplorerError(f"--vocab-size must be a whole number from 1 to {MAX_VOCAB_SIZE:,}")
    if not _streams(args):
        _check_corpus_size(args.corpus, args.algorithm, args.max_mb, basic=_pattern(args.pattern) is None)
    if args.algorithm == "sentencepiece":
        return _train_sentencepiece(args)
    if args.option or args.show_options or args.model_type != "bpe":
        raise TokexplorerError("--option, --show-options and --model-type are for --algorithm sentencepiece")
    if not args.output:
        raise TokexplorerError("give the output prefix with -o PREFIX (writes PREFIX.model, PREFIX.vocab)")
    _check_output(args.output)
    from tokexplorer.core.training.bpe import NUMPY_STREAM_MIN, check_vocab_size, merge_loop
    from tokexplorer.core.training.runner import TrainingRequest, run_bpe, write_outputs

    pattern = _pattern(args.pattern)
    specials = _parse_specials(args.special)
    total = check_vocab_size(args.vocab_size, len(specials))
    # subtle: the tokenizer and its files' code (and numpy for the Python merge loop on a large
    # corpus: the distinct chunks of a regex split are a small part of it) take a while to import
    # and are needed only after the corpus is read and split; the split releases the interpreter
    # lock, so import them in a thread meanwhile (the user waits for the whole process).
    big = (merge_loop() != "compiled"
           and _file_bytes(args.corpus) >= (NUMPY_STREAM_MIN if pattern is None else 8 * NUMPY_STREAM_MIN))
    preload = threading.Thread(target=_preload, args=(big,), daemon=True)
    preload.start()
    request = TrainingRequest(args.output, "bpe", args.vocab_size, tuple(args.corpus), pattern=pattern,
                              special_tokens=tuple(specials), encoding=args.encoding, max_mb=args.max_mb)
    run = run_bpe(request, _TrainReport(pattern, specials, preload), keep_on_interrupt=True)
    with _interrupts_held() as late:  # the merges are learned: Ctrl-C from here on waits for the files
        from tokexplorer.core.files.minbpe import gpt2_files, minbpe_files, model_parts, tiktoken_file

        merges, n_bytes, kept, tokens = run.merges, run.corpus_bytes, run.trained_bytes, run.tokens
        # the files from the merges, without building a tokenizer (only the other formats need one)
        parts = model_parts(merges, pattern, _special_ids(specials, 256 + len(merges)))
        files = minbpe_files(parts, args.output)
        if args.tiktoken or args.gpt2:
            from tokexplorer.core.backends.trained_bpe import BPETokenizer

            tok = BPETokenizer(merges, pattern, parts.special_tokens, name=args.output)
            if args.tiktoken:
                files.update(tiktoken_file(tok, f"{args.output}.tiktoken"))
            if args.gpt2:
                files.update(gpt2_files(tok, f"{args.output}-gpt2"))
        written, moved = write_outputs(files, args.output, run.interrupted)
    n_vocab = max(parts.vocab) + 1
    summary = {
        "algorithm": "bpe", "mode": "basic" if pattern is None else "regex", "pattern": pattern,
        "merges": len(merges), "requested_merges": total, "vocab_size": n_vocab,
        "special_tokens": parts.special_tokens, "seconds": round(run.seconds, 3), "merge_loop": merge_loop(),
        "corpus_bytes": n_bytes, "dropped_bytes": n_bytes - kept, "corpus_tokens": tokens,
        "compression": round(kept / tokens, 4) if tokens else None,
        "stopped": "interrupted" if run.interrupted else "no pair left" if run.ran_out else None,
        "files": [str(p) for p in written],
    }
    if args.json:
        print_json(summary)
    else:
        print(f"learned {len(merges)} merges in {run.seconds:.2f} s (merge loop: {merge_loop()}): "
              f"vocab size {n_vocab}")
        if run.interrupted:
            where = (f" in {moved}.model; the complete model at {args.output} is unchanged"
                     if moved else "")
            print(f"interrupted: kept the {len(merges)} merges learned so far{where}")
        elif run.ran_out:
            print(f"stopped early: no pair left to merge; the vocab size reached is {n_vocab} "
                  f"(asked for {args.vocab_size})")
        left_out = f" ({n_bytes - kept} more left out by the pattern)" if kept < n_bytes else ""
        print(f"corpus: {kept} bytes{left_out} -> {tokens} tokens, compression ratio "
              f"{kept / max(tokens, 1):.2f}X")
        print("wrote " + ", ".join(str(p) for p in written))
    if late and not run.interrupted:
        print("tokexplorer: interrupted after training had finished: the model was saved whole",
              file=sys.stderr)
    return 130 if run.interrupted or late else 0


@contextlib.contextmanager
def _interrupts_held():
    """Ctrl-C inside the block is noted (the list yielded gains an entry), not raised, so that a
    model whose merges are all learned is written whole; the caller says so and exits 130."""
    late: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: late.append(signum))
    except ValueError:  # not the main thread (a test calling main() from a worker): nothing to hold
        yield late
        return
    try:
        yield late
    finally:
        signal.signal(signal.SIGINT, previous)


SHOW_SPLIT_KB = 50_000


class _TrainReport(Report):
    """What `tokexplorer train` shows of a BPE run: a warning for text the pattern leaves out, a large
    corpus's split and the merges' progress on stderr; before the first merge it checks that the special tokens and the
    pattern can be written (the files' code imported meanwhile by `preload`)."""

    def __init__(self, pattern: str | None, specials: dict[str, int | None], preload: threading.Thread):
        self.pattern, self.specials, self.preload = pattern, specials, preload
        self.progress = Progress("merges")
        self.split = Progress("MB split into chunks")

    def phase(self, what: str, done: int, total: int) -> None:
        # A streamed corpus's split (reported in KB), in MB, when it is long enough to wait for
        if what == "splitting into chunks" and total >= SHOW_SPLIT_KB:
            self.split(done // 1000, total // 1000)

    def merging(self, merges: int, trained_bytes: int, corpus_bytes: int) -> None:
        if trained_bytes < corpus_bytes:
            print(f"tokexplorer: warning: the pattern leaves out {corpus_bytes - trained_bytes:,} of the corpus's "
                  f"{corpus_bytes:,} bytes (text it does not match): they are not trained on, and encoding "
                  "drops such text (minbpe does too)", file=sys.stderr)
        self.preload.join()
        from tokexplorer.core.files.minbpe import model_parts, model_text

        # Check what can be checked before spending time on merges.
        model_text(model_parts({}, self.pattern, _special_ids(self.specials, 256 + merges)))

    def merged(self, steps, done: int, total: int) -> bool:
        self.progress(done, total)
        return False


def _interruptible(work):
    """work() in a daemon thread, waited for in short steps, so that Ctrl-C stops the command at once.

    subtle: SentencePiece trains in one C++ call that releases the interpreter lock but returns
    only when it is done, and Python runs its Ctrl-C handler in the main thread only; a main
    thread blocked in that call would let a 200 MB training run on for minutes. Here the main
    thread waits a tenth of a second at a time, and on Ctrl-C the process exits without the
    abandoned thread.
    """
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # raised again in the main thread
            box["error"] = exc

    thread = threading.Thread(target=run, name="tokexplorer-sentencepiece", daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(0.1)
    if "error" in box:
        raise box["error"]
    return box["value"]


def _train_sentencepiece(args: argparse.Namespace) -> int:
    from tokexplorer.core.training.runner import (TrainingRequest, files_saved, run_sentencepiece,
                                                  sentencepiece_options, write_outputs)
    from tokexplorer.core.training.sentencepiece import count_sample, llama2_options, sentencepiece_files

    overrides = _parse_options(args.option)
    for key, flag in (("model_type", "--model-type"), ("vocab_size", "--vocab-size")):
        if key in overrides:
            raise TokexplorerError(f"--option {key}=…: set it with {flag} instead")
    specials = _parse_specials(args.special)
    if any(i is not None for i in specials.values()):
        raise TokexplorerError("SentencePiece assigns special-token ids itself; give --special TOKEN without =ID")
    request = TrainingRequest(args.output, "sentencepiece", args.vocab_size, tuple(args.corpus),
                              special_tokens=tuple(specials), encoding=args.encoding,
                              sp_options=llama2_options(args.vocab_size, args.model_type, **overrides))
    options = sentencepiece_options(request)
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
    try:
        tok = _interruptible(lambda: run_sentencepiece(text, request, _SentencesReport()))
    except KeyboardInterrupt:
        print("interrupted while SentencePiece trained: nothing was written", file=sys.stderr, flush=True)
        sys.stdout.flush()
        # subtle: a normal exit would finalise the interpreter under the library's running call,
        # which then touches Python state and aborts the process (SIGABRT).
        os._exit(130)
    seconds = time.perf_counter() - started
    files = sentencepiece_files(tok, args.output)
    try:
        written, _ = write_outputs(files, args.output, False)
        # The summary counts a sample: the whole corpus would take as long to encode as to train.
        counted, tokens = count_sample(tok, text)
    except KeyboardInterrupt:
        if not files_saved(files):
            raise  # before the files were in place: the old ones are kept, nothing new was written
        print("interrupted while counting the summary; the model is complete and saved: "
              + ", ".join(map(str, files)), file=sys.stderr)
        return 130
    n_bytes = len(text.encode("utf-8"))
    whole = counted == n_bytes
    summary = {"algorithm": "sentencepiece", "model_type": args.model_type, "vocab_size": tok.n_vocab,
               "seconds": round(seconds, 3), "corpus_bytes": n_bytes,
               "counted_bytes": counted, "counted_tokens": tokens,  # the sample the summary counts
               "corpus_tokens": tokens if whole else None,
               "options": options, "files": [str(p) for p in written]}
    if args.json:
        print_json(summary)
    else:
        print(f"trained SentencePiece {args.model_type} in {seconds:.2f} s: vocab size {tok.n_vocab}")
        rate = f"{counted / max(tokens, 1):.2f} bytes/token"
        print(f"corpus: {n_bytes} bytes -> {tokens} tokens, {rate}" if whole else
              f"corpus: {n_bytes} bytes; its first {counted} bytes (a sample) -> {tokens} tokens, {rate}")
        print("wrote " + ", ".join(str(p) for p in written))
    return 0


class _SentencesReport(Report):
    """What `tokexplorer train` shows of a SentencePiece run: the sentences read, on stderr."""

    def __init__(self):
        self.progress = Progress("sentences")

    def sentences(self, done: int, total: int) -> None:
        self.progress(done, total)


def render_tree(node) -> list[str]:
    """A merge tree as text lines, children indented below their token.

    >>> from tokexplorer.core.analysis.merge_tree import MergeNode
    >>> render_tree(MergeNode(256, b"hi", MergeNode(104, b"h"), MergeNode(105, b"i")))
    ['256 hi', '├─ 104 h', '└─ 105 i']
    """
    from tokexplorer.core.analysis.unicode_info import token_label

    def label(n) -> str:
        return f"{'-' if n.id is None else n.id} {token_label(n.bytes)}"

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
    from tokexplorer.core.analysis.merge_tree import merge_tree
    from tokexplorer.core.registry import load_tokenizer

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
    from pathlib import Path

    from tokexplorer.core.backends.trained_bpe import BPETokenizer
    from tokexplorer.core.registry import load_tokenizer
    from tokexplorer.core.analysis.sweep import check_whole_counts, parse_vocab_sizes, split_held_out, sweep
    from tokexplorer.core.files.text_blocks import TextFile
    from tokexplorer.core.training.held_out import sweep_corpus
    from tokexplorer.core.training.runner import TrainingRequest, streams
    from tokexplorer.cli.commands.plotting import check_plot_path
    from tokexplorer.cli.commands.plotting import write_plot
    from tokexplorer.cli.commands.reports import DEFAULT_TOKENIZERS

    sizes = parse_vocab_sizes(args.vocab_sizes)
    check_plot_path(args.plot)
    check_plot_path(args.plot_merges)
    if args.eval and args.held_out is not None:
        raise TokexplorerError("give either --eval FILE or --held-out FRACTION, not both")
    pattern = _pattern(args.pattern)
    # as `train`: a named pattern over a UTF-8 file never holds the corpus, and its budget is on
    # the distinct chunks, checked while counting; else on the corpus, checked before reading it
    request = TrainingRequest("", "bpe", 0, (args.corpus,), pattern=pattern, encoding=args.encoding)
    if not streams(request):
        _check_corpus_size([args.corpus], "bpe", args.max_mb, basic=pattern is None)
    chunks_mb = args.max_mb or TRAIN_CHUNKS_LIMIT_MB
    names = args.tokenizer or DEFAULT_TOKENIZERS
    references = [load_tokenizer(n) for n in dict.fromkeys(names) if n.lower() != "none"]
    evaluation, source = None, "the corpus"
    if args.eval:  # checked now, counted a block at a time where the tokenizer allows it
        evaluation, source = TextFile(args.eval, args.encoding), Path(args.eval).name
        if evaluation.in_blocks():
            evaluation.scan([])
        else:
            evaluation = evaluation.read()
    # Refused before training: an evaluation text over the budget of a tokenizer that counts it
    # whole; the trained BPE's too (a pattern of its own), unless it is the corpus, whose trained
    # sizes are counted by the training run itself.
    trained = BPETokenizer({}, pattern, name="the trained BPE")
    if evaluation is not None:
        check_whole_counts([trained, *references], evaluation, args.max_mb)
    elif args.held_out is None:
        check_whole_counts(references, TextFile(args.corpus, args.encoding), args.max_mb)
    # (a UTF-8 file with a named pattern or none is counted from its bytes, never held whole)
    text = sweep_corpus(args.corpus, args.held_out, pattern, encoding=args.encoding, max_unique_mb=chunks_mb)
    if text is not None:
        text, counted_evaluation = text
        if args.held_out is not None:
            evaluation = counted_evaluation
    if text is None:
        if streams(request):  # (a file that is UTF-16, or may be: read whole after all)
            _check_corpus_size([args.corpus], "bpe", args.max_mb)
        text = _read_corpora([args.corpus], args.encoding)
        if args.held_out is not None:
            text, evaluation = split_held_out(text, args.held_out)
    if args.held_out is not None:
        source = f"held-out {args.held_out:.0%}"
        check_whole_counts([trained, *references], evaluation, args.max_mb)
    result = sweep(text, sizes, pattern=pattern, eval_text=evaluation, eval_source=source,
                   references=references, progress=Progress("merges"), limit_mb=args.max_mb)
    if args.json:
        print_json(result.to_dict())
    else:
        n_bytes = result.eval_bytes
        print(f"tokens of {source} ({n_bytes:,} bytes) after training on {result.train_bytes:,} bytes")
        rows = [["BPE", p.vocab_size, p.tokens, f"{p.bytes_per_token(n_bytes):.2f}",
                 "" if p.reached else f"no pair left at {256 + result.merges_learned}"] for p in result.points]
        rows += [[r.name, r.n_vocab, r.tokens, f"{n_bytes / max(r.tokens, 1):.2f}", "ready-made"]
                 for r in result.references]
        print_table(["tokenizer", "vocab size", "tokens", "bytes/token", "note"], rows, right={1, 2, 3})
    if args.plot:
        write_plot(result, args.plot, dark=args.dark)
    if args.plot_merges:
        write_plot(result.curve, args.plot_merges, dark=args.dark)
    return 0
