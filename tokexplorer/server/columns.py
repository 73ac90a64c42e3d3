"""A document's tokens as columns of arrays, and the deltas that carry them across the process
boundary: `splice` replaces the tokens an edit changed and moves those after it.

The server computes the columns from an Encoding (`server.documents`); the window splices each
answer into the columns it holds and reads its views' values from them. Ids and positions are
int64, as the core's: numpy's searchsorted with a Python int first casts a whole int32 array to
int64 (86 us a call on a book's tokens, not 1.3, and a paint makes hundreds). The tokens' bytes
travel end to end in one bytes object.

Positional columns that tile (each token ends where the next starts: tokens covering the text end
to end) are views of one bounds array of n + 1 entries, starts its first n and ends its last n,
and `offsets` is the byte spans' bounds array itself when their numbers agree (a byte-level
tokenizer's tokens are the text's bytes). For an ASCII book and a byte-level tokenizer one array
then holds all seven, and `splice` copies ids, that array, flags and colours (four int64 columns
before: ids, starts, ends, offsets). The window's apply of a keystroke's answer in a 1 MB book
(cl100k_base, 100 keystrokes, three runs each, load about 2) went from 1.86 to 1.06 ms median;
making and pickling the bounds of a small delta costs the server about 45 us more.

No Qt and no tokenizer here: numbers only.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass, replace
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
        bounds = np.zeros(1, dtype=POSITION)
        starts, ends = bounds[:-1], bounds[1:]
        u = np.zeros(0, dtype=np.uint8)
        return cls(np.zeros(0, dtype=POSITION), starts, ends, starts, ends, starts, ends, u, u.copy(), bounds, b"")

    def __reduce__(self):
        # (pickled as its distinct arrays: a view of another column's array would be a copy)
        return assembled, (*layout(self), self.blob)


ARRAYS = tuple(f.name for f in fields(TokenColumns) if f.name != "blob")
# Which shift (code points, UTF-16 units, UTF-8 bytes) moves each positional column.
SHIFTED = {"starts": 0, "ends": 0, "starts16": 1, "ends16": 1, "byte_starts": 2, "byte_ends": 2}
# The positional columns by pairs, the code points' first.
PAIRS = (("starts", "ends"), ("starts16", "ends16"), ("byte_starts", "byte_ends"))
ENDS = tuple(end for _, end in PAIRS)
# Positional columns that often hold the numbers of another: in a text without astral characters,
# "\r\n" or soft breaks the UTF-16 positions are the code points, and in an ASCII text the UTF-8
# ones too. Such a column is then the other's array itself (`shared`): sent once over the pipe
# and spliced once.
ALIASES = {"starts16": "starts", "ends16": "ends", "byte_starts": "starts", "byte_ends": "ends"}
# How a column is made of the array it is part of (`source`): that array itself, its first n
# entries (a bounds array's starts) or its last n (the ends).
WHOLE, HEAD, TAIL = "whole", "head", "tail"


def shared(columns: TokenColumns) -> TokenColumns:
    """`columns` with each column of ALIASES that equals its base replaced by the base's array,
    each pair of PAIRS that tiles made views of one bounds array, and the offsets replaced by the
    byte spans' bounds array if they are its numbers. Columns shared already are not compared.

    >>> z = np.zeros(2, dtype=POSITION)
    >>> c = shared(TokenColumns(z, z, z + 1, z.copy(), z + 1, z + 0, z + 2, z, z, np.zeros(3, dtype=np.int64), b""))
    >>> c.starts16 is c.starts, c.ends16 is c.ends, c.byte_starts is c.starts, c.byte_ends is c.ends
    (True, True, True, False)

    Spans end to end, in an ASCII text by a byte-level tokenizer: one array for all seven.

    >>> b = np.array([0, 2, 3])
    >>> c = shared(TokenColumns(z, b[:-1], b[1:], b[:-1].copy(), b[1:].copy(), b[:-1] + 0, b[1:] + 0, z, z,
    ...                         b.copy(), b"abc"))
    >>> c.offsets is c.starts.base is c.ends.base, c.starts16 is c.byte_starts is c.starts, c.ends.tolist()
    (True, True, [2, 3])
    """
    arrays = {name: getattr(columns, name) for name in ARRAYS}
    for pair in PAIRS:
        for name in pair:
            base = ALIASES.get(name)
            if base is not None and arrays[name] is not arrays[base] and np.array_equal(arrays[name], arrays[base]):
                arrays[name] = arrays[base]
        arrays[pair[0]], arrays[pair[1]] = tiled(arrays[pair[0]], arrays[pair[1]])
    bounds = bounds_of(arrays["byte_starts"], arrays["byte_ends"])
    if bounds is not None and bounds is not arrays["offsets"] and np.array_equal(bounds, arrays["offsets"]):
        arrays["offsets"] = bounds
    return TokenColumns(**arrays, blob=columns.blob)


def tiled(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`starts` and `ends` as views of one bounds array if each span ends where the next starts
    (copied into one if they are not already); else as they are."""
    if bounds_of(starts, ends) is not None or not np.array_equal(starts[1:], ends[:-1]):
        return starts, ends
    bounds = np.append(starts, ends[-1] if len(ends) else 0)  # (no spans: any one number)
    return bounds[:-1], bounds[1:]


def source(column: np.ndarray, name: str = "") -> tuple[np.ndarray, str]:
    """The array `column` (of ARRAYS' `name`) is part of and which part: a bounds array's first or
    last n entries (HEAD, TAIL) if it is one, else itself (WHOLE).

    subtle: an empty column has no entry to tell its part by: its name tells."""
    base = column.base
    if (isinstance(base, np.ndarray) and base.ndim == 1 and len(base) == len(column) + 1
            and base.dtype == column.dtype and base.strides == column.strides == (column.itemsize,)):
        # (a view of n entries of n + 1 starts at the first or the second; a first entry's is cheaper
        # to compare than its address)
        if not len(column):
            return base, TAIL if name in ENDS else HEAD
        if np.may_share_memory(column[:1], base[:1]):
            return base, HEAD
        if np.may_share_memory(column[-1:], base[-1:]):
            return base, TAIL
    return column, WHOLE


def bounds_of(starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """The bounds array whose first n entries are `starts` and last n `ends`, or None."""
    array, part = source(starts)
    end_array, end_part = source(ends, "ends")
    return array if part == HEAD and end_part == TAIL and end_array is array else None


def part_of(array: np.ndarray, part: str) -> np.ndarray:
    """The column that is `part` of `array` (`source` inverted)."""
    return array if part == WHOLE else array[:-1] if part == HEAD else array[1:]


def splice(old: TokenColumns, first: int, removed: int, new: TokenColumns,
           shift: tuple[int, int, int]) -> TokenColumns:
    """`old` with its tokens first..first+removed replaced by `new`, and those after moved by
    `shift` (code points, UTF-16 units, UTF-8 bytes).

    Columns that are one array in `old`, or parts of one bounds array, and are moved by the same
    shift, stay one array if `new`'s make it whole again (`spliced_together`): it is spliced once.

    >>> a = TokenColumns.empty()
    >>> len(splice(a, 0, 0, a, (0, 0, 0)))
    0
    >>> b = np.array([0, 1, 2])
    >>> new = TokenColumns(b[:-1] + 7, *(b[:-1], b[1:]) * 3, *(np.zeros(2, dtype=np.uint8),) * 2, b, b"ab")
    >>> c = splice(a, 0, 0, new, (2, 2, 2))
    >>> c.starts.tolist(), c.ends.tolist(), c.offsets is c.byte_starts.base is c.ends16.base, c.blob
    ([0, 1], [1, 2], True, b'ab')
    """
    a, b = int(old.offsets[first]), int(old.offsets[first + removed])  # the replaced tokens' bytes
    inserted = {name: getattr(new, name) for name in ARRAYS}
    inserted["offsets"] = new.offsets[:-1] + a
    moved = {name: shift[SHIFTED[name]] if name in SHIFTED else 0 for name in ARRAYS}
    moved["offsets"] = len(new.blob) - (b - a)
    groups: dict[tuple[int, int], tuple[np.ndarray, list]] = {}  # (old array, shift) -> it, its columns and parts
    for name in ARRAYS:
        array, part = source(getattr(old, name), name)
        groups.setdefault((id(array), moved[name]), (array, []))[1].append((name, part))
    arrays: dict[str, np.ndarray] = {}
    for (_, by), (array, group) in groups.items():
        together = spliced_together(array, first, removed, [(inserted[name], part) for name, part in group], by)
        views: dict[str, np.ndarray] = {}  # (one view object per part, as `shared` left them)
        for name, part in group:
            arrays[name] = (splice_column(getattr(old, name), first, removed, inserted[name], by) if together is None
                            else views.setdefault(part, part_of(together, part)))
    blob = memoryview(old.blob)  # (slices of a view: the book's bytes copied once, not twice)
    return TokenColumns(**arrays, blob=b"".join((blob[:a], new.blob, blob[b:])))


def spliced_together(array: np.ndarray, first: int, removed: int, parts: list[tuple[np.ndarray, str]],
                     shift: int) -> np.ndarray | None:
    """`array` spliced once for the columns that are `parts` of it (each one's new entries, and
    which part it is), if its parts are then each column spliced; else None.

    A bounds array's parts are spliced together if the new spans tile (`joins`); a new column
    that is another's numbers is found so in O(len(new)), not by comparing whole columns."""
    heads = [values for values, part in parts if part != TAIL]  # (from the bounds' first entry on)
    tails = [values for values, part in parts if part == TAIL]
    if not heads or not all(same(h, heads[0]) for h in heads) or not all(same(t, tails[0]) for t in tails):
        return None
    if tails and not joins(array, first, first + removed, heads[0], tails[0], shift):
        return None
    return splice_column(array, first, removed, heads[0], shift)


def joins(bounds: np.ndarray, first: int, stop: int, starts: np.ndarray, ends: np.ndarray, shift: int) -> bool:
    """Whether the spans `starts`, `ends` tile the text from bounds[first] to bounds[stop] moved
    by `shift`: put in for the tokens first..stop, they keep `bounds` a bounds array."""
    if not len(starts):
        return bool(bounds[first] == bounds[stop] + shift)
    return bool(starts[0] == bounds[first] and ends[-1] == bounds[stop] + shift
                and (bounds_of(starts, ends) is not None or np.array_equal(starts[1:], ends[:-1])))


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return a is b or np.array_equal(a, b)


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

BULK_TOKENS = 200_000  # columns and arrays of at least this many entries travel as raw frames


def layout(columns: TokenColumns) -> tuple[list[np.ndarray], tuple[tuple[int, str], ...]]:
    """The distinct arrays `columns` are made of (`source`), and for each column of ARRAYS which
    of them it is part of and which part: what is sent or pickled for it."""
    arrays: list[np.ndarray] = []
    parts = []
    for name in ARRAYS:
        array, part = source(getattr(columns, name), name)
        index = next((i for i, a in enumerate(arrays) if a is array), len(arrays))
        if index == len(arrays):
            arrays.append(array)
        parts.append((index, part))
    return arrays, tuple(parts)


def assembled(arrays: list[np.ndarray], parts: tuple[tuple[int, str], ...], blob: bytes) -> TokenColumns:
    """The TokenColumns `layout` took apart: each part of an array one view object, as it was."""
    # (an array unpickled from protocol 5 may not own its memory: its views' base would not be it)
    arrays = [a if a.flags.owndata else a.copy() for a in arrays]
    views: dict[tuple[int, str], np.ndarray] = {}
    columns = [views.setdefault(key, part_of(arrays[key[0]], key[1])) for key in parts]
    return TokenColumns(*columns, blob=blob)


@dataclass(frozen=True)
class ColumnFrames:
    """Stands for a TokenColumns in an answer whose distinct arrays (`layout`) follow it on the
    pipe, each as one raw frame, then the blob."""

    dtypes: tuple[str, ...]  # of the arrays sent, in order
    lengths: tuple[int, ...]
    parts: tuple[tuple[int, str], ...]  # per column of ARRAYS: (the array it is part of, which part)


def frames_of(columns: TokenColumns) -> tuple[ColumnFrames, list[memoryview]]:
    """What stands for `columns` in the answer, and the frames to send after it (views of the
    arrays: nothing is copied; empty ones left out)."""
    arrays, parts = layout(columns)
    arrays = [np.ascontiguousarray(a) for a in arrays]
    spec = ColumnFrames(tuple(a.dtype.str for a in arrays), tuple(len(a) for a in arrays), parts)
    frames = [memoryview(a).cast("B") for a in arrays] + [memoryview(columns.blob)]
    return spec, [f for f in frames if f.nbytes]  # (an empty one is neither sent nor read)


def columns_from_frames(spec: ColumnFrames, read_into) -> TokenColumns:
    """The TokenColumns whose frames `read_into(buffer)` reads, in order, from the pipe.

    >>> b = np.arange(4, dtype=POSITION)
    >>> z = shared(TokenColumns(np.arange(3, dtype=POSITION), *(b[:-1], b[1:]) * 3,
    ...                         *(np.zeros(3, dtype=np.uint8),) * 2, b, b"abc"))
    >>> spec, frames = frames_of(z)
    >>> queue = [bytes(f) for f in frames]
    >>> def read_into(buffer): memoryview(buffer).cast("B")[:] = queue.pop(0)
    >>> back = columns_from_frames(spec, read_into)
    >>> len(frames), back.ends16 is back.ends, back.ends.base is back.offsets, back.ids.tolist(), back.blob
    (4, True, True, [0, 1, 2], b'abc')
    """
    arrays = []
    for dtype, length in zip(spec.dtypes, spec.lengths):
        array = np.empty(length, dtype=np.dtype(dtype))
        if length:
            read_into(array)
        arrays.append(array)
    columns = assembled(arrays, spec.parts, b"")
    blob = bytearray(int(columns.offsets[-1]))
    if blob:
        read_into(blob)
    return replace(columns, blob=bytes(blob))


@dataclass(frozen=True)
class ArrayFrame:
    """Stands for an array field of an answer record (a book's chunk spans), which follows the
    answer on the pipe as one raw frame."""

    dtype: str
    length: int


def framed(value: object) -> tuple[object, list[memoryview]]:
    """`value` (an answer record) with each of its array fields of at least BULK_TOKENS entries
    replaced by an ArrayFrame, and the frames to send after it, in field order (views: nothing is
    copied). subtle: pickled, a book's 266,000 chunks took 6.4 MB of bytes in the server and as
    many in the window besides the arrays themselves, every time the chunk view refreshed.

    >>> value, frames = framed(ArrayFrame("x", 1))  # a record without arrays: as it is
    >>> value, frames
    (ArrayFrame(dtype='x', length=1), [])
    """
    if not is_dataclass(value):
        return value, []
    changes, frames = {}, []
    for f in fields(value):
        array = getattr(value, f.name)
        if isinstance(array, np.ndarray) and array.ndim == 1 and len(array) >= BULK_TOKENS:
            array = np.ascontiguousarray(array)
            changes[f.name] = ArrayFrame(array.dtype.str, len(array))
            frames.append(memoryview(array).cast("B"))
    return (replace(value, **changes) if changes else value), frames


def unframed(value: object, read_into) -> object:
    """`value` with each ArrayFrame field replaced by the array `read_into(buffer)` reads from the
    pipe, in field order (`framed` inverted); `value` itself if it has none."""
    if not is_dataclass(value):
        return value
    changes = {}
    for f in fields(value):
        spec = getattr(value, f.name)
        if isinstance(spec, ArrayFrame):
            array = np.empty(spec.length, dtype=np.dtype(spec.dtype))
            read_into(array)
            changes[f.name] = array
    return replace(value, **changes) if changes else value
