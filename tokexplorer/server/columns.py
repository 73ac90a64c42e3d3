"""A document's tokens as columns of arrays, and the deltas that carry them across the process
boundary: `splice` replaces the tokens an edit changed and moves those after it.

The server computes the columns from an Encoding (`server.documents`); the window splices each
answer into the columns it holds and reads its views' values from them. Ids and positions are
int64, as the core's: numpy's searchsorted with a Python int first casts a whole int32 array to
int64 (86 us a call on a book's tokens, not 1.3, and a paint makes hundreds). The tokens' bytes
travel end to end in one bytes object.

No Qt and no tokenizer here: numbers only.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Iterator, Sequence, overload

import numpy as np

POSITION = np.int64
# A bit of the flags beside core.encoding.TokenFlag's: the token overlaps text that spells a
# special token, which the "refuse" policy refused (shown tokenized as plain text).
REFUSED = 0x40


@dataclass(frozen=True, eq=False)
class TokenColumns:
    """Per token: id, code-point span, UTF-16 span (the editor's units), UTF-8 span of the text,
    flags (core.encoding.TokenFlag bits), colour index, and its bytes (`blob`, end to end, token i's
    at `blob[offsets[i]:offsets[i + 1]]`).

    subtle: the offsets are kept, not each token's length: a view reading one token's bytes (the
    inspector, at every keystroke) would otherwise sum the lengths of all the tokens before it."""

    ids: np.ndarray  # int64
    starts: np.ndarray  # int64, code points
    ends: np.ndarray
    starts16: np.ndarray  # int64, UTF-16 units of the editor's text
    ends16: np.ndarray
    byte_starts: np.ndarray  # int64, UTF-8 bytes of the text
    byte_ends: np.ndarray
    flags: np.ndarray  # uint8
    colours: np.ndarray  # uint8
    offsets: np.ndarray  # int64 [n + 1]: where each token's bytes start in `blob`, and the end
    blob: bytes  # the tokens' bytes end to end

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def empty(cls) -> "TokenColumns":
        z = np.zeros(0, dtype=POSITION)
        u = np.zeros(0, dtype=np.uint8)
        return cls(z, z, z, z, z, z, z, u, u, np.zeros(1, dtype=np.int64), b"")


ARRAYS = tuple(f.name for f in fields(TokenColumns) if f.name != "blob")
# Which shift (code points, UTF-16 units, UTF-8 bytes) moves each positional column.
SHIFTED = {"starts": 0, "ends": 0, "starts16": 1, "ends16": 1, "byte_starts": 2, "byte_ends": 2}
# Positional columns that often hold the numbers of another: in a text without astral characters,
# "\r\n" or soft breaks the UTF-16 positions are the code points, and in an ASCII text the UTF-8
# ones too. Such a column is then the other's array itself (`shared`): sent once over the pipe
# (pickle keeps one copy of an object met twice) and spliced once.
ALIASES = {"starts16": "starts", "ends16": "ends", "byte_starts": "starts", "byte_ends": "ends"}


def shared(columns: TokenColumns) -> TokenColumns:
    """`columns` with each column of ALIASES that equals its base replaced by the base's array.

    >>> z = np.zeros(2, dtype=POSITION)
    >>> c = shared(TokenColumns(z, z, z + 1, z.copy(), z + 1, z + 0, z + 2, z, z, np.zeros(3, dtype=np.int64), b""))
    >>> c.starts16 is c.starts, c.ends16 is c.ends, c.byte_starts is c.starts, c.byte_ends is c.ends
    (True, True, True, False)
    """
    arrays = {name: getattr(columns, name) for name in ARRAYS}
    for name, base in ALIASES.items():
        if arrays[name] is not arrays[base] and np.array_equal(arrays[name], arrays[base]):
            arrays[name] = arrays[base]
    return TokenColumns(**arrays, blob=columns.blob)


def splice(old: TokenColumns, first: int, removed: int, new: TokenColumns,
           shift: tuple[int, int, int]) -> TokenColumns:
    """`old` with its tokens first..first+removed replaced by `new`, and those after moved by
    `shift` (code points, UTF-16 units, UTF-8 bytes).

    >>> a = TokenColumns.empty()
    >>> len(splice(a, 0, 0, a, (0, 0, 0)))
    0
    """
    a, b = int(old.offsets[first]), int(old.offsets[first + removed])  # the replaced tokens' bytes
    arrays = {"offsets": splice_column(old.offsets, first, removed, new.offsets[:-1] + a, len(new.blob) - (b - a))}
    for name in ARRAYS:  # (each base before its aliases)
        if name == "offsets":
            continue
        base = ALIASES.get(name)
        if (base is not None and getattr(old, name) is getattr(old, base) and getattr(new, name) is getattr(new, base)
                and shift[SHIFTED[name]] == shift[SHIFTED[base]]):
            arrays[name] = arrays[base]  # still the same numbers: one array
            continue
        arrays[name] = splice_column(getattr(old, name), first, removed, getattr(new, name),
                                     shift[SHIFTED[name]] if name in SHIFTED else 0)
    blob = memoryview(old.blob)  # (slices of a view: the book's bytes copied once, not twice)
    return TokenColumns(**arrays, blob=b"".join((blob[:a], new.blob, blob[b:])))


def splice_column(column: np.ndarray, first: int, removed: int, new: np.ndarray, shift: int = 0) -> np.ndarray:
    """`column` with entries first..first+removed replaced by `new`, those after plus `shift`:
    one new array, written in place (no temporary as long as the column).

    >>> splice_column(np.array([1, 2, 3, 4]), 1, 2, np.array([9]), 10).tolist()
    [1, 9, 14]
    """
    stop = first + removed
    out = np.empty(len(column) - removed + len(new), dtype=column.dtype)
    out[:first] = column[:first]
    out[first:first + len(new)] = new
    if shift:
        np.add(column[stop:], shift, out=out[first + len(new):], casting="unsafe")
    else:
        out[first + len(new):] = column[stop:]
    return out


class BlobTokenBytes(Sequence[bytes]):
    """Each token's bytes, read from a TokenColumns' blob on demand (an Encoding's token_bytes)."""

    def __init__(self, columns: TokenColumns):
        self._columns = columns
        self._blob = columns.blob
        self._offsets = columns.offsets

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


# --- big answers over the pipe --------------------------------------------------------------

BULK_TOKENS = 200_000  # columns of at least this many tokens travel as raw frames (`send_columns`)


@dataclass(frozen=True)
class ColumnFrames:
    """Stands for a TokenColumns in an answer whose arrays follow it on the pipe, each as one raw
    frame in `names`' order (an alias is not sent again), then the blob."""

    names: tuple[str, ...]  # the arrays sent, in order
    dtypes: tuple[str, ...]
    lengths: tuple[int, ...]
    aliases: tuple[tuple[str, str], ...]  # (column, the column whose array it is)


def frames_of(columns: TokenColumns) -> tuple[ColumnFrames, list[memoryview]]:
    """What stands for `columns` in the answer, and the frames to send after it (views of the
    arrays: nothing is copied; empty ones left out)."""
    names, aliases = [], []
    for name in ARRAYS:
        base = ALIASES.get(name)
        if base is not None and getattr(columns, name) is getattr(columns, base):
            aliases.append((name, base))
        else:
            names.append(name)
    arrays = [np.ascontiguousarray(getattr(columns, n)) for n in names]
    spec = ColumnFrames(tuple(names), tuple(a.dtype.str for a in arrays), tuple(len(a) for a in arrays),
                        tuple(aliases))
    frames = [memoryview(a).cast("B") for a in arrays] + [memoryview(columns.blob)]
    return spec, [f for f in frames if f.nbytes]  # (an empty one is neither sent nor read)


def columns_from_frames(spec: ColumnFrames, read_into) -> TokenColumns:
    """The TokenColumns whose frames `read_into(buffer)` reads, in order, from the pipe.

    >>> z = shared(TokenColumns(*(np.arange(3, dtype=POSITION),) * 7, *(np.zeros(3, dtype=np.uint8),) * 2,
    ...                         np.arange(4, dtype=POSITION), b"abc"))
    >>> spec, frames = frames_of(z)
    >>> queue = [bytes(f) for f in frames]
    >>> def read_into(buffer): memoryview(buffer).cast("B")[:] = queue.pop(0)
    >>> back = columns_from_frames(spec, read_into)
    >>> back.ends16 is back.ends, back.ids.tolist(), back.blob
    (True, [0, 1, 2], b'abc')
    """
    arrays = {}
    for name, dtype, length in zip(spec.names, spec.dtypes, spec.lengths):
        array = np.empty(length, dtype=np.dtype(dtype))
        if length:
            read_into(array)
        arrays[name] = array
    for name, base in spec.aliases:
        arrays[name] = arrays[base]
    blob = bytearray(int(arrays["offsets"][-1]))
    if blob:
        read_into(blob)
    return TokenColumns(**arrays, blob=bytes(blob))
