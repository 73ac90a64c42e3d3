"""Token columns as the window holds them: positional columns that tile are views of one bounds
array (and the offsets that array itself), kept so across a splice when the new tokens meet the
kept ones, sent and pickled once with their views rebuilt; any splice equals splicing each column."""

from __future__ import annotations

import pickle

import numpy as np
from hypothesis import given, strategies as st
from multiprocessing.reduction import ForkingPickler

from tokexplorer.core.registry import get_builtin
from tokexplorer.core.token_colours import colour_indices
from tokexplorer.server.columns import (ARRAYS, POSITION, SHIFTED, TokenColumns, columns_from_frames, frames_of,
                                        shared, splice, splice_column)
from tokexplorer.server.documents import token_columns

POSITIONS = tuple(SHIFTED)


def encoded(text: str, name: str = "cl100k_base") -> TokenColumns:
    enc = get_builtin(name).encode(text)
    return token_columns(enc, colour_indices(enc.id_array), np.zeros(0, dtype=np.int64), ())[0]


def assert_one_array(columns: TokenColumns) -> None:
    for name in POSITIONS:
        assert getattr(columns, name).base is columns.offsets, name
    assert columns.starts is columns.starts16 is columns.byte_starts and columns.ends is columns.ends16


def assert_equal(a: TokenColumns, b: TokenColumns) -> None:
    for name in ARRAYS:
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
    assert a.blob == b.blob


def test_an_ascii_texts_columns_are_one_array_and_a_frames_round_trip_keeps_it():
    columns = encoded("Some plain text, end to end. " * 50)
    assert_one_array(columns)
    spec, frames = frames_of(columns)
    assert len(frames) == 5  # ids, the bounds, flags, colours, the blob
    queue = [bytes(f) for f in frames]

    def read_into(buffer):
        memoryview(buffer).cast("B")[:] = queue.pop(0)

    back = columns_from_frames(spec, read_into)
    assert not queue
    assert_one_array(back)
    assert_equal(back, columns)


def test_a_pickled_delta_keeps_its_views():
    """As the pipe pickles a small answer (protocol 4), and protocol 5, whose arrays may not own
    their memory."""
    columns = encoded("Some plain text, end to end. " * 3)
    for data in (bytes(ForkingPickler.dumps(columns)), pickle.dumps(columns, protocol=5)):
        back = pickle.loads(data)
        assert_one_array(back)
        assert_equal(back, columns)
    assert len(pickle.dumps(columns)) < len(pickle.dumps([getattr(columns, n) for n in ARRAYS]))


def bounded(lengths: list[int], start: int) -> np.ndarray:
    return np.cumsum([start, *lengths]).astype(POSITION)


@st.composite
def splices(draw):
    """Old columns that share as an ASCII text's do, and a delta whose tokens meet the kept ones
    (tile from where token `first` started, end where token first+removed starts after the
    shift, UTF-8 positions the code points, shifts alike) or miss them; and whether they meet."""
    lengths = draw(st.lists(st.integers(1, 3), max_size=8))
    bounds = bounded(lengths, 0)
    n = len(lengths)
    old = shared(TokenColumns(np.arange(n, dtype=POSITION), *(bounds[:-1], bounds[1:]) * 3,
                              np.zeros(n, dtype=np.uint8), np.ones(n, dtype=np.uint8), bounds.copy(),
                              b"x" * int(bounds[-1])))
    first = draw(st.integers(0, n))
    removed = draw(st.integers(0, n - first))
    new_lengths = draw(st.lists(st.integers(0, 3), max_size=4))
    k = len(new_lengths)
    start_off, end_off, byte_off = (draw(st.sampled_from([0, 0, 0, 1])) for _ in range(3))
    new_bounds = bounded(new_lengths, int(bounds[first]) + start_off)
    starts, ends = new_bounds[:-1], new_bounds[1:] + end_off
    new = shared(TokenColumns(np.arange(k, dtype=POSITION) + 100, starts, ends, starts.copy(), ends.copy(),
                              starts + byte_off, ends.copy(), np.ones(k, dtype=np.uint8), np.zeros(k, dtype=np.uint8),
                              bounded(new_lengths, 0), b"y" * sum(new_lengths)))
    s = int(new_bounds[-1]) + end_off - int(bounds[first + removed])  # (the shift that meets the kept tokens)
    shift = draw(st.sampled_from([(s, s, s), (s, s, s + 1), (s + 1, s, s)]))
    meets = start_off == end_off == byte_off == 0 and shift == (s, s, s)
    return old, first, removed, new, shift, meets


@given(splices())
def test_a_splice_equals_each_column_spliced(case):
    """Shared or not, the spliced columns are the columns spliced one by one; the bounds array
    stays one when the new tokens meet the old ones, and shifts that differ part it."""
    old, first, removed, new, shift, meets = case
    got = splice(old, first, removed, new, shift)
    a, b = int(old.offsets[first]), int(old.offsets[first + removed])
    for name in ARRAYS:
        values = getattr(new, name)
        by = shift[SHIFTED[name]] if name in SHIFTED else 0
        if name == "offsets":
            values, by = new.offsets[:-1] + a, len(new.blob) - (b - a)
        want = splice_column(getattr(old, name), first, removed, values, by)
        assert getattr(got, name).tolist() == want.tolist(), name
    assert got.blob == old.blob[:a] + new.blob + old.blob[b:]
    if meets:
        assert_one_array(got)
    if shift[0] != shift[1]:
        assert not np.shares_memory(got.starts, got.starts16)


def test_a_books_chunk_spans_cross_a_pipe_as_frames_and_arrive_equal():
    """An answer's big arrays follow it as raw frames (no pickled copy), a small one's are
    pickled as before; what the window reads equals what was sent, dtypes included."""
    import threading
    from multiprocessing import Pipe

    from tokexplorer.server.columns import BULK_TOKENS, ArrayFrame, framed, unframed
    from tokexplorer.server.protocol import Answer, ChunkSpans

    n = BULK_TOKENS + 5
    bounds = np.cumsum(np.arange(n + 1, dtype=np.int64) % 7)
    big = ChunkSpans(bounds[:-1], bounds[1:], np.arange(n, dtype=np.int64) % 5 - 1, ("a", "b"), "p",
                     np.arange(n) % 3 == 0, "gpt2")
    small = ChunkSpans(bounds[:3], bounds[1:4], np.zeros(3, dtype=np.int64), (), "", None, None)
    here, there = Pipe()
    for value in (big, small):
        spec, frames = framed(value)
        assert (len(frames), isinstance(spec.starts, ArrayFrame)) == ((4, True) if value is big else (0, False))

        def send(spec=spec, frames=frames):
            there.send(Answer(1, spec))
            for frame in frames:
                there.send_bytes(frame)

        sender = threading.Thread(target=send)
        sender.start()
        got = unframed(here.recv().value, here.recv_bytes_into)
        sender.join()
        for name in ("starts", "ends", "alternatives", "differs"):
            a, b = getattr(got, name), getattr(value, name)
            assert (a is None and b is None) or (a.dtype == b.dtype and np.array_equal(a, b)), name
        assert (got.names, got.pattern, got.compare) == (value.names, value.pattern, value.compare)
