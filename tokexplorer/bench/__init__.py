"""Benchmarks behind `tokexplorer bench`: one module per section, each measuring tokexplorer
beside its peer (the library itself, or a reference implementation) in the same run.

The window's measurements are driven by `gui.bench` in a child process; this package formats
them and never imports Qt itself. Tests do not time anything: a benchmark reports, it does not assert.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable

from tokexplorer.core.tokenizer import TokexplorerError


def corpora_dir() -> Path:
    """The shared corpora: $TOKEXPLORER_CORPORA, or ../shared/corpora beside the checkout or cwd."""
    candidates = []
    if os.environ.get("TOKEXPLORER_CORPORA"):
        candidates.append(Path(os.environ["TOKEXPLORER_CORPORA"]))
    here = Path(__file__).resolve()
    candidates += [p / "shared" / "corpora" for p in here.parents]
    candidates += [p / "shared" / "corpora" for p in [Path.cwd(), *Path.cwd().parents]]
    for c in candidates:
        if c.is_dir():
            return c
    raise TokexplorerError("cannot find the corpora folder; set TOKEXPLORER_CORPORA or pass --corpus")


def corpus_path(args, default: str) -> Path:
    """--corpus if given, else a file of the shared corpora."""
    return Path(args.corpus) if getattr(args, "corpus", None) else corpora_dir() / default


def best_time(fn: Callable[[], object], repeat: int) -> float:
    """The fastest of `repeat` runs, in seconds."""
    best = float("inf")
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best
