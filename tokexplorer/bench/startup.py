"""Cold start of the command line beside the libraries' own load of the same vocabulary, and the
window's start beside a bare PySide6 window (`window_start`).

For each built-in, two whole processes, interleaved round by round: ours,
`python -m tokexplorer encode -t NAME --ids-only "hello world"`, and a script that loads the same
vocabulary file with the library a user would call (tiktoken's own file readers, sentencepiece,
`tokenizers`, mistral_common's Tekkenizer) and encodes the same text. The vocabularies' compact
copies (`core/files/vocab_cache`) are made by one untimed run first, as any second start finds
them. The gzipped tiktoken files are unpacked for the peer beforehand, so it reads a plain file.

Both sides run as an installed program does, with their modules' bytecode cached: the untimed
first run writes tokexplorer's (as pip does at install; the libraries' came with their install).
subtle: with PYTHONDONTWRITEBYTECODE set (a developer's or CI's environment) a module edited since
its bytecode was written would be compiled again at every timed start of ours, and never of the
peer's: the variable is taken out of the environment every process here starts with (the window's
rows' too).
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

from tokexplorer.bench import window_start
from tokexplorer.core import registry
from tokexplorer.core.patterns import GPT2_SPLIT_PATTERN

TEXT = "hello world"

_TIKTOKEN = """
import os, tiktoken
from tiktoken.load import load_tiktoken_bpe
os.environ["TIKTOKEN_CACHE_DIR"] = ""  # read the file itself, no copy in a temporary folder
ranks = load_tiktoken_bpe({path!r})
enc = tiktoken.Encoding("peer", pat_str={pattern!r}, mergeable_ranks=ranks, special_tokens={{}})
enc.encode({text!r})
"""
_GPT2 = """
import os, tiktoken
from tiktoken.load import data_gym_to_mergeable_bpe_ranks
os.environ["TIKTOKEN_CACHE_DIR"] = ""
ranks = data_gym_to_mergeable_bpe_ranks(vocab_bpe_file={bpe!r}, encoder_json_file={encoder!r})
enc = tiktoken.Encoding("gpt2", pat_str={pattern!r}, mergeable_ranks=ranks, special_tokens={{"<|endoftext|>": 50256}})
enc.encode({text!r})
"""
_SENTENCEPIECE = """
import sentencepiece
sentencepiece.SentencePieceProcessor(model_file={path!r}).encode({text!r})
"""
_TOKENIZERS = """
import tokenizers
tokenizers.Tokenizer.from_file({path!r}).encode({text!r}, add_special_tokens=False)
"""
_TEKKEN = """
from mistral_common.tokens.tokenizers.tekken import Tekkenizer
Tekkenizer.from_file({path!r}).encode({text!r}, bos=False, eos=False)
"""


def _peer_scripts(folder: Path) -> dict[str, tuple[str, str]]:
    """name -> (the peer's library, its script)."""

    def plain(data: registry.DataFile) -> str:
        path = data.location()
        if path.suffix != ".gz":
            return str(path)
        unpacked = folder / path.stem
        unpacked.write_bytes(gzip.decompress(path.read_bytes()))
        return str(unpacked)

    tiktoken_files = {"cl100k_base": registry.CL100K, "o200k_base": registry.O200K,
                      "qwen2.5": registry.QWEN, "qwen3.6": registry.QWEN3_6}
    scripts = {name: ("tiktoken", _TIKTOKEN.format(path=plain(data), pattern=registry.get_builtin(name).split_pattern,
                                                   text=TEXT))
               for name, data in tiktoken_files.items()}
    scripts["gpt2"] = ("tiktoken", _GPT2.format(bpe=plain(registry.GPT2_VOCAB_BPE),
                                                encoder=plain(registry.GPT2_ENCODER),
                                                pattern=GPT2_SPLIT_PATTERN, text=TEXT))
    scripts["llama-sp"] = ("sentencepiece", _SENTENCEPIECE.format(path=plain(registry.LLAMA_SP), text=TEXT))
    scripts["deepseek-v4"] = ("tokenizers", _TOKENIZERS.format(path=plain(registry.DEEPSEEK_V4), text=TEXT))
    scripts["tekken"] = ("mistral_common", _TEKKEN.format(path=plain(registry.TEKKEN), text=TEXT))
    return scripts


def _wall(command: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - t0


def _spread(times: list[float]) -> str:
    return f"{statistics.median(times):.2f} ({min(times):.2f}-{max(times):.2f})"


def run(args) -> dict:
    rounds = max(1, args.repeat)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # every side's bytecode cached (see the docstring)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        scripts = _peer_scripts(Path(folder))
        for name in registry.builtin_names():
            library, script = scripts[name]
            ours_command = [sys.executable, "-m", "tokexplorer", "encode", "-t", name, "--ids-only", TEXT]
            peer_command = [sys.executable, "-c", script]
            _wall(ours_command)  # the compact copy and bytecode made, the files in the OS's cache: a second start
            _wall(peer_command)
            ours, peer = [], []
            for _ in range(rounds):  # interleaved, so load from elsewhere hits both alike
                ours.append(_wall(ours_command))
                peer.append(_wall(peer_command))
            ratio = statistics.median(ours) / statistics.median(peer)
            rows.append([name, library, _spread(ours), _spread(peer), f"{ratio:.2f}", "≤ 1.0"])
        rows += [[what, "PySide6 (+ tiktoken)", mine, theirs, ratio, target]
                 for what, mine, theirs, ratio, target in window_start.rows(rounds)]
    return {
        "title": f"cold start, whole processes, median (range) of {rounds} interleaved runs, seconds",
        "headers": ["tokenizer", "library", "tokexplorer", "library's own load + encode", "ratio", "target"],
        "rows": rows,
        "notes": [
            f"tokexplorer: `python -m tokexplorer encode -t NAME --ids-only {TEXT!r}`, after one untimed run "
            "(which writes the vocabulary's compact copy, and bytecode as an install does)",
            "both: whole processes from the interpreter's start, bytecode cached (PYTHONDONTWRITEBYTECODE "
            "taken out of their environment)",
            "library: a script loading the same file as a user of the library would (tiktoken's "
            "load_tiktoken_bpe / data_gym_to_mergeable_bpe_ranks + Encoding, SentencePieceProcessor, "
            "tokenizers.Tokenizer.from_file, mistral_common's Tekkenizer.from_file) and encoding the same text",
            "target: ratio at most 1.0 for every built-in",
            "window: `tokexplorer --probe-startup` (a first start: the welcome text, fresh settings) " + window_start.PEER_NOTE,
        ],
    }
