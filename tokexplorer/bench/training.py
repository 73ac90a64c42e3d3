"""Training benchmarks: our BPE trainer beside Hugging Face `tokenizers` and the reference trainer.

Each measurement runs in a fresh process so that its peak memory is its own: wall time is taken
inside the process (training only, corpus already read), peak memory is the process's peak
resident set size (getrusage ru_maxrss via os.wait4), which includes the interpreter and its
imports; an idle process with the same imports is shown for comparison.

Peers: `tokenizers`' BpeTrainer with the same split pattern, byte-level, fed line by line (its
fastest way; an optional extra: the rows say so if it is missing); the slow reference trainer
(tests/reference_bpe.py in a source checkout), timed on its first merges and scaled linearly to the
full run, because the full run takes minutes to hours.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from . import corpora_dir

REFERENCE = Path(__file__).resolve().parents[2] / "tests" / "reference_bpe.py"
TEXT_SUFFIXES = {".txt", ".py", ".json", ".yml"}


def all_corpora_text() -> str:
    """Every UTF-8 text file of the shared corpora, concatenated in path order."""
    parts = []
    for path in sorted(corpora_dir().rglob("*")):
        if path.suffix in TEXT_SUFFIXES and path.is_file():
            try:
                parts.append(path.read_bytes().decode("utf-8"))
            except UnicodeDecodeError:
                continue
    return "".join(parts)


def _read(corpus: str) -> str:
    if corpus == "ALL":
        return all_corpora_text()
    return (corpora_dir() / corpus).read_bytes().decode("utf-8")


def _work(kind: str, corpus: str, vocab_size: int, pattern: str | None) -> dict:
    """Run one measurement in this process: {"seconds", "vocab_size"}."""
    text = _read(corpus)
    if kind == "idle":
        from ..core import bpe_training  # noqa: F401 - the same imports as a real run

        return {"seconds": 0.0, "vocab_size": 0}
    if kind == "ours":
        from ..core.bpe_training import iter_train

        t0 = time.perf_counter()
        n = sum(1 for _ in iter_train(text, vocab_size, pattern=pattern))
        return {"seconds": time.perf_counter() - t0, "vocab_size": 256 + n}
    if kind == "hf":
        from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

        t0 = time.perf_counter()
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        tok.train_from_iterator(text.splitlines(keepends=True), trainer)
        return {"seconds": time.perf_counter() - t0, "vocab_size": tok.get_vocab_size()}
    if kind.startswith("reference"):
        import importlib.util

        spec = importlib.util.spec_from_file_location("reference_bpe", REFERENCE)
        ref = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(ref)
        merges = int(kind.split(":")[1])
        t0 = time.perf_counter()
        ref.train(text, 256 + merges, pattern)
        return {"seconds": time.perf_counter() - t0, "vocab_size": 256 + merges}
    raise AssertionError(kind)


def _measure(kind: str, corpus: str, vocab_size: int, pattern: str | None) -> dict:
    """One measurement in a fresh process: seconds, vocab size reached, peak RSS in MB."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tokexplorer.bench.training", kind, corpus, str(vocab_size),
         pattern or ""],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        return {"error": err.decode(errors="replace").strip().splitlines()[-1:] or ["failed"]}
    result = json.loads(out)
    result["peak_mb"] = usage.ru_maxrss / 1024  # kilobytes on Linux
    return result


def run(args) -> dict:
    from ..core.patterns import GPT4_SPLIT_PATTERN

    try:
        import tokenizers  # noqa: F401
        have_hf = True
    except ImportError:
        have_hf = False
    repeat = max(1, args.repeat)
    cases = [
        # (label, corpus, vocab size, pattern, peer, reference merges to time)
        ("Regex gpt4, vocab 32768", "en/tinyshakespeare.txt", 32768, GPT4_SPLIT_PATTERN, "hf", 0),
        ("Regex gpt4, vocab 32768", "ALL", 32768, GPT4_SPLIT_PATTERN, "hf", 0),
        ("Regex gpt4, vocab 1024", "en/taylorswift.txt", 1024, GPT4_SPLIT_PATTERN, "reference", 32),
        ("Basic, vocab 4096", "en/tinyshakespeare.txt", 4096, None, "reference", 4),
    ]
    rows = []
    notes = []
    for label, corpus, vocab_size, pattern, peer, ref_merges in cases:
        ours = [_measure("ours", corpus, vocab_size, pattern) for _ in range(repeat)]
        best = min(ours, key=lambda r: r.get("seconds", float("inf")))
        name = "all corpora" if corpus == "ALL" else Path(corpus).name
        if peer == "hf":
            if not have_hf:
                rows.append([label, name, f"{best['seconds']:.2f}", f"{best['peak_mb']:.0f}",
                             best["vocab_size"], "tokenizers not installed", "-", "-", "-"])
                continue
            theirs = min((_measure("hf", corpus, vocab_size, pattern) for _ in range(repeat)),
                         key=lambda r: r.get("seconds", float("inf")))
            peer_name = "HF tokenizers"
            peer_seconds = theirs["seconds"]
            peer_mb = f"{theirs['peak_mb']:.0f}"
        else:
            if not REFERENCE.exists():
                rows.append([label, name, f"{best['seconds']:.2f}", f"{best['peak_mb']:.0f}",
                             best["vocab_size"], "reference (not in this install)", "-", "-", "-"])
                continue
            timed = _measure(f"reference:{ref_merges}", corpus, vocab_size, pattern)
            peer_name = f"reference (x{(best['vocab_size'] - 256) / ref_merges:.0f} of {ref_merges} merges)"
            peer_seconds = timed["seconds"] * (best["vocab_size"] - 256) / ref_merges
            peer_mb = f"{timed['peak_mb']:.0f}"
        rows.append([label, name, f"{best['seconds']:.2f}", f"{best['peak_mb']:.0f}", best["vocab_size"],
                     peer_name, f"{peer_seconds:.2f}", peer_mb, f"{best['seconds'] / peer_seconds:.3g}"])
    idle = _measure("idle", "en/taylorswift.txt", 0, None)
    notes.append(f"peak MB: the process's peak resident set (ru_maxrss), interpreter and imports "
                 f"included; an idle process with the same imports peaks at {idle['peak_mb']:.0f} MB")
    notes.append("seconds: training only, best of --repeat runs, each in a fresh process; "
                 "HF tokenizers: BpeTrainer, same pattern, byte-level, fed line by line")
    notes.append("reference: the plain minbpe algorithm of tests/reference_bpe.py, timed on its first "
                 "merges and scaled linearly to the merges of the full run (the real run is slower "
                 "still early on and faster later; a rough figure)")
    notes.append("a vocab below the one asked for means training ran out of pairs (every chunk is one token)")
    return {
        "title": "training byte-level BPE: ours beside HF tokenizers and the reference",
        "headers": ["case", "corpus", "ours s", "ours MB", "vocab", "peer", "peer s", "peer MB",
                    "ours/peer"],
        "rows": rows,
        "notes": notes,
    }


if __name__ == "__main__":
    kind, corpus, vocab, pat = sys.argv[1:5]
    print(json.dumps(_work(kind, corpus, int(vocab), pat or None)))
