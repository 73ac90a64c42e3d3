"""The Tokenizer protocol every family satisfies, with the capabilities a tokenizer declares, the
special-token policy, and the core's errors.

Families live in their own modules under `core.backends` (tiktoken, SentencePiece, tokenizer.json,
GGUF, and the byte-level BPE trained here); each satisfies `Tokenizer`. Views, the server and the
command line only use this protocol: they ask a tokenizer what it can do (its split pattern, its
normalisation, its merge trees, its chat template, how an edit's effect on its tokens is bounded)
and never branch on its family (design §10). This module implements no family.
"""

from __future__ import annotations

import functools
from collections import namedtuple
from typing import TYPE_CHECKING, AbstractSet, Callable, Iterable, Literal, Protocol, Union, runtime_checkable


if TYPE_CHECKING:  # annotations only: importing the errors must not import numpy
    from tokexplorer.core.analysis.merge_tree import MergeNode
    from tokexplorer.core.encoding import Encoding

# Special-token ids may leave a gap above the vocabulary (cl100k's <|endofprompt|> does), but not a
# huge one: per-id tables (byte lengths, shared ints) are as long as the largest id.
MAX_SPECIAL_GAP = 1 << 20

AllowedSpecial = Union[Literal["all", "none"], AbstractSet[str]]


class TokexplorerError(ValueError):
    """A user error: the message says what is wrong and how to fix it."""


class DisallowedSpecialError(TokexplorerError):
    """The text spells a special token that the policy does not allow."""

    def __init__(self, token: str, position: int):
        self.token = token
        self.position = position
        super().__init__(
            f"the text contains the special token {token!r} at character {position}; "
            "to encode it as the special token use --allowed-special all (or "
            f"--allowed-special {token!r}), to encode it as plain text use --allowed-special none"
        )


def native_panic(exc: BaseException) -> bool:
    """Whether an exception is a panic inside a library's Rust core (pyo3's PanicException).

    subtle: it derives from BaseException, not Exception, so `except Exception` lets it through.
    """
    return type(exc).__name__ == "PanicException"


class native_errors:
    """Turn a panic inside a library's native core into a TokexplorerError naming the source.

    >>> with native_errors("x.tiktoken"):
    ...     pass
    """

    def __init__(self, source: str):
        self.source = source

    def __enter__(self) -> None:
        pass

    def __exit__(self, kind, exc, tb) -> bool:
        if isinstance(exc, ValueError) and str(exc).startswith("Regex error"):
            # tiktoken's core: its split pattern gave up on this text (fancy-regex's backtracking
            # limit, a pattern like (a|a)*(?=c) on a long run of a's)
            raise TokexplorerError(
                f"{self.source}: the split pattern gave up on this text ({str(exc).splitlines()[0]}); "
                "the pattern backtracks too much for it"
            ) from None
        if exc is not None and native_panic(exc):
            reason = str(exc).splitlines()[0] if str(exc) else "no reason given"
            if "retry-limit" in reason or "Regex search error" in reason:
                # `tokenizers`' Onig regex gave up (a split pattern such as (a|aa)+b on a long run
                # of a's): the file's pattern, not its vocabulary
                raise TokexplorerError(
                    f"{self.source}: the split pattern gave up on this text ({reason}); the pattern "
                    "backtracks too much for it") from None
            raise TokexplorerError(
                f"{self.source}: the tokenizer library failed inside its native core ({reason}); "
                "the vocabulary is inconsistent (a truncated or edited file?)"
            ) from None
        return False


# --- what a tokenizer says about how it encodes, for re-encoding a window (`locality`) ------------
# subtle: plain namedtuples, each field's type in a comment beside it: every command imports this
# module, and typing.NamedTuple compiles each field's annotation when it makes the class (2 ms of
# a short encode's start, measured); a dataclass would import `inspect` (15 ms).


class RegexChunks(namedtuple("RegexChunks", [
    "pattern",  # str
    "encode_chunks",  # (list[str]) -> list[list[int]]: each chunk's ids, as the encode makes them
    "tokens_bytes",  # (Sequence[int]) -> list[bytes]: each id's bytes
    "byte_lengths",  # np.ndarray | None: int32 [n_vocab], each id's byte length, if known
], defaults=[None])):
    """The encode cuts out the allowed special tokens, splits the text between them with one
    regex, and encodes each chunk on its own (tiktoken's encode, minbpe's Regex tokenizer)."""

    __slots__ = ()


class PipelineSplits(namedtuple("PipelineSplits", [
    "patterns",  # tuple[str, ...]: the splits' regexes, in order (\r and \n spelled as escapes)
    "encode_words",  # (list[str], set[str]) -> list[list[int]] | None: words -> ids, or None
    "tokens_bytes",  # (Sequence[int]) -> list[bytes]: each id's bytes
    "added_tokens",  # frozenset[str]: the added tokens' texts (special or not)
])):
    """A tokenizer.json whose pipeline is only regex splits applied in turn (each "Isolated", each
    inside the pieces the last one left), then byte-level BPE of each piece: no normaliser, no
    prepended space. Added tokens are matched before the splits."""

    __slots__ = ()


class SentencePieceModel(namedtuple("SentencePieceModel", [
    "model_proto",  # bytes: the serialized model
])):
    """A SentencePiece model that encodes each special-free part of the text whole; whether its
    lines (or words) are encoded independently follows from the model's options, read from the
    serialized model itself."""

    __slots__ = ()


Locality = Union[RegexChunks, PipelineSplits, SentencePieceModel]


@runtime_checkable
class Tokenizer(Protocol):
    """What every tokenizer family offers. Options are keyword-only.

    Besides encoding and decoding, each tokenizer declares its capabilities; a caller reads them
    directly (no `getattr` with a default, no test of `family`, which names the family for people
    and is for the registry to branch on).
    """

    name: str
    family: str  # "tiktoken", "sentencepiece", "bpe", "tokenizers": shown, never branched on
    # The regex that pre-splits ordinary text into chunks encoded one by one; None when there is no
    # single regex (SentencePiece, a tokenizer.json's pipeline, Basic BPE).
    split_pattern: str | None
    # What the tokenizer does to the text before splitting ("NFC", "NFKC", "lowercase, ..."), or
    # None when it encodes the text as it is; tokens over changed text are flagged NORMALIZED.
    normalizes: str | None
    has_merges: bool  # its tokens are built by merges: `merge_tree` works
    chat_template: str | None  # a Jinja chat template that came with it (tokenizer_config.json)
    bos_token: str  # the text a chat template renders as bos_token / eos_token ("" if none)
    eos_token: str
    # The formats `core.files.trained.save_trained` writes it in, the one that keeps it whole first;
    # () when it is not saved from here (tokenizers read from a library's files).
    save_formats: tuple[str, ...]

    @property
    def n_vocab(self) -> int: ...

    @property
    def special_tokens(self) -> dict[str, int]: ...

    def encode(self, text: str, *, allowed_special: AllowedSpecial | None = None) -> Encoding:
        """Encode; allowed_special None refuses text that spells a special token."""
        ...

    def encode_ids(self, text: str, *, allowed_special: AllowedSpecial | None = None) -> list[int]:
        """`encode(...).ids` at the library's speed, without spans, flags or numpy (a short
        `encode --ids-only` runs only this)."""
        ...

    def decode(self, ids: list[int]) -> str: ...

    def decode_bytes(self, ids: list[int]) -> bytes: ...

    def token_bytes(self, token_id: int) -> bytes: ...

    def merge_tree(self, token_id: int) -> MergeNode:
        """The binary tree of merges that built a token, down to bytes or characters, from the
        family's own source of merges (learned merges, tiktoken ranks, SentencePiece scores, a
        tokenizer.json's merge list). Raises TokexplorerError, saying why, when `has_merges` is
        false. `core.analysis.merge_tree.merge_tree` adds the checks every family shares."""
        ...

    def locality(self) -> Locality | None:
        """How the encode cuts the text before its model runs, which is what bounds the tokens an
        edit can change (`core.incremental` proves a window exact from it); None when nothing is
        declared: every edit re-encodes the whole text."""
        ...

    def library_encoder(self) -> tuple[Callable[[str], list[int]], str] | None:
        """The underlying library's own encode of ordinary text, called as a user of that library
        would, and the library's name: the baseline the benchmarks measure this adapter against.
        None when no library runs the encode."""
        ...


@functools.cache
def _surrogate():
    import regex  # (imported when first needed: the window's process never splits text)

    return regex.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """Replace lone surrogates (which UTF-8 cannot encode) by U+FFFD, as tiktoken does.

    subtle: found by a `regex` search (35 ms on 50 MB of text), with no copy of the text; encoding
    it to find out makes one.

    >>> clean_text("a\\ud83db")
    'a\\ufffdb'
    """
    if text.isascii() or _surrogate().search(text) is None:
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def parse_allowed_special(value: str | None) -> AllowedSpecial | None:
    """The command line's --allowed-special: 'all', 'none', or a comma-separated list.

    >>> sorted(parse_allowed_special("<|a|>,<|b|>"))
    ['<|a|>', '<|b|>']
    """
    if value is None:
        return None
    if value in ("all", "none"):
        return value
    return frozenset(t for t in value.split(",") if t)


def resolve_special(
    special_tokens: dict[str, int], allowed_special: AllowedSpecial | None, text: str
) -> set[str]:
    """The set of special tokens to encode as such; raise if the text spells a refused one.

    Policy, as tiktoken: None allows none and refuses text that spells any special token;
    "none" allows none and encodes such text as ordinary text; "all" allows every one;
    a set allows those, refuses the others.
    """
    if allowed_special == "all":
        return set(special_tokens)
    if allowed_special == "none":
        return set()
    allowed = set(allowed_special or ())
    unknown = allowed - set(special_tokens)
    if unknown:
        # subtle: a vocabulary may have a thousand special tokens (DeepSeek's list is 41 KB): the
        # message names a few, and where to see them all
        raise TokexplorerError(
            f"unknown special token(s) {_some(sorted(unknown))}; this tokenizer has: "
            f"{_some(sorted(special_tokens, key=special_tokens.__getitem__), more=' (tokexplorer vocab -t NAME --filter special lists them)')}"
        )
    spelled = special_spans([t for t in special_tokens if t not in allowed], text)
    if spelled:
        start, end = spelled[0]
        raise DisallowedSpecialError(text[start:end], start)
    return allowed


def _some(tokens: list[str], shown: int = 12, more: str = "") -> str:
    """The first `shown` tokens, each cut to 40 characters, and how many are left out.

    >>> _some([f"<{i}>" for i in range(14)], 3)
    '<0>, <1>, <2> and 11 more'
    """
    if not tokens:
        return "none"
    text = ", ".join(t if len(t) <= 40 else t[:39] + "…" for t in tokens[:shown])
    return text + (f" and {len(tokens) - shown:,} more{more}" if len(tokens) > shown else "")


def special_spans(specials: Iterable[str], text: str) -> tuple[tuple[int, int], ...]:
    """Code-point spans of every place where `text` spells one of `specials`, sorted; a token's own
    occurrences do not overlap (each is looked for after the last one's end).

    >>> special_spans(["<|a|>", "<|b|>"], "x<|b|>y<|a|><|b|>")
    ((1, 6), (7, 12), (12, 17))
    """
    return SpecialFinder(specials).spans(text)


class SpecialFinder:
    """Finds where a text spells one of a vocabulary's special tokens; built once per vocabulary
    and kept by whoever searches many texts (the server, at each keystroke).

    subtle: a vocabulary may have a thousand special tokens (Tekken, DeepSeek): a find over a 1 MB
    text for each took a quarter of a second in all. They share a few two-character prefixes, so
    each prefix is looked for once, and where it occurs the text is read at each of its tokens'
    lengths. Grouping them costs about 1 ms for DeepSeek's, hence one finder per vocabulary.
    """

    def __init__(self, specials: Iterable[str]):
        groups: dict[str, set[str]] = {}
        for token in specials:
            if token:
                groups.setdefault(token[:2], set()).add(token)
        # prefix -> (its tokens, their lengths, shortest first)
        self._groups = {prefix: (frozenset(tokens), sorted({len(t) for t in tokens}))
                        for prefix, tokens in groups.items()}
        self.longest = max((n[-1] for _, n in self._groups.values()), default=0)  # the longest token's length

    def spans(self, text: str) -> tuple[tuple[int, int], ...]:
        """As `special_spans` of this finder's tokens."""
        spans = []
        for prefix, (tokens, lengths) in self._groups.items():
            ends: dict[str, int] = {}  # where each token's last occurrence ends
            pos = text.find(prefix)
            while pos >= 0:
                for n in lengths:
                    piece = text[pos:pos + n]
                    if piece in tokens and pos >= ends.get(piece, 0):
                        spans.append((pos, pos + n))
                        ends[piece] = pos + n
                pos = text.find(prefix, pos + 1)
        return tuple(sorted(spans))
