"""The Tokenizer protocol every family satisfies, the special-token policy, and the core's errors.

Families live in their own modules (`tiktoken_backend`, `sentencepiece_backend`, and the byte-level
BPE trained here); each satisfies `Tokenizer`. Views and the command line only use this protocol.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, AbstractSet, Iterable, Literal, Protocol, Union, runtime_checkable

import regex

if TYPE_CHECKING:  # annotations only: importing the errors must not import numpy
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
        if exc is not None and native_panic(exc):
            reason = str(exc).splitlines()[0] if str(exc) else "no reason given"
            raise TokexplorerError(
                f"{self.source}: the tokenizer library failed inside its native core ({reason}); "
                "the vocabulary is inconsistent (a truncated or edited file?)"
            ) from None
        return False


@runtime_checkable
class Tokenizer(Protocol):
    """What every tokenizer family offers. Options are keyword-only."""

    name: str
    family: str  # "tiktoken", "sentencepiece", "bpe", "tokenizers"
    # What views may ask beside the methods below (read with getattr, default in brackets):
    # has_merges (False): merge_tree(tok, id) works; normalizes (None): a description of what the
    # tokenizer does to the text before splitting ("NFC", "NFKC", "lowercase, ..."), shown with
    # the tokens it changed flagged NORMALIZED.

    @property
    def n_vocab(self) -> int: ...

    @property
    def special_tokens(self) -> dict[str, int]: ...

    def encode(self, text: str, *, allowed_special: AllowedSpecial | None = None) -> Encoding:
        """Encode; allowed_special None refuses text that spells a special token."""
        ...

    def decode(self, ids: list[int]) -> str: ...

    def decode_bytes(self, ids: list[int]) -> bytes: ...

    def token_bytes(self, token_id: int) -> bytes: ...


_SURROGATE = regex.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """Replace lone surrogates (which UTF-8 cannot encode) by U+FFFD, as tiktoken does.

    subtle: found by a `regex` search (35 ms on 50 MB of text), with no copy of the text; encoding
    it to find out makes one.

    >>> clean_text("a\\ud83db")
    'a\\ufffdb'
    """
    if text.isascii() or _SURROGATE.search(text) is None:
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
        known = ", ".join(sorted(special_tokens)) or "none"
        raise TokexplorerError(
            f"unknown special token(s) {', '.join(sorted(unknown))}; this tokenizer has: {known}"
        )
    spelled = special_spans([t for t in special_tokens if t not in allowed], text)
    if spelled:
        start, end = spelled[0]
        raise DisallowedSpecialError(text[start:end], start)
    return allowed


def special_spans(specials: Iterable[str], text: str) -> tuple[tuple[int, int], ...]:
    """Code-point spans of every place where `text` spells one of `specials`, sorted; a token's own
    occurrences do not overlap (each is looked for after the last one's end).

    subtle: a vocabulary may have a thousand special tokens (Tekken, DeepSeek): a find over a 1 MB
    text for each took a quarter of a second in all. They share a few
    two-character prefixes, so each prefix is looked for once, and where it occurs the text is
    read at each of its tokens' lengths.

    >>> special_spans(["<|a|>", "<|b|>"], "x<|b|>y<|a|><|b|>")
    ((1, 6), (7, 12), (12, 17))
    """
    groups: dict[str, set[str]] = {}
    for token in specials:
        if token:
            groups.setdefault(token[:2], set()).add(token)
    spans = []
    for prefix, tokens in groups.items():
        lengths = sorted({len(t) for t in tokens})
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
