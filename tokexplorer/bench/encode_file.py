"""Encoding a big file from the command line beside tiktoken's own encode of the same file, as
whole processes.

For each tokenizer that streams (the tiktoken built-ins), two processes, interleaved round by
round: ours, `python -m tokexplorer encode -t NAME --ids-only --file FILE` (the ids written to
/dev/null), and a script that builds tiktoken's `Encoding` from the same local vocabulary file
with tiktoken's own readers, reads the file and calls `encode_ordinary` on the whole text (never
`tiktoken.get_encoding`: no network). Wall time from start to exit, and the peak resident memory
of each process (`os.wait4`'s rusage). The file: --corpus, or every text file of the shared
corpora concatenated and repeated to FILE_MB megabytes (cut after a newline).
"""

from __future__ import annotations

import gzip
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tokexplorer.core import registry

FILE_MB = 30
TOKENIZERS = ("cl100k_base", "o200k_base", "gpt2")

_LOAD_TIKTOKEN = """
from tiktoken.load import load_tiktoken_bpe
ranks = load_tiktoken_bpe({path!r})
"""
_LOAD_GPT2 = """
from tiktoken.load import data_gym_to_mergeable_bpe_ranks
ranks = data_gym_to_mergeable_bpe_ranks(vocab_bpe_file={bpe!r}, encoder_json_file={encoder!r})
"""
_ENCODE = """
import os, sys
os.environ["TIKTOKEN_CACHE_DIR"] = ""  # read the vocabulary file itself, no copy in a temporary folder
import tiktoken
{load}
enc = tiktoken.Encoding("peer", pat_str={pattern!r}, mergeable_ranks=ranks, special_tokens={specials!r})
with open({file!r}, encoding="utf-8") as f:
    text = f.read()
ids = enc.encode_ordinary(text)
"""


def build_file(folder: Path) -> tuple[Path, str]:
    """FILE_MB of the shared corpora's text files concatenated and repeated, and how it was made."""
    from tokexplorer.bench.training import all_corpora_files

    files = all_corpora_files()
    data = b"".join(p.read_bytes() for p in files)
    size = FILE_MB * 1_000_000
    whole = data * (size // len(data) + 1)
    path = folder / f"corpora-{FILE_MB}mb.txt"
    path.write_bytes(whole[:whole.rindex(b"\n", 0, size) + 1])
    return path, f"the {len(files)} text files of the shared corpora ({len(data) / 1e6:.1f} MB) repeated"


def _peer_script(name: str, file: Path, folder: Path) -> str:
    def plain(data: registry.DataFile) -> str:
        path = data.location()
        if path.suffix != ".gz":
            return str(path)
        unpacked = folder / path.stem
        if not unpacked.exists():
            unpacked.write_bytes(gzip.decompress(path.read_bytes()))
        return str(unpacked)

    tok = registry.get_builtin(name)
    if name == "gpt2":
        load = _LOAD_GPT2.format(bpe=plain(registry.GPT2_VOCAB_BPE), encoder=plain(registry.GPT2_ENCODER))
    else:
        load = _LOAD_TIKTOKEN.format(path=plain({"cl100k_base": registry.CL100K, "o200k_base": registry.O200K}[name]))
    return _ENCODE.format(load=load, pattern=tok.split_pattern, specials=tok.special_tokens, file=str(file))


def _run(command: list[str]) -> tuple[float, float]:
    """Wall seconds from start to exit, and the process's peak resident memory in MB."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command[:6])}… failed: "
                           + (err.decode(errors="replace").strip().splitlines() or ["?"])[-1])
    return seconds, usage.ru_maxrss / 1024  # kilobytes on Linux


def _spread(values: list[float], digits: int = 2) -> str:
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def run(args) -> dict:
    rounds = max(1, args.repeat)
    rows = []
    with tempfile.TemporaryDirectory(prefix="tokexplorer-bench-encode-") as tmp:
        folder = Path(tmp)
        if getattr(args, "corpus", None):
            file, made = Path(args.corpus), "--corpus"
        else:
            file, made = build_file(folder)
        mb = file.stat().st_size / 1e6
        for name in TOKENIZERS:
            ours_command = [sys.executable, "-m", "tokexplorer", "encode", "-t", name, "--ids-only",
                            "--file", str(file)]
            peer_command = [sys.executable, "-c", _peer_script(name, file, folder)]
            _run(ours_command)  # the vocabulary's compact copy made, the files in the OS's cache
            ours, peer = [], []
            for _ in range(rounds):  # interleaved, so load from elsewhere hits both alike
                ours.append(_run(ours_command))
                peer.append(_run(peer_command))
            ours_s, ours_mb = [s for s, _ in ours], [m for _, m in ours]
            peer_s, peer_mb = [s for s, _ in peer], [m for _, m in peer]
            rows.append([name, _spread(ours_s), _spread(peer_s),
                         f"{statistics.median(ours_s) / statistics.median(peer_s):.2f}",
                         _spread(ours_mb, 0), _spread(peer_mb, 0),
                         f"{statistics.median(ours_mb) / statistics.median(peer_mb):.2f}"])
    return {
        "title": f"encoding a {mb:.1f} MB file, whole processes, median (range) of {rounds} interleaved runs",
        "headers": ["tokenizer", "tokexplorer s", "tiktoken s", "time ratio", "tokexplorer MB",
                    "tiktoken MB", "memory ratio"],
        "rows": rows,
        "notes": [
            f"file: {made}; {os.cpu_count()} cores",
            "tokexplorer: `python -m tokexplorer encode -t NAME --ids-only --file FILE > /dev/null`, after "
            "one untimed run",
            "tiktoken: a script building tiktoken.Encoding from the same vocabulary file with tiktoken's "
            "load_tiktoken_bpe / data_gym_to_mergeable_bpe_ranks, reading the file and calling "
            "encode_ordinary on the whole text",
            "MB: peak resident memory of the process (os.wait4); targets: both ratios at most 1.0",
        ],
    }
