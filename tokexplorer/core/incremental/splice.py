"""Splicing: the new Encoding of an edited text from the old one and the tokens of a re-encoded
window, in numpy (old tokens before the window, the window's, old tokens after it shifted), and
the code-point range whose tokens changed.

Every locality rule ends here. It does not choose windows nor encode anything: the rules do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from tokexplorer.core.encoding import Encoding, LazyTokenBytes, TokenIds
from tokexplorer.core.incremental.recycler import Recycler
from tokexplorer.core.incremental.state import Changed


@dataclass
class Window:
    """The new tokens of a re-encoded window [start, end) of the new text (offsets absolute)."""

    start: int
    end: int
    ids: list[int] | TokenIds
    token_bytes: Sequence[bytes]
    byte_starts: np.ndarray
    byte_ends: np.ndarray
    special_mask: np.ndarray | None
    byte_fallback_mask: np.ndarray | None


def splice(
    enc: Encoding, t0: int, t1: int, win: Window, new_text: str, byte_start: int, byte_delta: int,
    edit: tuple[int, int], bytes_of: Callable[[list[int]], list[bytes]], chunk_spans=None,
    recycler: Recycler | None = None,
) -> tuple[Encoding, Changed]:
    """The new Encoding: old tokens [0, t0), the window's, old tokens [t1, n) shifted; and the
    code-point range whose tokens changed.

    `byte_start` is where the window starts in the text's UTF-8 (the same in old and new text);
    `edit` is (start, end of the inserted text) in code points of the new text; the new columns
    are `recycler`'s arrays, if one is given.
    """
    empty = np.empty if recycler is None else recycler.empty
    delta = len(new_text) - len(enc.text)
    # The window's own Encoding gives its spans and flags: it starts and ends on character
    # boundaries, so they are the whole text's, shifted by the window start.
    local = Encoding(
        new_text[win.start : win.end], win.ids, win.token_bytes,
        win.byte_starts - byte_start, win.byte_ends - byte_start,
        win.special_mask, win.byte_fallback_mask,
    )
    mid_end = t0 + len(win.ids)
    n_tokens = len(enc.ids) - (t1 - t0) + len(win.ids)

    def join(old: np.ndarray, mid: np.ndarray, shift: int = 0) -> np.ndarray:
        out = empty(n_tokens, dtype=old.dtype)
        out[:t0], out[t0:mid_end] = old[:t0], mid
        if shift:
            np.add(old[t1:], shift, out=out[mid_end:])
        else:
            out[mid_end:] = old[t1:]
        return out

    def join_mask(old: np.ndarray | None, mid: np.ndarray | None) -> np.ndarray | None:
        # The policy is fixed, so an old mask is None only where the new one is, or (byte
        # fallback) where the old text had no tokens: then the window is everything.
        if mid is None:
            return None
        return mid if old is None else join(old, mid)

    # subtle: each conversion of a window's list of ids takes time (25 ms for the half a million
    # tokens of a line of a million letters): convert once.
    mid_ids = win.ids.array if isinstance(win.ids, TokenIds) else np.asarray(win.ids, dtype=np.int64)
    id_array = join(enc.id_array, mid_ids)
    ids = TokenIds(id_array)
    bounds = kept_bounds(enc.byte_bounds, t0, t1, win.byte_starts, win.byte_ends,
                          byte_start, byte_delta)
    if bounds is not None:  # one array for both ends
        bounds = spliced(bounds, t0, t1, win.byte_starts, byte_delta, recycler)
        byte_starts, byte_ends = bounds[:-1], bounds[1:]
    else:
        byte_starts = join(enc.byte_starts, win.byte_starts, byte_delta)
        byte_ends = join(enc.byte_ends, win.byte_ends, byte_delta)
    char_bounds = None  # the code-point spans as views of one array, as the byte bounds are
    if enc.starts is enc.byte_starts and new_text.isascii() and (not n_tokens or byte_starts[-1] < len(new_text)):
        starts, ends = byte_starts, byte_ends  # as Encoding finds them for ASCII text: no copies
    else:
        mid_starts, mid_ends = local.starts + win.start, local.ends + win.start
        char_bounds = kept_bounds(enc.span_bounds, t0, t1, mid_starts, mid_ends, win.start, delta)
        if char_bounds is not None:
            char_bounds = spliced(char_bounds, t0, t1, mid_starts, delta, recycler)
            starts, ends = char_bounds[:-1], char_bounds[1:]
        else:
            starts, ends = join(enc.starts, mid_starts, delta), join(enc.ends, mid_ends, delta)
    new = Encoding.from_parts(
        new_text, ids, LazyTokenBytes(ids, bytes_of), byte_starts, byte_ends,
        special_mask=join_mask(enc.special_mask, win.special_mask),
        byte_fallback_mask=join_mask(enc.byte_fallback_mask, win.byte_fallback_mask) if n_tokens else None,
        starts=starts, ends=ends,
        flags=join(enc.flags, local.flags),
        n_bytes=enc.n_bytes + byte_delta,
        chunk_spans=chunk_spans,
        id_array=id_array,
        byte_bounds=bounds,
        char_bounds=char_bounds,
    )
    edit_start = byte_start + len(new_text[win.start : edit[0]].encode("utf-8"))
    edit_end = edit_start + len(new_text[edit[0] : edit[1]].encode("utf-8"))
    i, j = differing(
        enc.id_array[t0:t1], enc.byte_starts[t0:t1], enc.byte_ends[t0:t1],
        mid_ids, win.byte_starts, win.byte_ends, (edit_start, edit_end, byte_delta),
    )
    return new, changed_range(new, i + t0, j + t0, *edit)


def kept_bounds(bounds: np.ndarray | None, t0: int, t1: int, starts: np.ndarray, ends: np.ndarray,
                 start: int, delta: int) -> np.ndarray | None:
    """`bounds` (an Encoding's spans as views of one array: `Encoding.from_parts`), if the window's
    token spans `starts`, `ends`, from `start` on, tile the text from where token t0 started to
    where token t1 starts after the edit (`delta` later); else None."""
    if bounds is None:
        return None
    if not len(starts):
        return bounds if int(bounds[t0]) == int(bounds[t1]) + delta else None
    if int(bounds[t0]) != start or int(starts[0]) != start or int(ends[-1]) != int(bounds[t1]) + delta:
        return None
    return bounds if np.array_equal(starts[1:], ends[:-1]) else None


def spliced(old: np.ndarray, i: int, j: int, mid: np.ndarray, shift: int,
            recycler: Recycler | None = None) -> np.ndarray:
    """old[:i], then mid, then old[j:] + shift, written once into a new array (concatenating
    a shifted copy would write the tail twice), `recycler`'s if one is given."""
    n = i + len(mid) + len(old) - j
    out = np.empty(n, dtype=old.dtype) if recycler is None else recycler.empty(n, old.dtype)
    out[:i], out[i : i + len(mid)] = old[:i], mid
    np.add(old[j:], shift, out=out[i + len(mid) :])
    return out


def differing(
    old_ids, old_starts, old_ends, new_ids, new_starts, new_ends, edit: tuple[int, int, int]
) -> tuple[int, int]:
    """[i, j): the new tokens left after removing the common prefix (same id and place, wholly
    before the edit) and the common suffix (same id, place shifted, wholly after the edit).

    `edit` is (where the edit starts, where the inserted text ends, the length change), in bytes
    of the new text. subtle: a token of the same id at the shifted place can still be new (delete
    "<s>3" from "3<s>31": "31" now starts at the first "3"), hence "wholly before / after".
    """
    edit_start, edit_end, byte_delta = edit
    old_ids, new_ids = np.asarray(old_ids, dtype=np.int64), np.asarray(new_ids, dtype=np.int64)
    n = min(len(old_ids), len(new_ids))
    same = (old_ids[:n] == new_ids[:n]) & (old_starts[:n] == new_starts[:n])
    # subtle: compare ends too: a normalising tokenizer's token covers text of its own length
    # (Qwen's "0" covered "0\u0340" until the U+0340 was deleted), so the same id at the same
    # start can end elsewhere.
    same &= (old_ends[:n] == new_ends[:n]) & (new_ends[:n] <= edit_start)
    i = n if same.all() else int(np.argmin(same))
    m = n - i  # the suffix may not overlap the prefix
    tail_o, tail_n = slice(len(old_ids) - m, len(old_ids)), slice(len(new_ids) - m, len(new_ids))
    same = (old_ids[tail_o] == new_ids[tail_n]) & (old_ends[tail_o] + byte_delta == new_ends[tail_n])
    # subtle: compare starts too: SentencePiece's dummy-prefix space makes a token's byte span
    # shorter than its bytes, so the same id can end at the same place and start elsewhere.
    same &= (old_starts[tail_o] + byte_delta == new_starts[tail_n]) & (new_starts[tail_n] >= edit_end)
    same = same[::-1]
    k = m if same.all() else int(np.argmin(same))
    return i, len(new_ids) - k


def changed_range(enc: Encoding, first: int, last: int, edit_start: int, edit_end: int) -> Changed:
    """Code points covered by tokens [first, last) of `enc`, and by the inserted text."""
    if first >= last:
        return edit_start, edit_end
    return min(edit_start, int(enc.starts[first])), max(edit_end, int(enc.ends[last - 1]))


def changed_tokens(old: Encoding, new: Encoding, edit_start: int, edit_end: int) -> Changed:
    """The changed range after a full re-encode, from the common prefix and suffix of the tokens."""
    byte_start = len(new.text[:edit_start].encode("utf-8"))
    byte_end = byte_start + len(new.text[edit_start:edit_end].encode("utf-8"))
    i, j = differing(
        old.ids, old.byte_starts, old.byte_ends, new.ids, new.byte_starts, new.byte_ends,
        (byte_start, byte_end, new.n_bytes - old.n_bytes),
    )
    return changed_range(new, i, j, edit_start, edit_end)
