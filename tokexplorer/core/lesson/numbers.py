"""The functions behind a step's numbers: each takes a `Given` (the step's text, tokenizers by
name) and returns the value the notebooks would print, computed the way the app computes it: the
real tokenizers (asked for by name, never built here), the core's BPE trainer (minbpe's merges),
the core's SentencePiece trainer with the Llama 2 options.

Each helper below returns such a function, so that a step reads as data:
`code_points(line(0))`, `ids("gpt2")`, `trained_ids(20, "hey hey hey")`. A selector (`whole`,
`line(i)`, `literal(s)`) says which part of the text a number looks at. Training on the same text
twice (a step has several numbers from one run) is done once (a small cache).
"""

from __future__ import annotations

import functools
from typing import Callable

from tokexplorer.core.analysis.bpe_by_hand import merge, pair_counts, parse_ids, sorted_counts
from tokexplorer.core.lesson.step import Given
from tokexplorer.core.tokenizer import TokexplorerError

Compute = Callable[[Given], object]
Part = Callable[[Given], str]


# --- which part of the step's text ---------------------------------------------------------


def whole(given: Given) -> str:
    return given.text


def line(i: int) -> Part:
    """Line `i` of the step's text (a step that loads several of the lecture's strings puts one a
    line)."""
    def pick(given: Given) -> str:
        lines = given.text.split("\n")
        if i >= len(lines):
            raise TokexplorerError(f"the text has {len(lines)} line(s); this number looks at line {i + 1}")
        return lines[i]
    return pick


def literal(text: str) -> Part:
    """A string of the lecture's own (what it encoded with a tokenizer trained on the text)."""
    return lambda given: text


# --- Unicode ----------------------------------------------------------------------------


def code_points(part: Part = whole) -> Compute:
    return lambda given: [ord(c) for c in part(given)]


def encoded(codec: str, part: Part = whole) -> Compute:
    """`list(text.encode(codec))`, as Python does it: "utf-16" and "utf-32" start with a byte
    order mark and are little-endian on these machines, as in the notebooks."""
    return lambda given: list(part(given).encode(codec))


def length(part: Part = whole) -> Compute:
    return lambda given: len(part(given))


def from_code_point(number: int) -> Compute:
    return lambda given: chr(number)


# --- BPE by hand (the lecture's get_stats and merge, from core.analysis.bpe_by_hand) ------------


def merged_list(pair: tuple[int, int], new_id: int, part: Part = whole) -> Compute:
    """The text read as a list of integers ("5, 6, 6, 7, 9, 1"), with `pair` merged."""
    return lambda given: merge(parse_ids(part(given)), pair, new_id)


def top_pairs(k: int) -> Compute:
    """The k most frequent pairs of the text's UTF-8 bytes as `sorted(((v, k) for k, v in
    stats.items()), reverse=True)` lists them."""
    return lambda given: sorted_counts(pair_counts(list(given.text.encode("utf-8"))))[:k]


def top_pair(given: Given) -> tuple[int, int]:
    """`max(stats, key=stats.get)`: among equal counts, the pair seen first."""
    stats = pair_counts(list(given.text.encode("utf-8")))
    if not stats:
        raise TokexplorerError("the text has fewer than two bytes: there is no pair to count")
    return max(stats, key=stats.get)


def length_after_one_merge(given: Given) -> int:
    ids = list(given.text.encode("utf-8"))
    return len(merge(ids, top_pair(given), 256))


@functools.lru_cache(maxsize=8)
def _trained(text: str, n_merges: int):
    from tokexplorer.core.training.bpe import train

    return train(text, 256 + n_merges, name=f"{n_merges} merges")


def merges(n_merges: int) -> Compute:
    """The merges of training Basic BPE (bytes, no regex) for `n_merges` steps: {pair: new id}."""
    return lambda given: dict(_trained(given.text, n_merges).merges)


def byte_count(given: Given) -> int:
    return len(given.text.encode("utf-8"))


def trained_length(n_merges: int) -> Compute:
    """The text's length in tokens after `n_merges` merges learned on it."""
    return lambda given: len(_trained(given.text, n_merges).encode(given.text).ids)


def compression(n_merges: int) -> Compute:
    """Bytes over tokens after `n_merges` merges learned on the text, to two places (1.27X)."""
    def ratio(given: Given) -> float:
        n = len(_trained(given.text, n_merges).encode(given.text).ids)
        return round(byte_count(given) / n, 2) if n else 0.0
    return ratio


def trained_ids(n_merges: int, text: str) -> Compute:
    """`text` encoded with the merges learned on the step's text."""
    return lambda given: list(_trained(given.text, n_merges).encode(text).ids)


def trained_round_trip(n_merges: int, part: Part = whole) -> Compute:
    """decode(encode(x)) == x with the merges learned on the step's text."""
    def same(given: Given) -> bool:
        tok, text = _trained(given.text, n_merges), part(given)
        return tok.decode_bytes(list(tok.encode(text).ids)).decode("utf-8", errors="replace") == text
    return same


def trained_decode(n_merges: int, ids: list[int]) -> Compute:
    """The bytes of `ids` in the merges learned on the text, decoded with errors="replace"."""
    return lambda given: _trained(given.text, n_merges).decode_bytes(ids).decode("utf-8", errors="replace")


def trained_again(n_merges: int, text: str) -> Compute:
    """decode(encode(text)) with the merges learned on the step's text."""
    def again(given: Given) -> str:
        tok = _trained(given.text, n_merges)
        return tok.decode_bytes(list(tok.encode(text).ids)).decode("utf-8", errors="replace")
    return again


def rules_applied(n_merges: int) -> Compute:
    """How many merge rules the lecture's encode loop applies to the whole text: one per rule
    whose pair occurs when its turn comes (lowest new id first)."""
    def applied(given: Given) -> int:
        learned = _trained(given.text, n_merges).merges
        ids, count = list(given.text.encode("utf-8")), 0
        while len(ids) >= 2:
            pair = min(pair_counts(ids), key=lambda p: learned.get(p, float("inf")))
            if pair not in learned:
                break
            ids, count = merge(ids, pair, learned[pair]), count + 1
        return count
    return applied


def strict_decode_error(data: bytes) -> Compute:
    """The message of `data.decode("utf-8")`, as Python raises it."""
    def message(given: Given) -> str:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"UnicodeDecodeError: {exc}"
        return "(no error)"
    return message


def replaced(data: bytes) -> Compute:
    return lambda given: data.decode("utf-8", errors="replace")


# --- tokenizers -----------------------------------------------------------------------------


def ids(tokenizer: str, part: Part = whole, *, allowed_special: str = "none") -> Compute:
    return lambda given: list(given.tokenizer(tokenizer).encode(part(given), allowed_special=allowed_special).ids)


def count(tokenizer: str, part: Part = whole, *, allowed_special: str = "none") -> Compute:
    return lambda given: len(given.tokenizer(tokenizer).encode(part(given), allowed_special=allowed_special).ids)


def ids_per_line(tokenizer: str) -> Compute:
    """Each line's ids on its own (a sample whose lines are compared with each other)."""
    return lambda given: [list(given.tokenizer(tokenizer).encode(line, allowed_special="none").ids)
                          for line in given.text.split("\n")]


def count_per_line(tokenizer: str) -> Compute:
    return lambda given: [len(given.tokenizer(tokenizer).encode(line, allowed_special="none").ids)
                          for line in given.text.split("\n")]


def round_trip(tokenizer: str, part: Part = whole) -> Compute:
    def same(given: Given) -> bool:
        tok, text = given.tokenizer(tokenizer), part(given)
        return tok.decode(list(tok.encode(text, allowed_special="none").ids)) == text
    return same


def chunks(tokenizer: str, part: Part = whole) -> Compute:
    """The chunks the tokenizer's own split pattern cuts the text into (the Chunks view's)."""
    from tokexplorer.core.patterns import split_texts

    def cut(given: Given) -> list[str]:
        pattern = given.tokenizer(tokenizer).split_pattern
        return split_texts(part(given), pattern) if pattern else [part(given)]
    return cut


def n_vocab(tokenizer: str) -> Compute:
    return lambda given: given.tokenizer(tokenizer).n_vocab


def special_id(tokenizer: str, token: str) -> Compute:
    return lambda given: given.tokenizer(tokenizer).special_tokens[token]


def first_tokens(tokenizer: str, k: int) -> Compute:
    """The first `k` tokens' text (GPT-2's encoder.json lists them in this order)."""
    return lambda given: [given.tokenizer(tokenizer).token_bytes(i).decode("utf-8", errors="replace")
                          for i in range(k)]


def token_with_bytes(tokenizer: str, data: bytes) -> Compute:
    """The id of the token whose bytes are `data`."""
    def find(given: Given) -> int:
        tok = given.tokenizer(tokenizer)
        return next(i for i in range(tok.n_vocab) if tok.token_bytes(i) == data)
    return find


def with_specials(tokenizer: str, extra: dict[str, int], part: Part = whole) -> Compute:
    """The text's ids in `tokenizer` extended with special tokens (tiktoken's way of adding
    <|im_start|>), every special token allowed."""
    def encode(given: Given) -> list[int]:
        tok = given.tokenizer(tokenizer).with_special_tokens(dict(extra))
        return list(tok.encode(part(given), allowed_special="all").ids)
    return encode


# --- SentencePiece with the Llama 2 options --------------------------------------------------


@functools.lru_cache(maxsize=4)
def _sentencepiece(text: str, vocab_size: int, byte_fallback: bool):
    from tokexplorer.core.training.sentencepiece import llama2_options, train_sentencepiece

    return train_sentencepiece(text, llama2_options(vocab_size, byte_fallback=byte_fallback))


def sp_ids(vocab_size: int, text: str, *, byte_fallback: bool = True) -> Compute:
    """`text` in a SentencePiece BPE trained on the step's text with the Llama 2 options."""
    return lambda given: list(_sentencepiece(given.text, vocab_size, byte_fallback).encode(text).ids)


def sp_pieces(vocab_size: int, text: str, *, byte_fallback: bool = True) -> Compute:
    """The pieces of `text`, named as sentencepiece names them (▁, <0xEC>)."""
    def pieces(given: Given) -> list[str]:
        tok = _sentencepiece(given.text, vocab_size, byte_fallback)
        return [tok.pieces[i] for i in tok.encode(text).ids]
    return pieces


def sp_first_pieces(vocab_size: int, k: int) -> Compute:
    return lambda given: _sentencepiece(given.text, vocab_size, True).pieces[:k]


def pieces(tokenizer: str, part: Part = whole) -> Compute:
    """A SentencePiece tokenizer's pieces of the text, as sentencepiece names them."""
    def named(given: Given) -> list[str]:
        tok = given.tokenizer(tokenizer)
        return [tok.pieces[i] for i in tok.encode(part(given), allowed_special="none").ids]
    return named
