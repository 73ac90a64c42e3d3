"""`tokexplorer bench --panels`: selecting a token on a book (1 MB tinyshakespeare) until the merge
tree, the encode trace and the vocabulary are up to date and painted (tokexplorer.gui.bench.panels
drives the window). Target (issue 8): every open panel within 50 ms.
"""

from __future__ import annotations

import os
import statistics
import tempfile

from tokexplorer.core.headless import use_offscreen
from tokexplorer.bench import corpus_path
from tokexplorer.bench.gui import percentile

TOKENIZERS = ["gpt2", "o200k_base", "llama-sp"]


def run(args) -> dict:
    use_offscreen()
    os.environ["TOKEXPLORER_SETTINGS_DIR"] = tempfile.mkdtemp(prefix="tokexplorer-bench-")
    path = corpus_path(args, "en/tinyshakespeare.txt")
    from tokexplorer.gui.bench.panels import measure_selection

    n = 10 * max(1, getattr(args, "repeat", 3))
    platform, chars, runs = measure_selection(path, n, TOKENIZERS)
    rows = []
    for r in runs:
        for what, values in (("caret onto a token", r.caret_s), ("vocabulary row", r.vocab_s)):
            ms = [v * 1000 for v in values]
            rows.append([r.name, what, f"{statistics.median(ms):.1f}", f"{percentile(ms, 0.95):.1f}",
                         f"{max(ms):.1f}", f"{r.stall_s * 1000:.0f}", str(len(ms))])
    return {
        "title": f"GUI: selecting a token in {path.name} ({chars:,} characters), merge tree, trace and "
                 f"vocabulary open, Qt platform {platform}",
        "headers": ["tokenizer", "selection", "median ms", "p95 ms", "max ms", "stall ms", "runs"],
        "rows": rows,
        "notes": ["from the action to every panel up to date and Qt's pending paints done (polled every "
                  "4 ms, so a few ms are the poll's); "
                  "stall: the UI loop's longest lateness over both kinds; target: within 50 ms"],
    }
