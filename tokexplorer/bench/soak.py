"""`tokexplorer bench --soak N`: N random edits (insert, delete, paste, undo) with tokenizer switches
on a 1 MB text in a real window, run in a fresh process so its memory is the window's alone
(`tokexplorer.gui.bench.soak` drives it). Reports the RSS of the window and of its tokenizing server
after warm-up and at the end, their growth together, the thread count before and after, the C heap
in use of each and the window's free-but-kept (a leak grows the first, the allocator's retention the
second), and whether the tokens shown equal a fresh encode. A run of
more than 500 edits prints a progress line on stderr every 500.

Budget (issue 13): growth under 50 MB after settling, threads constant, tokens equal. The long run
is `tokexplorer bench --soak 10000` (35 minutes on two cores).
"""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import tempfile

from tokexplorer.core.headless import use_offscreen
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.bench import corpus_path

GROWTH_BUDGET_MB = 50


def run(args) -> dict:
    path = corpus_path(args, "en/tinyshakespeare.txt")
    env = dict(os.environ, TOKEXPLORER_SETTINGS_DIR=tempfile.mkdtemp(prefix="tokexplorer-soak-"))
    use_offscreen(env)
    proc = subprocess.Popen([sys.executable, "-m", "tokexplorer.gui.bench.soak", str(args.soak), str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    # Its progress lines go on to our stderr as they come (a long run takes half an hour); the rest
    # (Qt's chatter) is kept for the error message only.
    tail = collections.deque(maxlen=20)
    for line in proc.stderr:
        if line.startswith("soak: "):
            print(line, end="", file=sys.stderr, flush=True)
        tail.append(line)
    out = proc.stdout.read()
    if proc.wait() != 0:
        died = f" (killed by {signal.Signals(-proc.returncode).name})" if proc.returncode < 0 else ""
        raise TokexplorerError(f"the soak failed{died}: {''.join(tail).strip()[-300:]}")
    result = json.loads(out.strip().splitlines()[-1])
    rows = [["edits", result["edits"]], ["text (MB)", result["text_mb"]],
            ["text length, start -> end (UTF-16 units)", f"{result['text_utf16_start']} -> {result['text_utf16_end']}"],
            *([f"{name} tokens, warm -> end", f"{result['tokens_warm'][name]} -> {count}"]
              for name, count in result.get("tokens_end", {}).items() if name in result.get("tokens_warm", {})),
            ["window RSS after warm-up -> end (MB)", f"{result['rss_warm_mb']} -> {result['rss_end_mb']}"],
            ["server RSS after warm-up -> end (MB)", f"{result['server_rss_warm_mb']} -> {result['server_rss_end_mb']}"],
            ["growth, window + server (MB)", f"{result['growth_mb']} ({result['window_growth_mb']:+} "
                                             f"+ {result['server_growth_mb']:+})"]]
    if "heap_growth_mb" in result:
        rows += [["window heap in use, warm -> end (MB)", f"{result['heap_in_use_warm_mb']} -> {result['heap_in_use_end_mb']}"],
                 ["window heap free but kept, warm -> end (MB)",
                  f"{result['heap_free_warm_mb']} -> {result['heap_free_end_mb']}"]]
    if result.get("server_heap_in_use_warm_mb"):
        rows += [["server heap in use, warm -> end (MB)",
                  f"{result['server_heap_in_use_warm_mb']} -> {result['server_heap_in_use_end_mb']}"]]
    rows += [["threads (warm -> end)", f"{result['threads_warm']} -> {result['threads_end']}"],
             ["tokens equal a fresh encode", result["tokens_equal_fresh_encode"]],
             ["seconds", result["seconds"]]]
    within = (result["growth_mb"] < GROWTH_BUDGET_MB and result["threads_warm"] == result["threads_end"]
              and result["tokens_equal_fresh_encode"])
    return {"title": f"editing soak on {path.name} ({', '.join(result['tokenizers'])})",
            "headers": ["measure", "value"], "rows": rows, "soak": result,
            "notes": [f"budget: growth < {GROWTH_BUDGET_MB} MB, same threads, same tokens: "
                      + ("within" if within else "NOT within"),
                      "window: the window's process; server: its tokenizing server's; each read after a "
                      "collection and a trim. The heap in use grows with a leak (Python's small objects are "
                      "outside it), free but kept is glibc's retention; RSS after a trim is noisy by tens of MB "
                      "(see tokexplorer/gui/bench/soak.py)"]}
