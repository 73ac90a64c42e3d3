"""The tokenizers the picker offers: the built-ins, the tokenizer files the user opened (which
includes tokenizers trained with `tokexplorer train`: minbpe or SentencePiece .model files) and
tokenizers trained in the window. The tokenizers themselves live in the tokenizing server; the
catalog holds their names, files and what the server told of them (`TokenizerInfo`).

No Qt here; the state object owns one catalog and announces changes to it.
"""

from __future__ import annotations

import threading
from pathlib import Path

from tokexplorer.core import registry
from tokexplorer.server.protocol import TokenizerInfo


# File names (without extension) that every model ships under: such a file is named with its folder.
GENERIC_STEMS = {"tokenizer", "encoder", "vocab", "merges", "model", "spm", "sentencepiece", "ggml-model"}


class TokenizerCatalog:
    """Names in the picker's order, the files behind some, and the facts of those loaded."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[str, Path] = {}  # display name -> tokenizer file
        self._trained: set[str] = set()  # display names of tokenizers trained in the window
        self._infos: dict[str, TokenizerInfo] = {}  # what the server said of each loaded one
        self._loaded: set[str] = set()
        self._order: list[str] = list(registry.builtin_names())

    def names(self) -> list[str]:
        """Display names, built-ins first, then opened files and trained ones in the order added."""
        return list(self._order)

    def add_file(self, path: str | Path) -> str:
        """Offer a tokenizer file under a name derived from the file name (`file_name`); returns
        that name."""
        path = Path(path)
        with self._lock:
            for name, known in self._files.items():
                if known == path:
                    return name
            name = self._file_name(path)
            self._files[name] = path
            self._order.append(name)
        return name

    def _file_name(self, path: Path) -> str:
        """The file's name; with its folder's when the name says nothing of the tokenizer
        ("tokenizer.json", "encoder.json": every model ships one) or is taken, and with more of
        the path until it is unique: "tokenizer.json (Qwen2.5-7B)", "tokenizer.json (b/Qwen)".

        >>> catalog = TokenizerCatalog()
        >>> [catalog.add_file(p) for p in ("/m/Qwen2.5-7B/tokenizer.json", "/x/mine.tiktoken",
        ...                                "/y/mine.tiktoken", "/z/Qwen2.5-7B/tokenizer.json")]
        ['tokenizer.json (Qwen2.5-7B)', 'mine.tiktoken', 'mine.tiktoken (y)', 'tokenizer.json (z/Qwen2.5-7B)']
        """
        name = path.name
        if path.stem.lower() not in GENERIC_STEMS and name not in self._order:
            return name
        folders = [part for part in reversed(path.parent.parts) if part != path.parent.anchor]
        for k in range(1, len(folders) + 1):
            named = f"{name} ({'/'.join(reversed(folders[:k]))})"
            if named not in self._order:
                return named
        return self._unique(name)

    def add_trained(self, base: str) -> str:
        """Offer a tokenizer trained in the window under `base`, made unique; returns that name."""
        with self._lock:
            name = self._unique(base)
            self._trained.add(name)
            self._order.append(name)
        return name

    def remove(self, path: str | Path) -> None:
        """Forget a tokenizer file (one that failed to load)."""
        with self._lock:
            for name, known in list(self._files.items()):
                if known == Path(path):
                    del self._files[name]
                    self._infos.pop(name, None)
                    self._loaded.discard(name)
                    self._order.remove(name)

    def remove_name(self, name: str) -> None:
        """Forget a tokenizer trained in the window (one the server could not build)."""
        with self._lock:
            if name in self._trained:
                self._trained.discard(name)
                self._infos.pop(name, None)
                self._loaded.discard(name)
                self._order.remove(name)

    def is_builtin(self, name: str) -> bool:
        return name in registry.builtin_names()

    def is_trained(self, name: str) -> bool:
        """Trained in the window, held in memory only (until saved)."""
        return name in self._trained

    def path_of(self, name: str) -> Path | None:
        return self._files.get(name)

    def is_loaded(self, name: str) -> bool:
        """The server has loaded it (it has tokenized with it or described it)."""
        return name in self._loaded

    def info(self, name: str) -> TokenizerInfo | None:
        """What the server said of it, once loaded."""
        return self._infos.get(name)

    def loaded(self, name: str, info: TokenizerInfo | None = None) -> None:
        """The server has loaded `name` (and described it)."""
        with self._lock:
            if name in self._order:
                self._loaded.add(name)
                if info is not None:
                    self._infos[name] = info

    def _unique(self, base: str) -> str:
        name, n = base, 2
        while name in self._order:
            name, n = f"{base} ({n})", n + 1
        return name
