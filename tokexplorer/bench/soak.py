"""`tokexplorer bench --soak N`: N random edits (insert, delete, paste, undo) with tokenizer switches
on a 1 MB text in a real window, run in a fresh process so its memory is the window's alone
(`tokexplorer.gui.soak` drives it). Reports RSS after warm-up and at the end, the growth, the
thread count before and after, and whether the tokens shown equal a fresh encode.

Budget (issue 13): growth under 50 MB after settling, threads constant, tokens equal. The long run
is `tokexplorer bench --soak 10000` (about an hour on two cores).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from ..core.tokenizer import TokexplorerError
from . import corpus_path

GROWTH_BUDGET_MB = 50


def run(args) -> dict:
    path = corpus_path(args, "en/tinyshakespeare.txt")
    env = dict(os.environ, TOKEXPLORER_SETTINGS_DIR=tempfile.mkdtemp(prefix="tokexplorer-soak-"))
    if sys.platform.startswith("linux") and not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
        env.setdefault("QT_QPA_PLATFORM", "offscreen")
    proc = subprocess.run([sys.executable, "-m", "tokexplorer.gui.soak", str(args.soak), str(path)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise TokexplorerError(f"the soak failed: {proc.stderr.strip()[-300:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    rows = [["edits", result["edits"]], ["text (MB)", result["text_mb"]],
            ["RSS after warm-up (MB)", result["rss_warm_mb"]], ["RSS at the end (MB)", result["rss_end_mb"]],
            ["growth (MB)", result["growth_mb"]],
            ["threads (warm -> end)", f"{result['threads_warm']} -> {result['threads_end']}"],
            ["tokens equal a fresh encode", result["tokens_equal_fresh_encode"]],
            ["seconds", result["seconds"]]]
    within = (result["growth_mb"] < GROWTH_BUDGET_MB and result["threads_warm"] == result["threads_end"]
              and result["tokens_equal_fresh_encode"])
    return {"title": f"editing soak on {path.name} ({', '.join(result['tokenizers'])})",
            "headers": ["measure", "value"], "rows": rows, "soak": result,
            "notes": [f"budget: growth < {GROWTH_BUDGET_MB} MB, same threads, same tokens: "
                      + ("within" if within else "NOT within")]}
