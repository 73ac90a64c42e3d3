"""The sub-commands of `tokexplorer`, one module per group; each has add_parsers(subparsers),
and every parser sets `handler`, the function that runs it."""

import importlib
from types import ModuleType


def load(module: str) -> ModuleType:
    """The sub-command module `tokexplorer.cli.commands.<module>`."""
    return importlib.import_module(f"{__name__}.{module}")
