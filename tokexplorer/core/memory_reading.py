"""Memory readings (the editing soak's, of the window and of the tokenizing server alike): before
one, collect garbage and hand the C heap's free pages back to the system where glibc can
(`settle_for_reading`); and how much of the C heap is in use (`heap_mb`).

Without it, glibc keeps freed pages and the server's RSS read +136 MB over 300 edits with the
tokens equal (`tokexplorer bench --soak 300`): the readings compared what the allocator kept, not
what the process holds. Only a reading calls this; it tunes nothing the application runs with, and
elsewhere than glibc it only collects.
"""

from __future__ import annotations

import ctypes
import gc


def settle_for_reading() -> None:
    """Collect garbage, then glibc's `malloc_trim(0)` where there is one."""
    gc.collect()
    trim = getattr(_libc(), "malloc_trim", None)
    if trim is not None:
        trim(0)


class _MallInfo2(ctypes.Structure):
    """glibc's `struct mallinfo2` (glibc 2.33+): totals over every arena, in bytes."""

    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                 "fordblks", "keepcost")]


def _libc():
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc (another OS, musl): the figures that need it are left out
        return None


def heap_mb() -> tuple[float, float] | None:
    """(in use, free but kept) of the C heap in MB: every arena's allocations and the chunks glibc
    maps by themselves (large ones); None without glibc 2.33+.

    Qt's, numpy's and the tokenizer libraries' allocations are inside; Python's small objects live
    in Python's own arenas, outside (unless PYTHONMALLOC=malloc puts them on the C heap).
    """
    libc = _libc()
    if libc is None or not hasattr(libc, "mallinfo2"):
        return None
    libc.mallinfo2.restype = _MallInfo2
    info = libc.mallinfo2()
    return (info.uordblks + info.hblkhd) / 1e6, info.fordblks / 1e6
