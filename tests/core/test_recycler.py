"""The incremental encoder's recycled arrays (`core.incremental.recycler`): an array is handed out
again only when nothing else holds it, edits of a book write into the columns of an edit before,
and an Encoding a reader still holds keeps its columns through any number of edits."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tokexplorer.core.incremental.encoder import IncrementalEncoder
from tokexplorer.core.incremental.recycler import KEPT, SMALL, Recycler
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.token_colours import colour_indices, update_colours


def address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(SMALL, SMALL + 3000), st.sampled_from(["int64", "uint8"]), st.booleans()),
                min_size=1, max_size=30))
def test_an_array_in_use_is_never_handed_out(requests):
    """Arrays asked for one after another, some kept (a reader holding them) and some dropped:
    a new one never shares memory with one still held, and is of the size and type asked for."""
    recycler, held = Recycler(), []
    for n, dtype, keep in requests:
        array = recycler.empty(n, dtype)
        assert len(array) == n and array.dtype == np.dtype(dtype)
        assert not any(np.shares_memory(array, other) for other in held)
        array[:] = 7
        if keep:
            held.append(array[1:])  # (a view of it holds it too)


def test_a_dropped_array_is_handed_out_again():
    recycler = Recycler()
    a = recycler.empty(SMALL * 4, np.int64)
    where = address(a)
    view = a[10:]
    del a
    assert address(recycler.empty(SMALL * 4, np.int64)) != where  # its view still holds it
    del view
    assert address(recycler.empty(SMALL * 4 + 5, np.int64)) == where
    assert address(recycler.empty(SMALL * 4, np.uint8)) != where  # another type: another array


def test_the_arrays_kept_free_are_bounded():
    """Sizes that drift beyond what a kept array fits leave at most KEPT free arrays behind."""
    recycler = Recycler()
    tracemalloc.start()
    try:
        for k in range(60):
            recycler.empty(SMALL * (k + 1), np.int64)  # dropped at once; never fits the next
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    largest = sum(SMALL * (k + 1) * 8 for k in range(60 - KEPT - 1, 60))  # the kept ones and the last
    assert held <= largest * 1.05
    recycler.clear()


def test_edits_write_into_the_columns_of_an_edit_before(corpora):
    """A book's edits: after the first two, each edit's ids, bounds and flags are arrays an earlier
    edit made (nothing else holds them), and every state equals a fresh encode."""
    tok = get_builtin("gpt2")
    text = open_book(corpora)
    inc = IncrementalEncoder(tok, text, allowed_special="none")
    made: set[int] = set()
    reused = 0
    for i in range(8):
        at = (i * 7919) % len(inc.text)
        enc, _ = inc.edit(at, 2, "a 👋 b" if i % 2 else "x")
        columns = (enc.id_array, enc.byte_starts, enc.starts, enc.flags)
        if i >= 2:
            reused += sum(address(c) in made for c in columns)
        made.update(address(c) for c in columns)
        del enc, columns
    assert reused >= 5 * 3
    final = inc.encoding
    fresh = tok.encode(final.text, allowed_special="none")
    assert np.array_equal(final.id_array, fresh.id_array) and final.spans == fresh.spans
    assert final.flags.tolist() == fresh.flags.tolist() and final.chunks == fresh.chunks


def test_an_encoding_a_reader_holds_keeps_its_columns_through_edits(corpora):
    """What a query thread does: hold the Encoding of an earlier edit while the document is edited
    on; its columns and chunks are never written over."""
    for name in ("o200k_base", "llama-sp"):
        tok = get_builtin(name)
        inc = IncrementalEncoder(tok, open_book(corpora), allowed_special="none")
        inc.edit(100, 0, "é")
        held = inc.encoding
        copies = [np.array(c) for c in (held.id_array, held.byte_starts, held.byte_ends, held.starts, held.ends,
                                        held.flags)]
        chunks = held.chunk_arrays()
        chunk_copies = None if chunks is None else [np.array(c) for c in chunks]
        for i in range(12):
            inc.edit((i * 104_729) % len(inc.text), i % 3, ["the ", "日本語", "\n", "👋🏽 "][i % 4])
        for column, copy in zip((held.id_array, held.byte_starts, held.byte_ends, held.starts, held.ends,
                                 held.flags), copies):
            assert np.array_equal(column, copy), name
        if chunks is not None:
            assert all(np.array_equal(c, k) for c, k in zip(held.chunk_arrays(), chunk_copies))
        assert held.ids == tok.encode(held.text, allowed_special="none").ids


def test_colours_updated_into_recycled_arrays_equal_a_fresh_colouring():
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 50, size=SMALL * 2)
    recycler = Recycler()
    colours = colour_indices(ids)
    for _ in range(20):
        at = int(rng.integers(0, len(ids)))
        new = np.concatenate([ids[:at], rng.integers(0, 50, size=int(rng.integers(0, 4))), ids[at + 2:]])
        stop = at + len(new) - len(ids) + 2
        colours, lo, hi = update_colours(colours, new, at, max(at, stop), recycler.empty)
        ids = new
        assert np.array_equal(colours, colour_indices(ids))


def open_book(corpora) -> str:
    """A fifth of the book: enough tokens that its columns are recycled."""
    return (corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:200_000]
