"""`tokexplorer bench --gui`: how the desktop app feels on a book-length text.

For each built-in tokenizer, in one window holding the 1 MB tinyshakespeare: the time to colour
the text after switching to it, then keystrokes typed into the middle of the visible text at a
human pace, each timed from the key event to the first paint that shows that keystroke's tokens,
while a 5 ms timer measures how late the UI event loop runs (the longest stall). Also the time
from launching `tokexplorer` to a visible window, in a fresh process; with --huge-mb N, the time
to open an N MB text (the corpus repeated) and the longest stall meanwhile. The window is driven by
`tokexplorer.gui.bench.typing` (Qt lives only in tokexplorer.gui); this module makes the table.

Targets (issue 30): p95 keystroke-to-highlight under 16 ms, typing stall under 33 ms, a first
switch's stall under 50 ms and a switch back's under 30 ms, window up within 1.5 s; a 50 MB text
opens within 1.5x a plain editor plus tiktoken, both processes' peaks added. A note gives what
autosave costs on the same text (`tokexplorer.gui.bench.autosave`).
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

from tokexplorer.core.headless import use_offscreen
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.bench import corpus_path


def percentile(values: list[float], q: float) -> float:
    """The q-quantile of `values` (nearest rank; NaN for none), shared by the window's benchmarks."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


def launch_times(settings_dir: str, repeat: int) -> list[float]:
    """Seconds from starting a `tokexplorer` process to its window being shown, per run."""
    times = []
    for _ in range(max(1, repeat)):
        t0 = time.time()  # wall clock: the child reports time.time() too
        proc = subprocess.run([sys.executable, "-m", "tokexplorer", "--probe-startup",
                               "--settings-dir", settings_dir],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            raise RuntimeError(f"the window did not start: {proc.stderr.strip()[-300:]}")
        visible_at = json.loads(proc.stdout.strip().splitlines()[-1])["visible_at"]
        times.append(visible_at - t0)
    return times


def run(args) -> list[dict]:
    from tokexplorer.core.files.text_budget import WINDOW_TEXT_LIMIT_MB

    if getattr(args, "huge_mb", 0) > WINDOW_TEXT_LIMIT_MB:  # the window would refuse it
        raise TokexplorerError(f"--huge-mb {args.huge_mb}: the window opens texts of up to "
                               f"{WINDOW_TEXT_LIMIT_MB} MB; give {WINDOW_TEXT_LIMIT_MB} or less")
    use_offscreen()
    settings_dir = tempfile.mkdtemp(prefix="tokexplorer-bench-")
    os.environ["TOKEXPLORER_SETTINGS_DIR"] = settings_dir  # never the user's settings
    path = corpus_path(args, "en/tinyshakespeare.txt")
    n_keys = getattr(args, "gui_keys", 60)
    launches = launch_times(settings_dir, getattr(args, "repeat", 3))

    from tokexplorer.gui.bench.autosave import note as autosave_note
    from tokexplorer.gui.bench.typing import STALL_TICK_MS, measure_typing

    report = measure_typing(path, n_keys)
    selections = _measure_selections(path, max(3, n_keys // 2))
    huge_mb = getattr(args, "huge_mb", 0)
    huge_table = []
    if huge_mb > 0:
        huge = _repeated(path, huge_mb * 1_000_000, settings_dir)
        app, plain = (_child(kind, huge) for kind in ("app", "plain"))
        huge.unlink()
        huge_table = [{
            "title": f"GUI: opening a {huge_mb} MB text ({path.name} repeated) with {HUGE_TOKENIZER}, "
                     "each in a fresh process",
            "headers": ["app s", "baseline s", "ratio", "longest stall ms", "window peak MB", "server peak MB",
                        "both MB", "baseline peak MB", "ratio"],
            "rows": [[f"{app['seconds']:.2f}", f"{plain['seconds']:.2f}", f"{app['seconds'] / plain['seconds']:.2f}",
                      f"{app['stall_s'] * 1000:.0f}", f"{app['peak_mb']:.0f}", _mb(app.get('server_peak_mb')),
                      _mb(_sum(app['peak_mb'], app.get('server_peak_mb'))), f"{plain['peak_mb']:.0f}",
                      _ratio(_sum(app['peak_mb'], app.get('server_peak_mb')), plain['peak_mb'])]],
            "notes": ["app: read, insert, tokenize (in the tokenizing server), colour, token table; baseline: a "
                      "plain QPlainTextEdit takes the text in and paints, then tiktoken's own encode of it (no "
                      "spans, no colours), in one process",
                      "window peak MB: the window's process; server peak MB: its tokenizing server's (Linux only); "
                      "both: their sum, beside the baseline's one process",
                      "targets (issue 30): time ratio within 1.5, both peaks added within 1.5x the baseline's"],
        }]
    from tokexplorer.gui.bench.training import measure_training

    trained = measure_training(path, getattr(args, "train_vocab", 32768))
    rows = []
    for r in report.runs:
        ms = [x * 1000 for x in r.latencies_s]
        rows.append([r.name, f"{r.switch_s:.2f}", f"{r.switch_stall_s * 1000:.0f}",
                     f"{r.reswitch_s:.2f}", f"{r.reswitch_stall_s * 1000:.0f}",
                     f"{statistics.median(ms):.1f}" if ms else "-", f"{percentile(ms, 0.95):.1f}",
                     f"{max(ms, default=float('nan')):.1f}", f"{r.typing_stall_s * 1000:.1f}",
                     f"{len(ms)}/{r.keys}"])
    return [{
        "title": f"GUI: typing into {path.name} ({path.stat().st_size / 1e6:.1f} MB), "
                 f"Qt platform {report.platform}",
        "headers": ["tokenizer", "switch+colour s", "its stall ms", "switch back s", "back stall ms",
                    "key→highlight median ms",
                    "p95 ms", "max ms", "typing stall ms", "keys"],
        "rows": rows,
        "notes": [
            f"opening the file (read, insert, tokenize with {report.runs[-1].name}, colour): "
            f"{report.open_s:.2f} s, longest stall {report.open_stall_s * 1000:.0f} ms",
            "switch+colour: from picking the tokenizer (loaded on first use, in the tokenizing server) "
            "to the visible text coloured; its stall: the window's UI loop's longest stall meanwhile; "
            "switch back: the same once every tokenizer is loaded",
            "every latency and stall is the window's process's; tokenizing runs in the server process",
            f"launch → visible window: best {min(launches):.2f} s, median "
            f"{statistics.median(launches):.2f} s over {len(launches)} runs (target < 1.5 s)",
            "targets: p95 key→highlight < 16 ms; typing stall (the longest lateness of a "
            f"{STALL_TICK_MS} ms timer while typing) < 33 ms; first switch's stall < 50 ms, back < 30 ms",
            *selections,
            f"UI loop while training {trained.corpus} at vocab {trained.vocab_size} in the workbench "
            f"({trained.merges} merges, {trained.seconds:.1f} s to the tokenizer in the picker): lateness "
            f"of a 5 ms timer median {trained.training.median_ms:.1f} ms, p95 {trained.training.p95_ms:.1f} ms, "
            f"longest stall {trained.training.max_ms:.0f} ms (targets: p95 < 16 ms, no stall > 50 ms); "
            f"idle: p95 {trained.idle.p95_ms:.1f} ms, longest {trained.idle.max_ms:.0f} ms",
            autosave_note(path),
        ],
    }, *huge_table]


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _sum(a: float, b: float | None) -> float | None:
    return None if b is None else a + b


def _ratio(a: float | None, b: float) -> str:
    return "-" if a is None else f"{a / b:.2f}"


def _child(kind: str, path: Path) -> dict:
    """Run gui.bench.typing's `app` or `plain` measurement in a fresh process (its own peak memory)."""
    proc = subprocess.run([sys.executable, "-m", "tokexplorer.gui.bench.typing", kind, str(path), HUGE_TOKENIZER],
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"the {kind} measurement failed: {proc.stderr.strip()[-300:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


HUGE_TOKENIZER = "cl100k_base"


def _repeated(path: Path, size: int, folder: str) -> Path:
    """A file of about `size` bytes: the text of `path` repeated."""
    data = path.read_bytes()
    out = Path(folder) / f"huge-{path.name}"
    out.write_bytes(data * max(1, round(size / max(len(data), 1))))
    return out


def _measure_selections(path: Path, clicks: int) -> list[str]:
    """Notes on the inspector following `clicks` clicks into tokens, and a select-all, per
    tokenizer (issue 8: within 50 ms)."""
    from tokexplorer.gui.bench.selection import measure_selection

    notes = []
    for r in measure_selection(path, clicks):
        ms = [x * 1000 for x in r.token_s]
        every = [x * 1000 for x in r.select_all_s]
        notes.append(
            f"inspector, {r.name}: click into a token → panel updated: median {statistics.median(ms):.1f} ms, "
            f"p95 {percentile(ms, 0.95):.1f} ms, max {max(ms):.1f} ms over {len(ms)}; select-all "
            f"{' / '.join(f'{x:.0f}' for x in every)} ms (target < 50 ms)" if ms else
            f"inspector, {r.name}: no selection was shown within 5 s")
    return notes
