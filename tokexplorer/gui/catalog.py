"""The tokenizers the picker offers: the built-ins, the tokenizer files the user opened (which
includes tokenizers trained with `tokexplorer train`: minbpe or SentencePiece .model files) and
tokenizers trained in the window, which live in memory only (until saved). Loading happens on
first use, from any thread (the worker asks).

No Qt here; the state object owns one catalog and announces changes to it.
"""

from __future__ import annotations

import threading
from pathlib import Path

from ..core import registry
from ..core.tokenizer import Tokenizer, TokexplorerError


class TokenizerCatalog:
    """name -> tokenizer, loaded lazily and once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[str, Path] = {}  # display name -> tokenizer file
        self._loaded: dict[str, Tokenizer] = {}  # display name -> loaded tokenizer file
        self._order: list[str] = list(registry.builtin_names())

    def names(self) -> list[str]:
        """Display names, built-ins first, then opened files in the order added."""
        return list(self._order)

    def add_file(self, path: str | Path) -> str:
        """Offer a tokenizer file under a name derived from the file name; returns that name."""
        path = Path(path)
        with self._lock:
            for name, known in self._files.items():
                if known == path:
                    return name
            name = self._unique(path.name)
            self._files[name] = path
            self._order.append(name)
        return name

    def add_tokenizer(self, tok: Tokenizer) -> str:
        """Offer a tokenizer held in memory (trained in the window) under its name, made unique;
        returns that name."""
        with self._lock:
            name = self._unique(tok.name)
            self._loaded[name] = tok
            self._order.append(name)
        return name

    def remove(self, path: str | Path) -> None:
        """Forget a tokenizer file (one that failed to load)."""
        with self._lock:
            for name, known in list(self._files.items()):
                if known == Path(path):
                    del self._files[name]
                    self._loaded.pop(name, None)
                    self._order.remove(name)

    def is_builtin(self, name: str) -> bool:
        return name in registry.builtin_names()

    def path_of(self, name: str) -> Path | None:
        return self._files.get(name)

    def is_loaded(self, name: str) -> bool:
        if name in self._files or name in self._loaded:
            return name in self._loaded
        return registry.is_loaded(name)

    def get(self, name: str) -> Tokenizer:
        """The tokenizer, loading it if needed (may take a second: call from a worker)."""
        if name in self._loaded:
            return self._loaded[name]
        path = self._files.get(name)
        if path is None:
            if name not in self._order:
                raise TokexplorerError(f"no tokenizer named {name!r} is open")
            tok = registry.get_builtin(name)
            return tok
        tok = registry.load_tokenizer(path)
        with self._lock:
            tok = self._loaded.setdefault(name, tok)
        return tok

    def _unique(self, base: str) -> str:
        name, n = base, 2
        while name in self._order:
            name, n = f"{base} ({n})", n + 1
        return name
