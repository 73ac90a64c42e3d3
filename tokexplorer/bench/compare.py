"""`tokexplorer bench --compare [--panes N]`: typing into a book-length text shown in N compare panes.

The window holds the 1 MB tinyshakespeare in N panes (GPT-2, cl100k_base, o200k_base, llama-sp:
the first N); keys are typed into the last pane at a human pace, each timed in every pane from the
key event to the first paint that shows that keystroke's tokens (and the boundary marks), while a
5 ms timer measures how late the UI event loop runs. `--repeat` runs, each in a fresh window;
the table gives each pane's median and p95 as the median over runs with their range. The window is
driven by `tokexplorer.gui.bench.compare` (Qt lives only in tokexplorer.gui).

Targets (issue 8, the editor's budgets): p95 keystroke-to-highlight under 50 ms in every pane, no
stall over 50 ms.
"""

from __future__ import annotations

import os
import statistics
import tempfile

from tokexplorer.core.headless import use_offscreen
from tokexplorer.core.registry import builtin_names
from tokexplorer.bench import corpus_path
from tokexplorer.bench.gui import percentile


def _spread(values: list[float]) -> str:
    """'median (min–max)' of per-run values, in ms."""
    ms = [v * 1000 for v in values]
    if len(ms) == 1:
        return f"{ms[0]:.1f}"
    return f"{statistics.median(ms):.1f} ({min(ms):.1f}–{max(ms):.1f})"


def run(args) -> dict:
    use_offscreen()
    os.environ["TOKEXPLORER_SETTINGS_DIR"] = tempfile.mkdtemp(prefix="tokexplorer-bench-")
    path = corpus_path(args, "en/tinyshakespeare.txt")
    n_panes = max(2, min(4, getattr(args, "panes", 4)))
    names = builtin_names()[:n_panes]
    n_keys = getattr(args, "gui_keys", 60)

    from tokexplorer.gui.bench.compare import measure_compare_typing

    runs = [measure_compare_typing(path, n_keys, names) for _ in range(max(1, getattr(args, "repeat", 3)))]
    rows = []
    for i, name in enumerate(names):
        medians = [statistics.median(r.latencies_s[i]) for r in runs if r.latencies_s[i]]
        p95s = [percentile(r.latencies_s[i], 0.95) for r in runs if r.latencies_s[i]]
        maxes = [max(r.latencies_s[i]) for r in runs if r.latencies_s[i]]
        timed = sum(len(r.latencies_s[i]) for r in runs)
        rows.append([name, _spread(medians), _spread(p95s), _spread(maxes),
                     f"{timed}/{sum(r.keys for r in runs)}"])
    return {
        "title": f"GUI: typing into {path.name} ({path.stat().st_size / 1e6:.1f} MB) in {n_panes} compare panes, "
                 f"{len(runs)} runs",
        "headers": ["pane", "key→highlight median ms", "p95 ms", "max ms", "keys"],
        "rows": rows,
        "notes": [
            f"typing stall (the longest lateness of a 5 ms timer while typing): {_spread([r.typing_stall_s for r in runs])} ms",
            f"CPU per keystroke (the whole process, every thread; independent of other load on the machine): "
            f"{_spread([r.cpu_s / max(r.keys, 1) for r in runs])} ms",
            f"showing the compare view (every pane tokenized, coloured and compared): "
            f"{_spread([r.show_s for r in runs])} ms, its stall {_spread([r.show_stall_s for r in runs])} ms",
            "each cell: the median over runs (the range over runs); keys typed into the last pane, "
            "the first pane is the window's editor",
            "targets: p95 key→highlight < 50 ms in every pane; typing stall < 50 ms",
        ],
    }
