"""Encode, count and split texts of any size a piece at a time, so memory stays bounded.

A whole `Encoding` costs about 30 times its text (ids, bytes, spans, flags); a command that only
prints or counts needs one piece's at a time. Tokenizers whose split pattern is one of the named
ones (GPT-2, GPT-4, o200k: the tiktoken built-ins, files that use them, BPE trained here with them)
give the same tokens piece by piece (`patterns.piece_spans`). The others (SentencePiece, Hugging
Face pipelines, custom patterns) encode a text whole: above their budget (core/budgets.py) they
are refused with a way out, instead of growing to many gigabytes.

This module knows no command line; the commands decide what to print.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from tokexplorer.core.budgets import max_mb_for, whole_text_over_budget, whole_text_peak_gb
from tokexplorer.core.encoding import Encoding
from tokexplorer.core.patterns import NAMED_PATTERNS, piece_spans, split
from tokexplorer.core.tokenizer import AllowedSpecial, Tokenizer, TokexplorerError, clean_text, resolve_special


def streams(tok: Tokenizer) -> bool:
    """Whether `tok` gives the same tokens piece by piece as on the whole text.

    >>> from tokexplorer.core.registry import get_builtin
    >>> streams(get_builtin("cl100k_base")), streams(get_builtin("llama-sp"))
    (True, False)
    """
    return (tok.split_pattern in NAMED_PATTERNS.values()
            and not tok.normalizes
            and not any("\n" in t for t in tok.special_tokens))


def whole_text_refusal(tok: Tokenizer, n_chars: int, limit_mb: float | None = None) -> str | None:
    """Why `tok` will not encode a text of `n_chars` characters (it must see it whole, and that is
    over `budgets.whole_text_limit` million characters, or `limit_mb`), or None. The caller adds
    the way on (the command line's --max-mb, the window's other tokenizers)."""
    return None if streams(tok) else whole_text_over_budget(tok.name, tok.family, n_chars, limit_mb)


def check_size(tok: Tokenizer, text: str, limit_mb: float | None = None) -> None:
    """Refuse a text too big for a tokenizer that must encode it whole (`whole_text_refusal`;
    `limit_mb`: the command line's --max-mb)."""
    why = whole_text_refusal(tok, len(text), limit_mb)
    if why is not None:
        raise TokexplorerError(f"{why}; cut the file, or pass --max-mb {max_mb_for(len(text))} to go on "
                               f"(about {whole_text_peak_gb(tok.family, len(text)):.1f} GB)")


@dataclass(frozen=True)
class Piece:
    """The encoding of text[offset:offset + len(encoding.text)]."""

    offset: int  # code points before the piece
    encoding: Encoding


def encode_pieces(tok: Tokenizer, text: str, *, allowed_special: AllowedSpecial | None = None,
                  limit_mb: float | None = None) -> Iterator[Piece]:
    """The text's tokens, a piece at a time (one piece when `tok` cannot stream). Raises
    DisallowedSpecialError for the whole text, with its position in the whole text, before
    yielding anything.

    >>> from tokexplorer.core.registry import get_builtin
    >>> [p.encoding.ids for p in encode_pieces(get_builtin("gpt2"), "hello world")]
    [[31373, 995]]
    """
    check_size(tok, text, limit_mb)
    text = clean_text(text)
    # Every piece allows what the whole text allows; nothing it refuses occurs (checked here).
    policy = resolve_special(tok.special_tokens, allowed_special, text) or "none"
    spans = piece_spans(text) if streams(tok) else [(0, len(text))]
    for a, b in spans:
        yield Piece(a, tok.encode(text[a:b], allowed_special=policy))


@dataclass
class Totals:
    """Counts summed over pieces, as `Encoding.stats` gives them for a whole text."""

    tokens: int = 0
    chars: int = 0
    bytes: int = 0

    def add(self, encoding: Encoding) -> None:
        self.tokens += len(encoding)
        self.chars += len(encoding.text)
        self.bytes += encoding.n_bytes

    def stats(self) -> dict[str, float]:
        n = self.tokens
        return {"tokens": n, "chars": self.chars, "bytes": self.bytes,
                "bytes_per_token": self.bytes / n if n else 0.0,
                "chars_per_token": self.chars / n if n else 0.0}


def count(tok: Tokenizer, text: str, *, allowed_special: AllowedSpecial | None = None,
          limit_mb: float | None = None) -> dict[str, float]:
    """`Encoding.stats` of the whole text, computed a piece at a time.

    >>> from tokexplorer.core.registry import get_builtin
    >>> count(get_builtin("gpt2"), "hello world")["tokens"]
    2
    """
    totals = Totals()
    for piece in encode_pieces(tok, text, allowed_special=allowed_special, limit_mb=limit_mb):
        totals.add(piece.encoding)
    return totals.stats()


def split_pieces(text: str, pattern: str) -> Iterator[list[tuple[int, int]]]:
    """The pattern's chunks of the text as (start, end) spans, a piece of the text at a time
    (the whole text for a custom pattern, which may not split the same way in pieces).

    >>> [spans for spans in split_pieces("Hi there", NAMED_PATTERNS["gpt2"])]
    [[(0, 2), (2, 8)]]
    """
    spans = piece_spans(text) if pattern in NAMED_PATTERNS.values() else [(0, len(text))]
    for a, b in spans:
        yield [(a + s, a + t) for s, t in split(text[a:b], pattern)]
