"""The locality rule of DeepSeek's tokenizer.json split: digit groups, CJK runs, then a regex inside
each piece, with the library itself encoding the window's chunks (`core.tokenizer.PipelineSplits`
with `DEEPSEEK_V3_PATTERNS`).

The regex rule's restart and stop hold, with the pieces' ends found near the window only. It
does not model any other pipeline, nor the choice of rule (`rules`).
"""

from __future__ import annotations

from typing import Iterator, NamedTuple, Sequence

import regex

from tokexplorer.core.backends.gguf_model import DEEPSEEK_V3_PATTERNS
from tokexplorer.core.encoding import Encoding
from tokexplorer.core.incremental.regex_rule import LOOKAHEAD, RegexRule
from tokexplorer.core.incremental.state import NotLocal, State, tiled
from tokexplorer.core.patterns import compile_pattern
from tokexplorer.core.tokenizer import PipelineSplits, Tokenizer

_NON_SPACE = regex.compile(r"\S")


class SplitsRule(RegexRule):
    """DeepSeek's pre-tokenizer (a `tokenizers` Sequence of three Isolated splits, then byte-level
    BPE per piece): digit groups of up to three, then runs of CJK characters, then a regex inside
    each piece, the text between matches being pieces too.

    Digits and the CJK ranges split the text into segments, and the last regex runs inside each
    segment: its matches read up to LOOKAHEAD characters past their end or a whitespace run, as
    the LOCAL_PATTERNS do, except that a segment's end is an end of text for them. So the same
    restart and convergence hold, with segment ends found near the window only. Added tokens (the
    library matches them before splitting) are not modelled: a window near one is encoded whole.
    """

    split_beside_encode = False  # the library splits the text as it encodes it

    def __init__(self, tokenizer: Tokenizer, splits: PipelineSplits, added: "AddedTokens"):
        self._encode_words = splits.encode_words
        self._bytes_of = splits.tokens_bytes
        self._byte_lengths = None
        self._regex = compile_pattern(DEEPSEEK_V3_PATTERNS[2])
        cjk = DEEPSEEK_V3_PATTERNS[1][:-1]  # the character class, without its "+"
        self._hard_char = regex.compile(rf"[\p{{N}}{cjk[1:-1]}]")  # where a segment ends
        self._hard_piece = regex.compile(rf"{DEEPSEEK_V3_PATTERNS[0]}|{DEEPSEEK_V3_PATTERNS[1]}")
        self._added, self._added_lengths, self._added_first, self._added_reach = added
        self._special_ids = tokenizer.special_tokens
        self._special_id_set = frozenset(self._special_ids.values())
        self._nfc = False

    def full(self, enc: Encoding, allowed: set[str]) -> State:
        cs, ce = enc.chunk_finder.spans()
        bounds = tiled(cs, ce, len(enc.text))
        # as `chunks` would find them, kept as arrays
        enc.keep_chunk_spans(*((cs, ce) if bounds is None else (bounds[:-1], bounds[1:])))
        return State(enc, bounds)

    def _reach(self, allowed: set[str]) -> int:
        return self._added_reach

    def _encode_window(self, new: str, window, allowed: set[str]) -> list[list[int]] | None:
        return self._encode_words([new[s:e] for s, e, _ in window], allowed)

    def _has_added(self, text: str, lo: int, hi: int) -> bool:
        """Whether an added token starts in text[lo:hi]."""
        added, lengths = self._added, self._added_lengths
        for first in self._added_first:
            at = text.find(first, lo, hi)
            while at >= 0:
                if any(text[at:at + n] in added for n in lengths):
                    return True
                at = text.find(first, at + 1, hi)
        return False

    def _chunks(self, text: str, pos: int, order: Sequence[str]) -> Iterator[tuple[int, int, str | None]]:
        n = len(text)
        step = 1024
        while pos < n:
            limit = min(n, pos + step)
            if self._has_added(text, max(0, pos - self._added_reach), min(n, limit + self._added_reach)):
                raise NotLocal
            hard = self._hard_char.search(text, pos, limit)
            end = hard.start() if hard else limit
            for s, e in self._segment(text, pos, end, final=hard is not None or limit == n):
                yield s, e, None
                pos = e
            if pos < end:  # stopped short of a limit that is not a segment end: look further
                step *= 4
                continue
            if hard is not None:  # a digit group, or a CJK run (the regex splits it further)
                piece = self._hard_piece.match(text, pos)
                for s, e in self._segment(text, pos, piece.end(), final=True):
                    yield s, e, None
                pos = piece.end()

    def _segment(self, text: str, start: int, end: int, *, final: bool) -> Iterator[tuple[int, int]]:
        """The regex's matches in text[start:end], and the text between them. Unless `end` is
        the segment's true end (`final`), only chunks whose matches read nothing near `end`."""
        at = start
        for m in self._regex.finditer(text, start, end):
            if not final and not self._far_from(text, m.end(), end):
                return
            if m.start() > at:
                yield at, m.start()
            yield m.start(), m.end()
            at = m.end()
        if final and end > at:
            yield at, end

    @staticmethod
    def _far_from(text: str, e: int, end: int) -> bool:
        """A match ending at e read nothing at or after `end`: a non-space ends any whitespace
        run it was scanning well before `end`."""
        return _NON_SPACE.search(text, e, end - 2 * LOOKAHEAD - 1) is not None


class AddedTokens(NamedTuple):
    """A tokenizer.json's added tokens, as a window's split looks for them.

    (A set and its lengths, not one regex of them all: the `regex` module took 110 ms to compile
    DeepSeek's 1,283.)"""

    tokens: frozenset[str]
    lengths: list[int]  # their lengths, each once
    first: list[str]  # their first characters
    reach: int  # the longest one's length


def added_tokens(splits: PipelineSplits) -> AddedTokens:
    """The added tokens of a pipeline, as `SplitsRule` looks for them."""
    added = splits.added_tokens
    lengths = sorted({len(t) for t in added})
    return AddedTokens(added, lengths, sorted({t[0] for t in added}), max(lengths, default=0))
