"""Memory that does not grow with use: a finished job lets go of what it computed, and the editing
soak (random edits, pastes, undos and tokenizer switches on a 1 MB text, in a fresh process) grows
less than 50 MB, keeps its threads and shows the tokens of a fresh encode.

TOKEXPLORER_SOAK_EDITS sets the soak's length (default 20: about half a minute on an idle machine, two on a
busy one); the long run is `tokexplorer bench --soak 10000 --json`.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import weakref

import pytest

from tokexplorer.gui.services.worker import run_job

GROWTH_BUDGET_MB = 50
# The C heap in use after the short run, warm start to end: ~0.1 MB measured. The end includes a
# switch through every tokenizer, so a leak per switch (once ~55 MB each) or per result shows even
# at the default 20 edits.
HEAP_BUDGET_MB = 20


def test_a_finished_job_keeps_nothing_alive(qtbot):
    """What leaked 55 MB per tokenizer switch: every chunk-view job kept its encoding for ever."""
    class Result:
        pass

    def start(value, got):  # the job's function and its callback both refer to the value
        run_job(lambda progress: value, on_result=lambda v: got.append(v is value), on_error=got.append)

    value, got = Result(), []
    ref = weakref.ref(value)
    start(value, got)
    del value
    qtbot.waitUntil(lambda: bool(got), timeout=5_000)
    assert got == [True]
    qtbot.wait(50)  # `finished` arrives after `result`
    gc.collect()
    assert ref() is None


@pytest.mark.slow
def test_editing_soak_keeps_memory_and_threads_flat(tmp_path, corpora):
    edits = int(os.environ.get("TOKEXPLORER_SOAK_EDITS", "20"))
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", TOKEXPLORER_SETTINGS_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "tokexplorer.gui.bench.soak", str(edits),
                           str(corpora / "en" / "tinyshakespeare.txt")],
                          capture_output=True, text=True, env=env, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["edits"] == edits and result["text_mb"] >= 0.99
    assert result["growth_mb"] < GROWTH_BUDGET_MB, result
    if "heap_growth_mb" in result:  # glibc: the heap in use is what a leak grows, without RSS's noise
        assert result["heap_growth_mb"] < HEAP_BUDGET_MB, result
        assert result["server_heap_in_use_warm_mb"] > 0 and result["server_heap_growth_mb"] < HEAP_BUDGET_MB, result
    assert result["threads_end"] == result["threads_warm"], result
    assert result["tokens_equal_fresh_encode"], result
    # Every tokenizer's count of the text's tokens, read at both ends: the growth is of memory held
    # for as many tokens, not for more of them (`soak.balanced`).
    assert set(result["tokens_warm"]) == set(result["tokens_end"]) == set(result["tokenizers"]), result
    assert all(0.95 < result["tokens_end"][n] / result["tokens_warm"][n] < 1.05 for n in result["tokenizers"]), result
