"""Encode, count and split texts of any size a piece at a time, so memory stays bounded.

A whole `Encoding` costs about 30 times its text (ids, bytes, spans, flags); a command that only
prints or counts needs one piece's at a time. Tokenizers whose split pattern is one of the named
ones (GPT-2, GPT-4, o200k: the tiktoken built-ins, files that use them, BPE trained here with them)
give the same tokens piece by piece (`patterns.piece_spans`). The others (SentencePiece, Hugging
Face pipelines, custom patterns) encode a text whole: above their budget (core/budgets.py) they
are refused with a way out, instead of growing to many gigabytes.

The pieces are encoded on one thread per core and given back in the text's order
(`ordered_map`): tiktoken's Rust core releases the interpreter lock while it encodes, so the
tiktoken-backed tokenizers (and BPE trained here, when its merges fit tiktoken's ranks) use
every core; a tokenizer whose encode is Python code gains nothing and loses little (processes
would have to be sent the tokenizer and send back every id). A file (`TextFile`) is checked once and then read a
block of UTF-8 at a time, each block a piece, so neither its bytes nor its text is ever held whole.

This module knows no command line; the commands decide what to print.
"""

from __future__ import annotations

import os
import sys
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, TypeVar, Union

import numpy as np

from tokexplorer.core.budgets import max_mb_for, whole_text_over_budget, whole_text_peak_gb
from tokexplorer.core.encoding import Encoding
from tokexplorer.core.files.text_blocks import TextFile
from tokexplorer.core import patterns
from tokexplorer.core.patterns import NAMED_PATTERNS, piece_spans, split
from tokexplorer.core.tokenizer import (AllowedSpecial, DisallowedSpecialError, Tokenizer, TokexplorerError, clean_text,
                                      native_errors, resolve_special)

A = TypeVar("A")
R = TypeVar("R")


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


# A text given whole, or a file read a block at a time (`TextFile.blocks`).
Text = Union[str, TextFile]


@dataclass(frozen=True)
class Piece:
    """The encoding of text[offset:offset + len(encoding.text)]."""

    offset: int  # code points before the piece
    encoding: Encoding


def workers() -> int:
    """Threads that encode pieces: one per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def piece_size() -> int:
    """Characters (a file's bytes) per piece: a quarter of `patterns.PIECE_SIZE`, so a 10 MB file
    gives the threads forty pieces to share (a piece is cut at the first safe place past this size)."""
    return patterns.PIECE_SIZE // 4


AHEAD = 4  # items in hand per thread (`ordered_map`)


def ordered_map(work: Callable[[A], R], items: Iterable[A], threads: int | None = None) -> Iterator[R]:
    """work(item) for each item, on `threads` threads (default `workers()`), given back in the
    items' order; at most AHEAD items per thread in hand, so memory stays that of a few pieces,
    and a long piece at the head does not leave the other threads idle. One thread: in this
    thread, one item after another.

    subtle: threads run at once only where `work` releases the interpreter lock, as tiktoken's
    Rust core does while it encodes; Python code runs one thread at a time, no slower than serial.

    >>> list(ordered_map(lambda x: x * x, range(5), threads=2))
    [0, 1, 4, 9, 16]
    """
    threads = workers() if threads is None else threads
    if threads <= 1:
        yield from map(work, items)
        return
    pending: deque[Future[R]] = deque()
    with ThreadPoolExecutor(threads, thread_name_prefix="pieces") as pool:
        try:
            for item in items:
                pending.append(pool.submit(work, item))
                if len(pending) >= AHEAD * threads:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:  # the caller stopped early, or a piece failed: drop what has not started
            for future in pending:
                future.cancel()


def map_pieces(tok: Tokenizer, text: Text, work: Callable[[Encoding], R], *,
               allowed_special: AllowedSpecial | None = None, limit_mb: float | None = None,
               threads: int | None = None) -> Iterator[tuple[int, R]]:
    """(offset, work(encoding)) for each piece of the text's tokens (`encode_pieces`), each piece
    read, encoded and worked on in one of `threads` threads (`ordered_map`), in the text's order;
    the offset is in code points. The whole text is checked first (see `encode_pieces`).

    >>> from tokexplorer.core.registry import get_builtin
    >>> list(map_pieces(get_builtin("gpt2"), "hello world", len))
    [(0, 2)]
    """
    policy, pieces = _checked_pieces(tok, text, allowed_special, limit_mb)

    def run(piece: str | bytes) -> tuple[int, R]:
        piece = piece.decode("utf-8") if isinstance(piece, bytes) else piece
        return len(piece), work(tok.encode(piece, allowed_special=policy))

    return _with_offsets(ordered_map(run, pieces, threads))


def map_ids(tok: Tokenizer, text: Text, work: Callable[[np.ndarray, str], R], *,
            allowed_special: AllowedSpecial | None = None, limit_mb: float | None = None,
            threads: int | None = None) -> Iterator[R]:
    """work(ids, piece) for each piece of the text (`encode_pieces`), in the text's order: its ids
    as an array (those `encode` gives), without the spans, flags and token bytes of an Encoding.

    subtle: a tiktoken tokenizer that streams (no normalisation) is asked through its tiktoken
    Encoding's `encode_to_numpy`, as its `encode` asks it, but with no Python between the pieces'
    encodes: an Encoding's spans cost a third as much again on a big file, mostly holding the
    interpreter lock that the other threads wait for. Others go through `encode`.

    >>> from tokexplorer.core.registry import get_builtin
    >>> list(map_ids(get_builtin("gpt2"), "hello world", lambda ids, piece: ids.tolist()))
    [[31373, 995]]
    """
    policy, pieces = _checked_pieces(tok, text, allowed_special, limit_mb)
    family = sys.modules.get("tokexplorer.core.backends.tiktoken_family")  # loaded if tok is one
    if family is not None and isinstance(tok, family.TiktokenTokenizer) and streams(tok):
        enc, allowed, where = tok.tiktoken_encoding, set() if policy == "none" else set(policy), tok.source or tok.name

        def ids_of(piece: str) -> np.ndarray:
            with native_errors(where):
                return enc.encode_to_numpy(piece, allowed_special=allowed, disallowed_special=())
    else:
        def ids_of(piece: str) -> np.ndarray:
            return tok.encode(piece, allowed_special=policy).id_array

    def run(piece: str | bytes) -> R:
        piece = piece.decode("utf-8") if isinstance(piece, bytes) else piece
        return work(ids_of(piece), piece)

    return ordered_map(run, pieces, threads)


def encode_pieces(tok: Tokenizer, text: Text, *, allowed_special: AllowedSpecial | None = None,
                  limit_mb: float | None = None, threads: int | None = None) -> Iterator[Piece]:
    """The text's tokens, a piece at a time (one piece when `tok` cannot stream), the pieces
    encoded on `threads` threads. Raises DisallowedSpecialError for the whole text, with its
    position in the whole text, and a file's NotUtf8Error, before yielding anything.

    >>> from tokexplorer.core.registry import get_builtin
    >>> [p.encoding.ids for p in encode_pieces(get_builtin("gpt2"), "hello world")]
    [[31373, 995]]
    """
    results = map_pieces(tok, text, lambda encoding: encoding, allowed_special=allowed_special,
                         limit_mb=limit_mb, threads=threads)
    return (Piece(offset, encoding) for offset, encoding in results)


def _checked_pieces(tok: Tokenizer, text: Text, allowed_special: AllowedSpecial | None,
                    limit_mb: float | None) -> tuple[set[str] | str, Iterator[str | bytes]]:
    """The policy each piece is encoded with, and the pieces (a file's as UTF-8 bytes), the
    whole text checked first: its size for a tokenizer that must see it whole, the special tokens
    it spells, a file's bytes.

    subtle: a file that streams is read twice, the first time only to check it (every byte
    UTF-8, no refused special token: `TextFile.scan`), so a command refuses a bad file before it
    prints a token, as it does with a text read whole. A special token holds no newline
    (`streams`), and a block ends after a newline, so no special token straddles two blocks.
    """
    if isinstance(text, TextFile) and not (streams(tok) and text.in_blocks()):
        text = text.read()
    if isinstance(text, str):
        check_size(tok, text, limit_mb)
        text = clean_text(text)
        # Every piece allows what the whole text allows; nothing it refuses occurs (checked here).
        policy = resolve_special(tok.special_tokens, allowed_special, text) or "none"
        spans = piece_spans(text, size=piece_size()) if streams(tok) else [(0, len(text))]
        return policy, (text[a:b] for a, b in spans)
    allowed = resolve_special(tok.special_tokens, allowed_special, "")
    # A file read as UTF-8 has no lone surrogate for `clean_text` to replace.
    refused = [] if allowed_special == "none" else [t for t in tok.special_tokens if t not in allowed]
    spelled = text.scan(refused)
    if spelled is not None:
        raise DisallowedSpecialError(*spelled)
    return allowed or "none", text.blocks(piece_size())


def _with_offsets(results: Iterable[tuple[int, R]]) -> Iterator[tuple[int, R]]:
    """(length, result) pairs as (offset, result): each offset the sum of the lengths before."""
    offset = 0
    for length, result in results:
        yield offset, result
        offset += length


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


def count(tok: Tokenizer, text: Text, *, allowed_special: AllowedSpecial | None = None,
          limit_mb: float | None = None, threads: int | None = None) -> dict[str, float]:
    """`Encoding.stats` of the whole text, computed a piece at a time, the pieces on `threads`
    threads.

    >>> from tokexplorer.core.registry import get_builtin
    >>> count(get_builtin("gpt2"), "hello world")["tokens"]
    2
    """
    totals = Totals()
    for tokens, chars, n_bytes in map_ids(
            tok, text, lambda ids, piece: (len(ids), len(piece), len(piece.encode("utf-8"))),
            allowed_special=allowed_special, limit_mb=limit_mb, threads=threads):
        totals.tokens += tokens
        totals.chars += chars
        totals.bytes += n_bytes
    return totals.stats()


@dataclass(frozen=True)
class SplitPiece:
    """The pattern's chunks of a piece of the text, as spans in the piece."""

    offset: int  # code points before the piece
    text: str
    spans: list[tuple[int, int]]


def split_pieces(text: Text, pattern: str, threads: int | None = None) -> Iterator[SplitPiece]:
    """The pattern's chunks of the text, a piece of the text at a time, split on `threads`
    threads (the whole text for a custom pattern, which may not split the same way in pieces).
    A file's bytes are checked before the first piece (`TextFile.scan`).

    >>> [p.spans for p in split_pieces("Hi there", NAMED_PATTERNS["gpt2"])]
    [[(0, 2), (2, 8)]]
    """
    named = pattern in NAMED_PATTERNS.values()
    if isinstance(text, TextFile) and not (named and text.in_blocks()):
        text = text.read()
    if not named:
        return iter([SplitPiece(0, text, split(text, pattern))])
    if isinstance(text, TextFile):
        text.scan([])
        pieces: Iterable[str | bytes] = text.blocks(piece_size())
    else:
        pieces = (text[a:b] for a, b in piece_spans(text, size=piece_size()))

    def run(piece: str | bytes) -> tuple[int, tuple[str, list[tuple[int, int]]]]:
        piece = piece.decode("utf-8") if isinstance(piece, bytes) else piece
        return len(piece), (piece, split(piece, pattern))

    return (SplitPiece(offset, piece, spans)
            for offset, (piece, spans) in _with_offsets(ordered_map(run, pieces, threads)))
