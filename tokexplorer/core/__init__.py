"""tokexplorer's core: tokenizers, encodings with spans and flags, split patterns, Unicode
inspection and BPE training. Pure Python: imports no Qt and no pyqtgraph, and nothing of the
server, the window or the command line.

The root holds what every part shares: the `Tokenizer` protocol and its errors (`tokenizer`),
`Encoding` (`encoding`), where tokenizers come from (`registry`), split patterns, streaming of big
texts, memory budgets, positions for editors, token colours. The families are in `backends/`,
training in `training/`, re-tokenizing after an edit in `incremental/`, what the views and commands
show in `analysis/`, files on disk in `files/`, chat templates in `chat/`.

The names below load their modules on first use, so that `tokexplorer train` (which needs only
the trainer) does not pay for tiktoken, sentencepiece and the registry at start-up.

>>> from tokexplorer.core import load_tokenizer
>>> load_tokenizer("cl100k_base").encode("hello world").ids
[15339, 1917]
"""

import importlib

# public name -> the module that defines it
_EXPORTS = {
    "Encoding": "encoding", "Token": "encoding", "TokenFlag": "encoding",
    "GPT2_SPLIT_PATTERN": "patterns", "GPT4_SPLIT_PATTERN": "patterns",
    "O200K_SPLIT_PATTERN": "patterns", "resolve_pattern": "patterns", "split": "patterns",
    "builtin_names": "registry", "get_builtin": "registry", "load_tokenizer": "registry",
    "DisallowedSpecialError": "tokenizer", "Tokenizer": "tokenizer", "TokexplorerError": "tokenizer",
    "inspect_text": "analysis.unicode_info",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # once loaded, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
