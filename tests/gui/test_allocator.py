"""The window starts again on the C heap (PYTHONMALLOC=malloc) where that keeps long sessions from
growing: once, from the window's command line only, never over the user's own choice."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tokexplorer.gui import allocator

GLIBC = sys.platform.startswith("linux") and os.confstr("CS_GNU_LIBC_VERSION") is not None

# Runs the command line with os.execve replaced by a report of what it would start.
PROBE = """
import json, os, sys
def report(path, argv, env):
    print(json.dumps({"path": path, "argv": argv, "allocator": env.get("PYTHONMALLOC"),
                      "tunables": env.get("GLIBC_TUNABLES")}))
    sys.exit(0)
os.execve = report
from tokexplorer.cli import main
sys.argv = ["tokexplorer", *sys.argv[1:]]
print(json.dumps({"returned": main()}))
"""


def probe(*args: str, **env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONMALLOC", "GLIBC_TUNABLES")}
    proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", PROBE, *args], capture_output=True,
                          text=True, env={**environ, **env}, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not GLIBC, reason="the restart is for glibc's heap")
def test_the_window_starts_again_on_the_c_heap_with_the_same_command_line():
    seen = probe("--screenshot", "x.png", "-t", "gpt2")
    assert seen["allocator"] == "malloc"
    assert seen["tunables"] == "glibc.malloc.mxfast=0"  # fast bins off (see allocator)
    # the user's own tunables are kept, and so is their choice of fast bins
    assert probe("-t", "gpt2", GLIBC_TUNABLES="glibc.malloc.arena_max=2")["tunables"] == \
        "glibc.malloc.arena_max=2:glibc.malloc.mxfast=0"
    assert probe("-t", "gpt2", GLIBC_TUNABLES="glibc.malloc.mxfast=64")["tunables"] == "glibc.malloc.mxfast=64"
    assert seen["path"] == sys.executable
    # the interpreter's own options and the window's arguments, as they were
    assert seen["argv"] == [sys.executable, "-X", "faulthandler", "-c", PROBE, "--screenshot", "x.png", "-t", "gpt2"]


def test_the_users_choice_of_allocator_and_the_other_commands_are_left_alone(tmp_path):
    # the window runs in this interpreter when the user chose an allocator
    picture = tmp_path / "x.png"
    assert probe("--screenshot", str(picture), "--settings-dir", str(tmp_path), PYTHONMALLOC="pymalloc",
                 QT_QPA_PLATFORM="offscreen") == {"returned": 0}
    assert picture.stat().st_size > 0
    # and a command of the command line always does
    assert probe("encode", "--ids-only", "hello") == {"returned": 0}


def test_it_does_not_apply_where_the_choice_is_made_or_not_ours(monkeypatch):
    assert not allocator.applies({"PYTHONMALLOC": "pymalloc"})
    assert not allocator.applies({"PYTHONMALLOC": "malloc"})  # the restarted process: no loop
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert not allocator.applies({})
    monkeypatch.delattr(sys, "frozen")
    assert allocator.applies({}) == GLIBC
    started = []
    monkeypatch.setattr(os, "execve", lambda *a: started.append(a))
    monkeypatch.setenv("PYTHONMALLOC", "debug")
    allocator.restart_on_c_heap()
    assert started == []


@pytest.mark.skipif(not GLIBC, reason="the restart is for glibc's heap")
def test_a_benchmark_of_the_window_restarts_from_the_command_line_only(monkeypatch, capsys):
    assert probe("bench", "--compare", "--panes", "2")["allocator"] == "malloc"
    assert probe("bench", "--encode", "--repeat", "1", "--corpus", __file__).get("returned") == 0
    # called from a script (or this test) it runs where it is: no restart of the caller's process
    from tokexplorer.cli import main

    started = []
    monkeypatch.delenv("PYTHONMALLOC", raising=False)
    monkeypatch.setattr(os, "execve", lambda *a: started.append(a))
    assert main(["bench", "--gui", "--huge-mb", "100"]) == 1  # refused: over the window's limit
    assert started == []
    assert "64 MB" in capsys.readouterr().err
