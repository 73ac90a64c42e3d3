"""Where the files installed with the package live: icons, sample texts, anything not code.

One helper, so a wheel, an editable checkout and a PyInstaller bundle all find them the same way
(`tokexplorer/resources/` beside the code). This module only locates files; it reads none.
"""

from __future__ import annotations

from pathlib import Path

from .tokenizer import TokexplorerError

RESOURCES = Path(__file__).resolve().parent.parent / "resources"


def resource_path(*parts: str) -> Path:
    """The path of a resource file, which must exist.

    >>> resource_path("icons", "tokexplorer.svg").name
    'tokexplorer.svg'
    """
    path = RESOURCES.joinpath(*parts)
    if not path.exists():
        raise TokexplorerError(
            f"the resource {'/'.join(parts)} is missing from {RESOURCES}; reinstall tokexplorer")
    return path
