"""`tokexplorer bench --long-line N[,N...]`: a text of one line of N characters without break points (one
long word, minified data) in the real window: the time to open it coloured, the longest stall of
the UI loop meanwhile, then per typed key the time to its tokens on screen and the longest stall
while typing. Each run in a fresh process (`tokexplorer.gui.bench.long_line`); medians over
--repeat runs, with their range.

Issue 13 measured before the fix: 200 KB stalled 3.1 s on open and cost 1.5 s a key; a million
"a" stalled for a minute at a time and was still loading after 3.5 minutes. Wrapping anywhere
brought a million "a" to 4.7 s to open and 2.4 s a key, with stalls of 2.5 s while typing (Qt laid
the one line out again on every key, and tiktoken encoded its one chunk holding the interpreter
lock); pieces with soft breaks and a lock-free encode of long chunks bound the stalls.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

from tokexplorer.core.headless import use_offscreen
from tokexplorer.core.tokenizer import TokexplorerError

KEYS = 20


def _run_once(n: int, kind: str, env: dict) -> dict:
    proc = subprocess.run([sys.executable, "-m", "tokexplorer.gui.bench.long_line", str(n), str(KEYS), kind],
                          capture_output=True, text=True, env=env, timeout=3600)
    if proc.returncode != 0:
        raise TokexplorerError(f"the long-line benchmark failed: {proc.stderr.strip()[-300:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _median_range(values: list[float]) -> str:
    """Seconds as milliseconds: "median (lowest–highest)"."""
    ms = [v * 1000 for v in values]
    return f"{statistics.median(ms):.0f} ({min(ms):.0f}–{max(ms):.0f})"


def run(args) -> dict:
    env = dict(os.environ, TOKEXPLORER_SETTINGS_DIR=tempfile.mkdtemp(prefix="tokexplorer-long-"))
    use_offscreen(env)
    rows = []
    for n in args.long_line:
        for kind, label in (("a", '"a" repeated'), ("letters", "random letters")):
            runs = [_run_once(n, kind, env) for _ in range(max(1, args.repeat))]
            keys = [statistics.median(r["key_s"]) for r in runs if r["key_s"]]
            rows.append([f"{n:,}", label, _median_range([r["open_s"] for r in runs]),
                         _median_range([r["open_stall_s"] for r in runs]),
                         _median_range(keys) if keys else "-",
                         _median_range([r["typing_stall_s"] for r in runs]),
                         f"{sum(len(r['key_s']) for r in runs)}/{sum(r['keys'] for r in runs)}"])
    return {"title": "GUI: one line without break points (cl100k_base), "
                     f"{max(1, args.repeat)} run(s) each in a fresh process",
            "headers": ["characters", "text", "open ms", "open stall ms", "key→tokens ms", "typing stall ms",
                        "keys"],
            "rows": rows,
            "notes": ["each cell: the median over runs (range); key→tokens: each run's median over "
                      f"{KEYS} keys typed into the middle of the line at 12 to 30 keys a second; a stall is "
                      "the longest lateness of a 5 ms timer",
                      "before the fix (issue 13): 200 KB stalled 3.1 s on open and cost 1.5 s a key; with "
                      "wrapping anywhere but one block, a million \"a\": 4.7 s to open, 2.4 s a key, 2.5 s "
                      "stalls while typing"]}
