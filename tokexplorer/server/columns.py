"""A document's tokens as columns of arrays, and the deltas that carry them across the process
boundary: `changes(old, new, shift)` finds what an edit replaced, `splice` applies it.

The server computes the columns from an Encoding (`server.documents`); the window splices each
answer into the columns it holds and reads its views' values from them. Positions are int32 (a
text the window opens is at most 64 MB); the tokens' bytes travel end to end in one bytes object.

No Qt and no tokenizer here: numbers only.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property
from typing import Iterator, Sequence, overload

import numpy as np

POSITION = np.int32
# A bit of the flags beside core.encoding.TokenFlag's: the token overlaps text that spells a
# special token, which the "refuse" policy refused (shown tokenized as plain text).
REFUSED = 0x40


@dataclass(frozen=True, eq=False)
class TokenColumns:
    """Per token: id, code-point span, UTF-16 span (the editor's units), UTF-8 span of the text,
    flags (core.encoding.TokenFlag bits), colour index, and its bytes (`blob`, end to end, with
    each token's length in `lengths`)."""

    ids: np.ndarray  # int32
    starts: np.ndarray  # int32, code points
    ends: np.ndarray
    starts16: np.ndarray  # int32, UTF-16 units of the editor's text
    ends16: np.ndarray
    byte_starts: np.ndarray  # int32, UTF-8 bytes of the text
    byte_ends: np.ndarray
    flags: np.ndarray  # uint8
    colours: np.ndarray  # uint8
    lengths: np.ndarray  # int32: each token's own bytes
    blob: bytes  # the tokens' bytes end to end

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def empty(cls) -> "TokenColumns":
        z = np.zeros(0, dtype=POSITION)
        u = np.zeros(0, dtype=np.uint8)
        return cls(z, z, z, z, z, z, z, u, u, z, b"")

    def slice(self, a: int, b: int) -> "TokenColumns":
        """Tokens a..b (copies), with their bytes."""
        offsets = self.offsets()
        arrays = {f: getattr(self, f)[a:b].copy() for f in ARRAYS}
        return TokenColumns(**arrays, blob=self.blob[int(offsets[a]):int(offsets[b])])

    def offsets(self) -> np.ndarray:
        """Where each token's bytes start in `blob`, and the end (int64 [n + 1])."""
        out = np.zeros(len(self.lengths) + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=out[1:])
        return out


ARRAYS = tuple(f.name for f in fields(TokenColumns) if f.name != "blob")
# Which shift (code points, UTF-16 units, UTF-8 bytes) moves each positional column.
SHIFTED = {"starts": 0, "ends": 0, "starts16": 1, "ends16": 1, "byte_starts": 2, "byte_ends": 2}


def changes(old: TokenColumns, new: TokenColumns, shift: tuple[int, int, int]) -> tuple[int, int, int]:
    """(first, removed, added): the tokens `new` replaced in `old`. Tokens before `first` are
    equal in both, and the last len(new) - first - added tokens of `new` are the last of `old`
    moved by `shift` (code points, UTF-16 units, UTF-8 bytes).

    >>> a = TokenColumns.empty()
    >>> changes(a, a, (0, 0, 0))
    (0, 0, 0)
    """
    n_old, n_new = len(old), len(new)
    m = min(n_old, n_new)
    same = np.ones(m, dtype=bool)
    for name in ARRAYS:
        same &= getattr(old, name)[:m] == getattr(new, name)[:m]
    first = m if same.all() else int(np.argmin(same))
    if old.blob[: int(old.lengths[:first].sum())] != new.blob[: int(new.lengths[:first].sum())]:
        first = 0  # (equal ids of other bytes: no family does that, but then nothing is kept)
    tail = m - first  # tokens that may match at the end
    same = np.ones(tail, dtype=bool)
    for name in ARRAYS:
        a, b = getattr(old, name)[n_old - tail:], getattr(new, name)[n_new - tail:]
        s = shift[SHIFTED[name]] if name in SHIFTED else 0
        same &= (a + s == b) if s else (a == b)
    kept = tail - (int(np.flatnonzero(~same)[-1]) + 1 if not same.all() else 0)
    if kept and old.blob[len(old.blob) - int(old.lengths[n_old - kept:].sum()):] != \
            new.blob[len(new.blob) - int(new.lengths[n_new - kept:].sum()):]:
        kept = 0
    return first, n_old - first - kept, n_new - first - kept


def splice(old: TokenColumns, first: int, removed: int, new: TokenColumns,
           shift: tuple[int, int, int]) -> TokenColumns:
    """`old` with its tokens first..first+removed replaced by `new`, and those after moved by
    `shift`.

    >>> a = TokenColumns.empty()
    >>> len(splice(a, 0, 0, a, (0, 0, 0)))
    0
    """
    stop = first + removed
    arrays = {}
    for name in ARRAYS:
        column = getattr(old, name)
        after = column[stop:]
        s = shift[SHIFTED[name]] if name in SHIFTED else 0
        if s:
            after = after + np.asarray(s, dtype=column.dtype)
        arrays[name] = np.concatenate([column[:first], getattr(new, name), after])
    a = int(old.lengths[:first].sum())
    b = a + int(old.lengths[first:stop].sum())
    return TokenColumns(**arrays, blob=old.blob[:a] + new.blob + old.blob[b:])


class BlobTokenBytes(Sequence[bytes]):
    """Each token's bytes, read from a TokenColumns' blob on demand (an Encoding's token_bytes)."""

    def __init__(self, columns: TokenColumns):
        self._columns = columns
        self._blob = columns.blob

    @cached_property
    def _offsets(self) -> np.ndarray:
        """(made on first use: a result whose bytes no view reads costs no pass over its tokens)"""
        return self._columns.offsets()

    def __len__(self) -> int:
        return len(self._columns)

    @overload
    def __getitem__(self, index: int) -> bytes: ...

    @overload
    def __getitem__(self, index: slice) -> list[bytes]: ...

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._blob[int(self._offsets[index]):int(self._offsets[index + 1])]

    def __iter__(self) -> Iterator[bytes]:
        blob, offsets = self._blob, self._offsets.tolist()
        for a, b in zip(offsets[:-1], offsets[1:]):
            yield blob[a:b]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and len(other) == len(self) and all(a == b for a, b in zip(self, other))
