"""The tokenizers the server holds for the window: the built-ins, the files the window opened
and those trained in the window, by the picker's name. Each is loaded on first use, once, from
whichever server thread asks first.
"""

from __future__ import annotations

import threading
from pathlib import Path

from tokexplorer.core import registry
from tokexplorer.core.tokenizer import Tokenizer, TokexplorerError
from tokexplorer.server.protocol import AddTrained, OpenTokenizerFile, TokenizerInfo, TrainedBpe, TrainedSentencePiece


def info_of(name: str, tok: Tokenizer) -> TokenizerInfo:
    """What the window is told of a tokenizer."""
    return TokenizerInfo(name=name, family=tok.family, n_vocab=tok.n_vocab,
                         special_tokens=dict(tok.special_tokens),
                         split_pattern=tok.split_pattern,
                         has_merges=bool(tok.has_merges),
                         description=str(getattr(tok, "description", "") or ""),
                         source=str(getattr(tok, "source", "") or ""),
                         save_formats=tuple(tok.save_formats))


def build_trained(name: str, trained: TrainedBpe | TrainedSentencePiece) -> Tokenizer:
    """The tokenizer of a training run's result."""
    if isinstance(trained, TrainedBpe):
        from tokexplorer.core.backends.trained_bpe import BPETokenizer

        return BPETokenizer(dict(trained.merges), trained.pattern, dict(trained.special_tokens), name=name,
                            source="trained here", description=trained.description)
    from tokexplorer.core.backends.sentencepiece_family import SentencePieceTokenizer

    return SentencePieceTokenizer(trained.model, name=name, source="trained here", description=trained.description)


class Tokenizers:
    """name -> tokenizer, loaded lazily and once. Files and trained tokenizers are registered as
    their requests arrive (`register`, in order with the documents' requests), and read or built
    by whichever thread needs them first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, object] = {}  # name -> OpenTokenizerFile or AddTrained, not yet made
        self._locks: dict[str, threading.Lock] = {}
        self._held: dict[str, Tokenizer] = {}  # files read and tokenizers trained

    def register(self, request: OpenTokenizerFile | AddTrained) -> None:
        with self._lock:
            self._held.pop(request.name, None)
            self._pending[request.name] = request
            self._locks.setdefault(request.name, threading.Lock())

    def get(self, name: str) -> Tokenizer:
        """The tokenizer, loading it if needed (a second or so for the biggest built-ins)."""
        held = self._held.get(name)
        if held is not None:
            return held
        lock = self._locks.get(name)
        if lock is None:
            if name in registry.builtin_names():
                return registry.get_builtin(name)
            raise TokexplorerError(f"no tokenizer named {name!r} is open")
        with lock:
            if name not in self._held:
                request = self._pending[name]
                if isinstance(request, OpenTokenizerFile):
                    tok = registry.load_tokenizer_file(Path(request.path))
                else:
                    tok = build_trained(name, request.trained)
                self._held[name] = tok
            return self._held[name]
