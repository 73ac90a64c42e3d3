"""glibc's `malloc_trim`: hand the pages the C allocator keeps free back to the system.

A process that builds and frees big results keeps much of the freed memory in glibc's arenas
(retention, not a leak). The window trims when it has been idle a while (`gui/idle_trim`), the
encoding helper after each request on a big text (`encode_host`). Without glibc (macOS,
Windows, musl) there is nothing to call.
"""

from __future__ import annotations

import ctypes
from typing import Callable


def glibc_trim() -> Callable[[], object] | None:
    """glibc's malloc_trim(0) (ctypes lets go of the interpreter lock during the call), or None
    where there is none."""
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    return lambda: trim(0)
