"""Training benchmarks: `tokexplorer train` beside Hugging Face `tokenizers`, rustbpe and the reference.

Against `tokenizers` and rustbpe the measure is what a user waits for: the whole process, from
starting `python -m tokexplorer train CORPUS... --vocab-size 32768 -o PREFIX` to its exit (start-up,
imports, reading, training, writing PREFIX.model and PREFIX.vocab), beside the whole process of a
script that trains with the peer (`hf_train.py`: same split pattern, byte-level, fed line by
line, writes vocab.json and merges.txt; `rustbpe_train.py`: same pattern, fed line by line, writes
nothing), on tinyshakespeare, all the shared corpora, and 100 MB of real text (the Python
installation's source and docs and the corpora, built in a temporary folder and deleted after).
They alternate, --repeat times each; the table gives the median and the range
(`--training-case tinyshakespeare|all|large`, repeated, runs only those cases). Both sides run as
installed programs do, with their modules' bytecode cached: an untimed first run of ours writes
it (as pip does at install). subtle: with PYTHONDONTWRITEBYTECODE set (a developer's or CI's
environment) our modules edited since their bytecode was written would be compiled again at every
timed run, and the peer's never: the variable is taken out of both sides' environment. Peak memory is the
process's peak resident set size (ru_maxrss via os.wait4: the largest of the process and its
children, ours' counting workers included), interpreter and imports included. Both peers are
optional (`pip install tokexplorer[bench]`): a peer that is not installed gets a line saying so.
A note says which merge loop ours ran (compiled, or pure Python and why), as `tokexplorer train
--json` reports it. rustbpe breaks ties its own way: its merges are not minbpe's, ours are.

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
RUSTBPE_SCRIPT = Path(__file__).with_name("rustbpe_train.py")
TEXT_SUFFIXES = {".txt", ".py", ".json", ".yml"}
INSTALL_PEER = "pip install --force-reinstall tokenizers"  # a dependency: missing only if the install broke
INSTALL_RUSTBPE = "pip install rustbpe (or tokexplorer[bench])"
# The large row: this many bytes of real text, not one file repeated.
LARGE_MB = 100
LARGE_SUFFIXES = (".py", ".txt", ".rst", ".md", ".html", ".c", ".h", ".pyi")
# The whole-process cases (`bench --training-case` picks some; all by default, with the training-only rows).
CASES = ["tinyshakespeare", "all", "large"]


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


def large_corpus(path: Path, size_mb: int = LARGE_MB) -> int:
    """Write up to `size_mb` MB of real text to `path`: the shared corpora, then the UTF-8 source and
    documentation files of the Python installation (standard library, then site-packages), in path
    order. Returns the bytes written (less than asked when the machine has less)."""
    import sysconfig

    roots = [corpora_dir(), Path(sysconfig.get_paths()["stdlib"]), Path(sysconfig.get_paths()["purelib"])]
    want, written = size_mb * 1_000_000, 0
    with open(path, "wb") as out:
        for root in roots:
            for file in sorted(root.rglob("*")):
                if written >= want:
                    return written
                if file.suffix not in LARGE_SUFFIXES or not file.is_file():
                    continue
                try:
                    data = file.read_bytes()
                    data.decode("utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                if written + len(data) > want:  # cut at a line's end, so the text stays UTF-8
                    data = data[:data.rfind(b"\n", 0, want - written) + 1]
                out.write(data)
                written += len(data)
    return written


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
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    t0 = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
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


def whole_process_case(files: list[Path], vocab_size: int, repeat: int, peers: dict[str, bool]) -> dict:
    """`tokexplorer train` and each installed peer's script, alternating, each `repeat` times:
    {"ours": [run, ...], "peers": {name: [run, ...]}, "vocab", "merge_loop", "peer_vocab": {name: n}}."""
    from tokexplorer.core.patterns import GPT4_SPLIT_PATTERN

    out = Path(tempfile.mkdtemp(prefix="tokexplorer-bench-train-"))
    ours_cmd = [sys.executable, "-m", "tokexplorer", "train", *map(str, files), "--vocab-size",
                str(vocab_size), "--pattern", "gpt4", "-o", str(out / "ours"), "--json"]
    commands = {
        "HF tokenizers": [sys.executable, str(HF_SCRIPT), str(out), str(vocab_size), GPT4_SPLIT_PATTERN,
                          *map(str, files)],
        "rustbpe": [sys.executable, str(RUSTBPE_SCRIPT), str(vocab_size), GPT4_SPLIT_PATTERN, *map(str, files)],
    }
    ours: list[dict] = []
    runs: dict[str, list[dict]] = {name: [] for name, have in peers.items() if have}
    _whole_process(ours_cmd)  # untimed: our bytecode written (as an install does), the files in the OS's cache
    for _ in range(max(1, repeat)):
        ours.append(_whole_process(ours_cmd))
        for name in runs:
            runs[name].append(_whole_process(commands[name]))
    for f in out.iterdir():
        f.unlink()
    out.rmdir()
    summary = json.loads(ours[-1]["out"])
    return {"ours": ours, "peers": runs, "vocab": summary["vocab_size"], "merge_loop": summary["merge_loop"],
            "peer_vocab": {name: int(r[-1]["out"].strip()) for name, r in runs.items()}}


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def run(args) -> dict:
    peers = {"HF tokenizers": _installed("tokenizers"), "rustbpe": _installed("rustbpe")}
    install = {"HF tokenizers": INSTALL_PEER, "rustbpe": INSTALL_RUSTBPE}
    repeat = max(1, args.repeat)
    rows = []
    notes = [f"{name} is not installed: its rows are empty; install it with: {install[name]}"
             for name, have in peers.items() if not have]
    en = corpora_dir() / "en/tinyshakespeare.txt"
    narrowed = getattr(args, "training_case", None)  # --training-case, repeated: those, and no more
    chosen = narrowed or CASES
    loops = set()
    folder = Path(tempfile.mkdtemp(prefix="tokexplorer-bench-large-"))
    large = folder / "large.txt"
    try:
        cases = []
        if "tinyshakespeare" in chosen:
            cases.append(("tinyshakespeare.txt", [en]))
        if "all" in chosen:
            cases.append(("all corpora", all_corpora_files()))
        if "large" in chosen:
            cases.append((f"{large_corpus(large) / 1e6:.0f} MB of source and docs", [large]))
        for name, files in cases:
            case = whole_process_case(files, 32768, repeat, peers)
            ours_s = [r["seconds"] for r in case["ours"]]
            ours_mb = max(r["peak_mb"] for r in case["ours"])
            for peer, have in peers.items():
                row = ["Regex gpt4, vocab 32768", name, "whole process", _spread(ours_s), f"{ours_mb:.0f}",
                       case["vocab"]]
                if have:
                    peer_s = [r["seconds"] for r in case["peers"][peer]]
                    row += [f"{peer} (vocab {case['peer_vocab'][peer]})", _spread(peer_s),
                            f"{max(r['peak_mb'] for r in case['peers'][peer]):.0f}",
                            f"{statistics.median(ours_s) / statistics.median(peer_s):.2f}"]
                else:
                    row += [f"{peer}: not installed ({install[peer]})", "", "", ""]
                rows.append(row)
            loops.add(case["merge_loop"])
    finally:
        large.unlink(missing_ok=True)
        folder.rmdir()
    notes.append(f"ours: merge loop {', '.join(sorted(loops))} (TOKEXPLORER_PURE_PYTHON=1 forces the Python one)")
    for label, corpus, vocab_size, pattern, ref_merges in [] if narrowed else [
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
                 "ours and the peer alternating, after an untimed run of ours, bytecode cached on both sides "
                 "(PYTHONDONTWRITEBYTECODE taken out of their environment); training only: inside a fresh "
                 "process, corpus already read")
    notes.append("peak MB: the process's peak resident set (ru_maxrss), interpreter and imports included; "
                 "for ours the largest of the main process and its counting workers (a worker held "
                 "60-70 MB on 100 MB, while the main process held less than at its peak)")
    notes.append("reference: the plain minbpe algorithm of tests/reference_bpe.py, timed on its first "
                 "merges and scaled linearly to the merges of the full run (a rough figure)")
    notes.append("a vocab below the one asked for means training ran out of pairs (every chunk is one token); "
                 "the peers count differently (fed line by line) and may stop at another size")
    notes.append("rustbpe breaks ties between equally frequent pairs its own way: its merges differ from "
                 "minbpe's; ours are minbpe's exactly")
    return {
        "title": "training byte-level BPE: tokexplorer train beside HF tokenizers, rustbpe and the reference",
        "headers": ["case", "corpus", "measures", "ours s", "ours MB", "vocab", "peer", "peer s",
                    "peer MB", "ours/peer"],
        "rows": rows,
        "notes": notes,
    }


if __name__ == "__main__":
    kind, corpus, vocab, pat = sys.argv[1:5]
    print(json.dumps(_work(kind, corpus, int(vocab), pat or None)))
