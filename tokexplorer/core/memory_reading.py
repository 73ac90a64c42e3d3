"""Before a memory reading (the editing soak's, of the window and of the tokenizing server alike):
collect garbage and hand the C heap's free pages back to the system where glibc can.

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
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (macOS, Windows, musl)
        pass
