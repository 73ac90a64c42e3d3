"""Where the files installed with tokexplorer live: icons, sample texts, the UDHR translations,
anything not code.

They sit in `resources/` at the top of a checkout, beside `tokexplorer/`; a wheel and the
PyInstaller bundle carry the same folder as `tokexplorer/resources/` (setup.py maps it there).
One helper finds them in all three; this module only locates files, it reads none.
"""

from __future__ import annotations

from pathlib import Path

from tokexplorer.core.tokenizer import TokexplorerError

_PACKAGE = Path(__file__).resolve().parent.parent


def _folder() -> Path:
    installed = _PACKAGE / "resources"  # a wheel or the bundle
    return installed if installed.is_dir() else _PACKAGE.parent / "resources"  # a checkout


RESOURCES = _folder()


def resource_path(*parts: str) -> Path:
    """The path of a resource file or folder, which must exist.

    >>> resource_path("icons", "tokexplorer.svg").name
    'tokexplorer.svg'
    """
    path = RESOURCES.joinpath(*parts)
    if not path.exists():
        raise TokexplorerError(
            f"the resource {'/'.join(parts)} is missing from {RESOURCES}; reinstall tokexplorer")
    return path
