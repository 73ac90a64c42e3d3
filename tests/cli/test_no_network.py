"""Nothing reaches the network: the command line, every built-in's loading and the window's start-up
run in fresh processes whose sockets refuse to connect (a sitecustomize on PYTHONPATH), and again
in a network namespace with no network at all (`unshare -n`, where the kernel allows it), so an
accidental download (`tiktoken.get_encoding`, `from_pretrained`) fails the test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tokexplorer.core.registry import DEEPSEEK_V4, builtin_names

BUILTINS = builtin_names()  # every built-in, the new families included

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # fresh processes that start the window and load every tokenizer

SITECUSTOMIZE = '''
import os, socket

def _refuse(*args, **kwargs):
    with open(os.environ["NO_NETWORK_LOG"], "a") as log:
        log.write(f"network attempt: {args!r}\\n")
    raise OSError("network disabled by the test")

socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
socket.create_connection = _refuse
socket.getaddrinfo = _refuse
'''


def unshare_works() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "-n", "true"], capture_output=True).returncode == 0


@pytest.fixture
def hook(tmp_path) -> Path:
    """A folder whose sitecustomize.py makes every socket connection fail (and logs it)."""
    folder = tmp_path / "hook"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE, "utf-8")
    return folder


@pytest.fixture(params=["sockets-refused", "unshare-n"])
def offline(request, tmp_path, hook):
    """Run a tokexplorer command offline; returns run(*args) -> CompletedProcess."""
    if request.param == "unshare-n" and not unshare_works():
        pytest.skip("unshare -n is not allowed here")
    log = tmp_path / "network.log"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "PYTHONPATH": f"{hook}{os.pathsep}{ROOT}", "NO_NETWORK_LOG": str(log),
           "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken-cache"), "HF_HOME": str(tmp_path / "hf"),
           "QT_QPA_PLATFORM": "offscreen", "TOKEXPLORER_SETTINGS_DIR": str(tmp_path / "settings")}
    prefix = ["unshare", "-n"] if request.param == "unshare-n" else []

    def run(*args: str) -> subprocess.CompletedProcess:
        proc = subprocess.run([*prefix, sys.executable, "-m", "tokexplorer", *args],
                              capture_output=True, text=True, env=env, timeout=300)
        assert not log.exists(), log.read_text()
        return proc

    yield run
    assert not (tmp_path / "tiktoken-cache").exists() and not (tmp_path / "hf").exists()


def test_the_hook_really_refuses(hook, tmp_path):
    """A test that cannot fail is no test: the same hook stops a real download attempt."""
    env = {"PYTHONPATH": str(hook), "NO_NETWORK_LOG": str(tmp_path / "probe.log"),
           "PATH": os.environ.get("PATH", "")}
    proc = subprocess.run([sys.executable, "-c", "import urllib.request as u; u.urlopen('http://example.com', timeout=5)"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode != 0 and "network attempt" in (tmp_path / "probe.log").read_text()


def test_the_command_line_works_offline(offline):
    proc = offline("list")
    assert proc.returncode == 0 and all(name in proc.stdout for name in BUILTINS), proc.stderr
    proc = offline("encode", "-t", "o200k_base", "--ids-only", "hello world 👋")
    assert proc.returncode == 0 and proc.stdout.split(), proc.stderr
    # a user's tokenizer.json (with its tokenizer_config.json) through tokenizers' own core
    proc = offline("encode", "-t", str(DEEPSEEK_V4.location()), "--ids-only", "hello world 👋")
    assert proc.returncode == 0 and proc.stdout.split(), proc.stderr
    # compare loads and encodes with every built-in in one process
    proc = offline("compare", *[a for name in BUILTINS for a in ("-t", name)], "--json", "hello world 👋")
    assert proc.returncode == 0 and all(f'"{name}"' in proc.stdout for name in BUILTINS), proc.stderr


def test_the_window_starts_offline_with_every_built_in(offline, tmp_path):
    shot = tmp_path / "shot.png"
    proc = offline("--screenshot", str(shot), *[a for name in BUILTINS for a in ("-t", name)])
    assert proc.returncode == 0, proc.stderr
    assert all((tmp_path / f"shot-{name}.png").stat().st_size > 1000 for name in BUILTINS)
