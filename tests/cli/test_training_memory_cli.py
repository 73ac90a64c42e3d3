"""`train -p none` (Basic BPE: the corpus one stream) within the peak its budget states, and its
refusal saying that peak: a whole process measured, as a user meets it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from tokexplorer.cli.main import main
from tokexplorer.core.budgets import training_peak_gb

TIME = shutil.which("time") or "/usr/bin/time"


@pytest.mark.skipif(not os.path.exists(TIME) or sys.platform != "linux", reason="needs GNU time")
def test_basic_training_peaks_within_what_its_refusal_states(tmp_path, capsys, corpora):
    """16 MB of English, 44 merges: the process's peak (GNU time's %M) is within the budget's
    figure for 16 MB, which the refusal of the same corpus states. (The merge loop's 16-byte
    nodes took about 400 MB here, past the 200 MB stated.)"""
    text = (corpora / "en/tinyshakespeare.txt").read_bytes()
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(text * (16_000_000 // len(text)))
    size_mb = corpus.stat().st_size / 1e6
    stated_mb = training_peak_gb("bpe-bytes", size_mb) * 1000

    code = main(["train", str(corpus), "-p", "none", "--vocab-size", "300", "--max-mb", "1", "-o",
                 str(tmp_path / "m")])
    err = capsys.readouterr().err
    assert code == 1 and f"(about {stated_mb:.0f} MB)" in err, err

    proc = subprocess.run([TIME, "-f", "peak %M", sys.executable, "-m", "tokexplorer", "train", str(corpus),
                           "-p", "none", "--vocab-size", "300", "-o", str(tmp_path / "m")],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 0, proc.stderr
    peak_mb = int(re.search(r"peak (\d+)", proc.stderr)[1]) * 1024 / 1e6
    assert size_mb * 6 < peak_mb <= stated_mb, (peak_mb, stated_mb)
