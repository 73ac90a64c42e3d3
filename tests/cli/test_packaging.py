"""What a packaged install relies on: --version, --help naming the window's options, the icon
files, the resource helper, the .desktop file and the AppStream metainfo."""

from __future__ import annotations

import configparser
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tokexplorer import __version__
from tokexplorer.core.resources import resource_path
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.gui.app import APP_ID, ICON_SIZES, parse_args

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"


def tokexplorer(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokexplorer", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def test_version(tmp_path):
    proc = tokexplorer("--version", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"tokexplorer {__version__}"


def test_help_lists_the_window_options_beside_the_commands(tmp_path):
    proc = tokexplorer("--help", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    commands, window = proc.stdout.split("window options")
    assert "encode" in commands and "train" in commands
    for option in ("--open FILE", "-t NAME", "--screenshot PATH", "--settings-dir DIR"):
        assert option in window


def test_a_file_argument_opens_it_as_open_does():
    assert parse_args(["notes.txt"]).open == "notes.txt"
    assert parse_args(["--open", "a.txt", "-t", "gpt2"]).open == "a.txt"
    with pytest.raises(SystemExit):
        parse_args(["a.txt", "--open", "b.txt"])


def png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", header[16:24])


def test_the_icon_comes_in_every_size_the_window_loads():
    assert resource_path("icons", "tokexplorer.svg").read_text().lstrip().startswith("<svg")
    for size in ICON_SIZES:
        assert png_size(resource_path("icons", f"tokexplorer-{size}.png")) == (size, size)


def test_a_missing_resource_is_a_clear_error():
    with pytest.raises(TokexplorerError, match="reinstall tokexplorer"):
        resource_path("icons", "no-such-icon.png")


def test_desktop_file_launches_the_command_with_the_app_icon():
    path = PACKAGING / f"{APP_ID}.desktop"
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(path, encoding="utf-8")
    desktop = entry["Desktop Entry"]
    assert desktop["Type"] == "Application"
    assert desktop["Exec"].split()[0] == "tokexplorer"
    assert desktop["Icon"] == APP_ID
    if shutil.which("desktop-file-validate"):
        proc = subprocess.run(["desktop-file-validate", str(path)], capture_output=True, text=True)
        assert proc.returncode == 0 and "error" not in proc.stdout, proc.stdout


def test_appstream_metainfo_names_the_desktop_file_and_validates():
    path = PACKAGING / f"{APP_ID}.metainfo.xml"
    text = path.read_text(encoding="utf-8")
    assert f"<id>{APP_ID}</id>" in text
    assert f'<launchable type="desktop-id">{APP_ID}.desktop</launchable>' in text
    assert f'<release version="{__version__}"' in text
    if shutil.which("appstreamcli") is None:
        pytest.skip("appstreamcli is not installed")
    proc = subprocess.run(["appstreamcli", "validate", "--no-net", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
