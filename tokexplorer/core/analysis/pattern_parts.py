"""The split regex explained: which alternative of the pattern matched each chunk, and where two
patterns split the same text differently.

A split pattern is a list of alternatives tried left to right at each position (`'s|'t| ?\\p{L}+|
...`). `top_alternatives` cuts a pattern at its top-level bars (not inside groups or classes);
`explain_chunks` wraps each alternative in a named group of its own, which matches exactly what
the bare alternative did, and reads back which group matched at each chunk's start; given the
explanation of the text before an edit, it matches again only the chunks the edit can have
changed. The alternatives of the known patterns (the original GPT-2 pattern of OpenAI's
`encoder.py`, tiktoken's r50k/GPT-2, cl100k, o200k) have names ("letters", "numbers", ...); any
other pattern's are "alternative n".
`compare_splits` marks the chunks of one pattern that another pattern does not make.

On GPT-2's two patterns: tiktoken's r50k pattern is `encoder.py`'s rewritten for speed
(possessive quantifiers, `'(?:[sdmt]|ll|ve|re)`, `\\s++$` and `\\s` in place of the final `\\s+`),
and the two split every text the same: the final `\\s+` is only tried where `\\s+(?!\\S)` failed,
which is a single whitespace character before a non-space, and `\\s++$` takes what `\\s+(?!\\S)`
would at the end. The contraction that matters is between GPT-2 and GPT-4: cl100k's
`'(?i:...)` takes "'S" and "'LL" as contractions, GPT-2's only the lower case.

No Qt and no tokenizer here; the chunk spans of a tokenizer come from its encoding.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import regex

from tokexplorer.core.patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, O200K_SPLIT_PATTERN, compile_pattern
from tokexplorer.core.tokenizer import TokexplorerError

# The pattern printed in OpenAI's gpt-2 repository, src/encoder.py (and in the lecture).
ENCODER_PY_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# Patterns a user can compare against: name -> (pattern, what it is).
COMPARABLE = {
    "encoder.py": (ENCODER_PY_PATTERN, "GPT-2 as released (OpenAI's encoder.py)"),
    "r50k": (GPT2_SPLIT_PATTERN, "GPT-2 in tiktoken (r50k_base, gpt2)"),
    "cl100k": (GPT4_SPLIT_PATTERN, "GPT-4 (cl100k_base)"),
    "o200k": (O200K_SPLIT_PATTERN, "GPT-4o (o200k_base)"),
}

CONTRACTION = "contraction"
# Each known alternative's name. Written once per spelling; the patterns above share many.
_NAMES = {
    r"'s": CONTRACTION, r"'t": CONTRACTION, r"'re": CONTRACTION, r"'ve": CONTRACTION, r"'m": CONTRACTION,
    r"'ll": CONTRACTION, r"'d": CONTRACTION,
    r"'(?:[sdmt]|ll|ve|re)": CONTRACTION,
    r"'(?i:[sdmt]|ll|ve|re)": "contraction (any case)",
    r" ?\p{L}+": "letters (a space before)", r" ?\p{L}++": "letters (a space before)",
    r"[^\r\n\p{L}\p{N}]?+\p{L}++": "letters (one non-letter before)",
    r" ?\p{N}+": "numbers (a space before)", r" ?\p{N}++": "numbers (a space before)",
    r"\p{N}{1,3}+": "digits (up to 3)", r"\p{N}{1,3}": "digits (up to 3)",
    r" ?[^\s\p{L}\p{N}]+": "punctuation (a space before)", r" ?[^\s\p{L}\p{N}]++": "punctuation (a space before)",
    r" ?[^\s\p{L}\p{N}]++[\r\n]*+": "punctuation (newlines after)",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*": "punctuation (newlines or / after)",
    r"\s++$": "whitespace at the end of the text",
    r"\s*[\r\n]": "whitespace up to a newline", r"\s*[\r\n]+": "whitespace up to newlines",
    r"\s+(?!\S)": "whitespace not before a non-space",
    r"\s+": "whitespace (the rest)", r"\s": "whitespace (one, the rest)",
    (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
     r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"): "word, lower case (+ contraction)",
    (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
     r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"): "word, upper case (+ contraction)",
}

# A numbered back-reference would point at the wrong group once each alternative is wrapped.
_BACKREFERENCE = regex.compile(r"\\[1-9]|\\g<\d+>")


def top_alternatives(pattern: str) -> list[str]:
    """The pattern cut at its top-level bars: not inside (...), [...] or after a backslash.

    >>> top_alternatives(r"'s|(?:a|b)+|[|x]|\\|")
    ["'s", '(?:a|b)+', '[|x]', '\\\\|']
    """
    parts, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "^":
                i += 1
            if pattern[i + 1 : i + 2] == "]":  # a ] first in a class is a literal
                i += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    return parts


def alternative_names(pattern: str) -> list[str]:
    """A name for each top-level alternative: the known ones by what they match, others by number.

    >>> alternative_names(r"'s| ?\\p{L}+|x+")
    ['contraction', 'letters (a space before)', 'alternative 3']
    """
    return [_NAMES.get(alt, f"alternative {k + 1}") for k, alt in enumerate(top_alternatives(pattern))]


@functools.lru_cache(maxsize=16)
def _wrapped(pattern: str) -> regex.Pattern | None:
    """The pattern with each top-level alternative in a group named a0, a1, ...; None when that
    would change it (numbered back-references)."""
    if _BACKREFERENCE.search(pattern):
        return None
    alternatives = top_alternatives(pattern)
    try:
        return regex.compile("|".join(f"(?P<a{k}>{alt})" for k, alt in enumerate(alternatives)))
    except regex.error:
        return None


@dataclass(frozen=True)
class ExplainedChunks:
    """Which alternative of `pattern` made each chunk of `text`."""

    pattern: str
    names: tuple[str, ...]  # per alternative
    starts: np.ndarray  # int64 code points, per chunk
    ends: np.ndarray
    alternatives: np.ndarray  # int64 per chunk: the alternative that matched (-1: not found)
    text: str = ""  # the text explained: the next explanation of an edited text starts from this one

    def counts(self) -> dict[str, int]:
        """Chunks per alternative's name, in the pattern's order (those that matched none left out)."""
        found = np.bincount(self.alternatives[self.alternatives >= 0], minlength=len(self.names))
        out: dict[str, int] = {}
        for name, n in zip(self.names, found.tolist()):
            if n:
                out[name] = out.get(name, 0) + n
        return out


CHUNKS_AT_ONCE = 1 << 16  # chunks whose spans are read into Python (or compared) at a time


def explain_chunks(text: str, pattern: str, starts=None, ends=None, *,
                   previous: ExplainedChunks | None = None) -> ExplainedChunks:
    """Which alternative matched each chunk: of the given chunk spans (a tokenizer's chunks, which
    skip its special tokens), or of the pattern's own split of the text.

    A chunk is explained by the pattern's match at its start, when that match ends where the
    chunk ends; else (a chunk cut short by a special token) by its match up to the chunk's end,
    as if the text ended there; else by none (-1).

    `previous`: the explanation of an earlier version of the text under the same pattern (an edit
    ago). Its chunks that the edit cannot have changed keep their alternatives and only the rest are
    matched again; the answer is the same as without it (`_unchanged`).

    >>> e = explain_chunks("we'll see 42!", ENCODER_PY_PATTERN)
    >>> [("we'll see 42!"[a:b], e.names[k]) for a, b, k in zip(e.starts, e.ends, e.alternatives)]
    [('we', 'letters (a space before)'), ("'ll", 'contraction'), (' see', 'letters (a space before)'), (' 42', 'numbers (a space before)'), ('!', 'punctuation (a space before)')]
    """
    compile_pattern(pattern)  # a bad pattern: one clear message
    wrapped = _wrapped(pattern)
    names = tuple(alternative_names(pattern))
    if starts is None:
        from tokexplorer.core.patterns import split

        spans = split(text, pattern)
        starts = np.array([a for a, _ in spans], dtype=np.int64)
        ends = np.array([b for _, b in spans], dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    found = np.full(len(starts), -1, dtype=np.int64)
    if wrapped is not None:
        # subtle: only the chunks an edit can have changed are matched again: with the chunk view
        # open, matching a 1 MB book's 260,000 chunks at each pause in typing made as many
        # short-lived objects each time, and the server kept tens of MB more of the memory they took
        todo = _unchanged(previous, text, pattern, starts, ends, found)
        for lo, hi in todo:
            for at in range(lo, hi, CHUNKS_AT_ONCE):
                stop = min(hi, at + CHUNKS_AT_ONCE)
                found[at:stop] = [_alternative(wrapped, text, a, b)
                                  for a, b in zip(starts[at:stop].tolist(), ends[at:stop].tolist())]
    return ExplainedChunks(pattern, names, starts, ends, found, text)


def _alternative(wrapped: regex.Pattern, text: str, a: int, b: int) -> int:
    """The alternative that made chunk [a, b): its match at a, else its match as if the text ended at b."""
    m = wrapped.match(text, a)
    if m is None or m.end() != b:
        m = wrapped.match(text, a, b)
        if m is None or m.end() != b:
            return -1
    return int(m.lastgroup[1:])


def _unchanged(previous: ExplainedChunks | None, text: str, pattern: str, starts: np.ndarray, ends: np.ndarray,
               found: np.ndarray) -> list[tuple[int, int]]:
    """Copy into `found` the alternatives `previous` knows of chunks the edit from its text to
    `text` cannot have changed; the ranges of chunk indices left to match.

    Exact for the patterns of `LOCAL_PATTERNS` (no lookbehind; a match reads at most LOOKAHEAD
    characters past its end, or to the end of a whitespace run it started in), by the reasoning of
    the incremental encoder's re-split (`core.incremental.regex_rule`): a chunk ending at or before
    `bound` read nothing the edit changed, and a chunk starting after the edit sees the old text
    from the same place on (shifted), so the match there is the old one, shifted, when the old text
    had a chunk with that span. Any other pattern is matched whole.
    """
    from tokexplorer.core.incremental.encoder import text_edit
    from tokexplorer.core.incremental.regex_rule import LOCAL_PATTERNS, LOOKAHEAD, WS_RUN_BEFORE

    everything = [(0, len(starts))]
    if previous is None or previous.pattern != pattern or pattern not in LOCAL_PATTERNS:
        return everything
    old = previous.text
    p, removed, inserted = text_edit(old, text)
    delta, edit_end = len(inserted) - removed, p + len(inserted)
    bound = min(p - LOOKAHEAD - 1, WS_RUN_BEFORE.match(old, 0, p).start())
    first = int(np.searchsorted(ends, bound, side="right"))  # chunks [0, first) end by `bound`
    if first > len(previous.starts) or not (np.array_equal(starts[:first], previous.starts[:first])
                                            and np.array_equal(ends[:first], previous.ends[:first])):
        return everything  # not the same chunks before the edit (another policy for special tokens)
    found[:first] = previous.alternatives[:first]
    last = max(first, int(np.searchsorted(starts, edit_end, side="left")))  # chunks from `last` start after
    todo = [(first, last)]
    old_starts, old_ends, n_old = previous.starts, previous.ends, len(previous.starts)
    for lo in range(last, len(starts), CHUNKS_AT_ONCE):
        hi = min(len(starts), lo + CHUNKS_AT_ONCE)
        shifted = starts[lo:hi] - delta
        at = np.minimum(np.searchsorted(old_starts, shifted), max(n_old - 1, 0))
        same = ((old_starts[at] == shifted) & (old_ends[at] == ends[lo:hi] - delta)) if n_old else \
            np.zeros(hi - lo, dtype=bool)
        found[lo:hi][same] = previous.alternatives[at[same]]
        todo.extend((lo + int(k), lo + int(k) + 1) for k in np.flatnonzero(~same))
    return todo


def compare_splits(text: str, starts, ends, other: str) -> np.ndarray:
    """A bool per chunk: True where the `other` pattern does not make that same chunk.

    >>> compare_splits("HE'S", [0, 2, 3], [2, 3, 4], COMPARABLE["cl100k"][0]).tolist()  # GPT-2's chunks
    [False, True, True]
    """
    from tokexplorer.core.patterns import split

    theirs = set(split(text, other))
    return np.array([(a, b) not in theirs for a, b in zip(np.asarray(starts).tolist(), np.asarray(ends).tolist())],
                    dtype=bool)


def comparable(name: str) -> str:
    """A comparable pattern by its name (`COMPARABLE`); TokexplorerError names the choices."""
    try:
        return COMPARABLE[name][0]
    except KeyError:
        raise TokexplorerError(f"no pattern {name!r} to compare with; choose one of "
                               + ", ".join(COMPARABLE)) from None
