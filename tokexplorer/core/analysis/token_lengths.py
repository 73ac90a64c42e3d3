"""How long tokens are: the histogram of bytes per token of a text, per tokenizer.

A token's length here is the number of bytes of the text it covers (its span in the text's UTF-8),
so the lengths of a text's tokens add up to the text's bytes; a SentencePiece token that starts
with the dummy-prefix space counts only the text's bytes, and each byte-fallback piece covers one.

It counts; drawing is gui/plots.py's business.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from tokexplorer.core.encoding import Encoding
from tokexplorer.core.tokenizer import Tokenizer


@dataclass(frozen=True)
class LengthHistogram:
    """`counts[k]`: how many tokens cover k bytes of the text (k = 0 .. longest)."""

    tokenizer: str
    counts: tuple[int, ...]

    @property
    def tokens(self) -> int:
        return sum(self.counts)

    @property
    def bytes(self) -> int:
        return sum(k * n for k, n in enumerate(self.counts))

    @property
    def mean(self) -> float:
        return self.bytes / self.tokens if self.tokens else 0.0


def length_histogram(encoding: Encoding, tokenizer: str) -> LengthHistogram:
    """The histogram of an encoding's token lengths in bytes.

    >>> enc = Encoding.from_byte_lengths("hi 👋", [1, 2, 3], [b"h", b"i \\xf0", b"\\x9f\\x91\\x8b"])
    >>> length_histogram(enc, "toy").counts
    (0, 1, 0, 2)
    """
    lengths = np.asarray(encoding.byte_ends, dtype=np.int64) - np.asarray(encoding.byte_starts, dtype=np.int64)
    return LengthHistogram(tokenizer, tuple(int(n) for n in np.bincount(lengths)))


def length_histograms(text: str, tokenizers: Sequence[Tokenizer]) -> list[LengthHistogram]:
    """One histogram per tokenizer of the same text (special-token text encoded as plain text)."""
    return [length_histogram(tok.encode(text, allowed_special="none"), tok.name) for tok in tokenizers]


def histogram_table(histograms: Sequence[LengthHistogram]) -> list[list[object]]:
    """Header and one row per length: bytes, then each tokenizer's count, for CSV. Length 0 (a
    lone SentencePiece dummy-prefix piece) has a row only when some tokenizer has such tokens.

    >>> histogram_table([LengthHistogram("a", (0, 2)), LengthHistogram("b", (0, 1, 1))])
    [['bytes', 'a', 'b'], [1, 2, 1], [2, 0, 1]]
    """
    longest = max((len(h.counts) for h in histograms), default=1)
    first = 0 if any(h.counts[:1] != (0,) and h.counts for h in histograms) else 1
    return [["bytes"] + [h.tokenizer for h in histograms]] + [
        [k] + [h.counts[k] if k < len(h.counts) else 0 for h in histograms] for k in range(first, longest)
    ]
