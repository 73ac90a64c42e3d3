"""The `--plot PATH.png` option that `report` and `sweep` share: the window's figure of a core
result, drawn offscreen into a PNG. Light to import (no tokenizer, no Qt until a plot is drawn), so
that adding it to a parser costs the command nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tokexplorer.core.tokenizer import TokexplorerError


def add_plot_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plot", metavar="PATH.png", help="also draw the figure the window shows into a PNG")
    p.add_argument("--dark", action="store_true", help="--plot: the dark theme")


def check_plot_path(path: str | None) -> None:
    """Refuse a --plot path that cannot be written, before any time is spent."""
    if path is None:
        return
    p = Path(path)
    if p.suffix.lower() != ".png":
        raise TokexplorerError(f"{path}: the figure is written as PNG; give a path ending in .png")
    folder = p.parent
    if not folder.is_dir():
        raise TokexplorerError(f"{path}: the folder {folder} does not exist; create it first")
    if not os.access(folder, os.W_OK):
        raise TokexplorerError(f"{path}: cannot write into {folder} (permission denied)")


def write_plot(result, path: str, *, dark: bool = False) -> None:
    """Draw a core result with the window's figure code, offscreen, into a PNG."""
    try:
        from tokexplorer.gui.widgets.figures import write_png  # imported on use: Qt is slow to load and may be missing
    except ImportError as exc:
        raise TokexplorerError(f"--plot needs PySide6 and pyqtgraph, which cannot be loaded: {exc}") from None
    try:
        size = write_png(result, path, dark=dark)
    except OSError as exc:
        raise TokexplorerError(f"cannot write {path}: {exc.strerror or exc}") from None
    print(f"wrote {path} ({size:,} bytes)", file=sys.stderr)
