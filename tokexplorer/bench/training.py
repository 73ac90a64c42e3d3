"""Training benchmarks: `tokexplorer train` beside Hugging Face `tokenizers` and the reference.

Against `tokenizers` the measure is what a user waits for: the whole process, from starting
`python -m tokexplorer train CORPUS... --vocab-size 32768 -o PREFIX` to its exit (start-up,
imports, reading, training, writing PREFIX.model and PREFIX.vocab), beside the whole process of a
script that trains with `tokenizers` (`hf_train.py`: same split pattern, byte-level, fed line by
line, writes vocab.json and merges.txt). The two alternate, --repeat times each; the table gives
the median and the range. Peak memory is the process's peak resident set size (ru_maxrss via
os.wait4), interpreter and imports included. `tokenizers` is an optional extra: without it the
bench says how to install it. A note says which merge loop ours ran (compiled, or pure Python and
why), as `tokexplorer train --json` reports it.

Against the slow reference trainer (tests/reference_bpe.py in a source checkout) the measure is
training only, in a fresh process, timed on its first merges and scaled linearly to the full
run, because the full run takes minutes to hours.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tokexplorer.bench import corpora_dir

REFERENCE = Path(__file__).resolve().parents[2] / "tests" / "reference_bpe.py"
HF_SCRIPT = Path(__file__).with_name("hf_train.py")
TEXT_SUFFIXES = {".txt", ".py", ".json", ".yml"}
INSTALL_PEER = "pip install --force-reinstall tokenizers"  # a dependency: missing only if the install broke


def all_corpora_files() -> list[Path]:
    """Every UTF-8 text file of the shared corpora, in path order."""
    files = []
    for path in sorted(corpora_dir().rglob("*")):
        if path.suffix in TEXT_SUFFIXES and path.is_file():
            try:
                path.read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                continue
            files.append(path)
    return files


def all_corpora_text() -> str:
    """Every UTF-8 text file of the shared corpora, concatenated in path order."""
    return "".join(p.read_bytes().decode("utf-8") for p in all_corpora_files())


def _read(corpus: str) -> str:
    if corpus == "ALL":
        return all_corpora_text()
    return (corpora_dir() / corpus).read_bytes().decode("utf-8")


def _work(kind: str, corpus: str, vocab_size: int, pattern: str | None) -> dict:
    """Run one measurement in this process: {"seconds", "vocab_size"}."""
    text = _read(corpus)
    if kind == "ours":
        from tokexplorer.core.training.bpe import iter_train

        t0 = time.perf_counter()
        n = sum(1 for _ in iter_train(text, vocab_size, pattern=pattern))
        return {"seconds": time.perf_counter() - t0, "vocab_size": 256 + n}
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


def _whole_process(command: list[str]) -> dict:
    """Run a command to its end: {"seconds" (wall, start to exit), "peak_mb", "out"}."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read()  # both write little on stderr (progress lines): no deadlock
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])}… failed: "
                           + (err.decode(errors="replace").strip().splitlines() or ["?"])[-1])
    return {"seconds": seconds, "peak_mb": usage.ru_maxrss / 1024, "out": out.decode()}


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def whole_process_case(files: list[Path], vocab_size: int, repeat: int, have_hf: bool) -> dict:
    """`tokexplorer train` and the tokenizers script, alternating, each `repeat` times."""
    from tokexplorer.core.patterns import GPT4_SPLIT_PATTERN

    out = Path(tempfile.mkdtemp(prefix="tokexplorer-bench-train-"))
    ours_cmd = [sys.executable, "-m", "tokexplorer", "train", *map(str, files), "--vocab-size",
                str(vocab_size), "--pattern", "gpt4", "-o", str(out / "ours"), "--json"]
    peer_cmd = [sys.executable, str(HF_SCRIPT), str(out), str(vocab_size), GPT4_SPLIT_PATTERN,
                *map(str, files)]
    ours, peer = [], []
    for _ in range(max(1, repeat)):
        ours.append(_whole_process(ours_cmd))
        if have_hf:
            peer.append(_whole_process(peer_cmd))
    for f in out.iterdir():
        f.unlink()
    out.rmdir()
    return {"ours": ours, "peer": peer,
            "vocab": json.loads(ours[-1]["out"])["vocab_size"],
            "merge_loop": json.loads(ours[-1]["out"])["merge_loop"],
            "peer_vocab": int(peer[-1]["out"].strip()) if peer else None}


def run(args) -> dict:
    try:
        import tokenizers  # noqa: F401
        have_hf = True
    except ImportError:
        have_hf = False
    repeat = max(1, args.repeat)
    rows = []
    notes = []
    if not have_hf:
        notes.append("Hugging Face tokenizers, the peer of the whole-process rows, is not installed; "
                     f"install it with: {INSTALL_PEER}")
    en = corpora_dir() / "en/tinyshakespeare.txt"
    loops = set()
    for name, files in (("tinyshakespeare.txt", [en]), ("all corpora", all_corpora_files())):
        case = whole_process_case(files, 32768, repeat, have_hf)
        ours_s = [r["seconds"] for r in case["ours"]]
        ours_mb = max(r["peak_mb"] for r in case["ours"])
        row = ["Regex gpt4, vocab 32768", name, "whole process", _spread(ours_s), f"{ours_mb:.0f}", case["vocab"]]
        if have_hf:
            peer_s = [r["seconds"] for r in case["peer"]]
            row += [f"HF tokenizers (vocab {case['peer_vocab']})", _spread(peer_s),
                    f"{max(r['peak_mb'] for r in case['peer']):.0f}",
                    f"{statistics.median(ours_s) / statistics.median(peer_s):.2f}"]
        else:
            row += [f"not installed: {INSTALL_PEER}", "", "", ""]
        rows.append(row)
        loops.add(case["merge_loop"])
    notes.append(f"ours: merge loop {', '.join(sorted(loops))} (TOKEXPLORER_PURE_PYTHON=1 forces the Python one)")
    for label, corpus, vocab_size, pattern, ref_merges in [
        ("Regex gpt4, vocab 1024", "en/taylorswift.txt", 1024, "gpt4", 32),
        ("Basic, vocab 4096", "en/tinyshakespeare.txt", 4096, None, 4),
    ]:
        from tokexplorer.core.patterns import GPT4_SPLIT_PATTERN

        regex = GPT4_SPLIT_PATTERN if pattern else None
        ours = [_measure("ours", corpus, vocab_size, regex) for _ in range(repeat)]
        secs = [r["seconds"] for r in ours]
        reached = ours[0]["vocab_size"]
        row = [label, Path(corpus).name, "training only", _spread(secs), f"{ours[0]['peak_mb']:.0f}", reached]
        if REFERENCE.exists():
            timed = _measure(f"reference:{ref_merges}", corpus, vocab_size, regex)
            peer_seconds = timed["seconds"] * (reached - 256) / ref_merges
            row += [f"reference (x{(reached - 256) / ref_merges:.0f} of {ref_merges} merges)",
                    f"{peer_seconds:.2f}", f"{timed['peak_mb']:.0f}",
                    f"{statistics.median(secs) / peer_seconds:.3g}"]
        else:
            row += ["reference: only in a source checkout (tests/reference_bpe.py)", "", "", ""]
        rows.append(row)
    notes.append(f"seconds: median (range) of {repeat} runs; whole process: wall time from start to exit, "
                 "ours and the peer alternating; training only: inside a fresh process, corpus already read")
    notes.append("peak MB: the process's peak resident set (ru_maxrss), interpreter and imports included")
    notes.append("reference: the plain minbpe algorithm of tests/reference_bpe.py, timed on its first "
                 "merges and scaled linearly to the merges of the full run (a rough figure)")
    notes.append("a vocab below the one asked for means training ran out of pairs (every chunk is one token); "
                 "tokenizers counts differently and may stop at another size")
    return {
        "title": "training byte-level BPE: tokexplorer train beside HF tokenizers and the reference",
        "headers": ["case", "corpus", "measures", "ours s", "ours MB", "vocab", "peer", "peer s",
                    "peer MB", "ours/peer"],
        "rows": rows,
        "notes": notes,
    }


if __name__ == "__main__":
    kind, corpus, vocab, pat = sys.argv[1:5]
    print(json.dumps(_work(kind, corpus, int(vocab), pat or None)))
