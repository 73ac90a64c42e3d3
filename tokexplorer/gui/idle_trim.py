"""Hand the memory the C allocator keeps back to the system once the window has been idle a while.

Each result on a book-length text is a set of arrays of a few MB, built in worker threads and
freed when the next one replaces it; glibc keeps much of what is freed (in every thread's arena,
below a mapping threshold that rises as big blocks are freed), so the process holds memory nobody
uses. That is retention, not a leak: the heap in use stays flat (`tokexplorer bench --soak`).
Measured on the 1 MB text after a switch through the eight built-ins: `malloc_trim(0)` gives back
127-145 MB of ~800 MB and takes 120-150 ms on two busy cores.

So `IdleTrim` trims when no result has arrived for `IDLE_MS`: in a thread of its own that ends with
the trim, never on the UI thread (ctypes lets go of the interpreter lock during the call), at most
once per quiet spell. (Not in a pool: a pool thread started for it would linger, then expire, and
change the thread count the soak checks.) Without glibc (macOS, Windows, musl) it does nothing.

The window runs Python's objects on the C heap too (`allocator`), so the trim also hands back
the pages they free.

Tried and not taken: MALLOC_ARENA_MAX=2 (fewer per-thread arenas) left the soak's growth as it was
(+136 MB RSS after 1,000 edits, against +129-170 MB without); a fixed 1 MB mmap threshold cut the
kept-free heap from ~500 to ~100 MB but not the soak's RSS growth (+139 MB), and costs page faults
on every big array the worker builds.
"""

from __future__ import annotations

import threading
from typing import Callable

from PySide6.QtCore import QObject, QTimer

from ..core.heap_trim import glibc_trim
from .state import AppState

IDLE_MS = 3_000  # a pause in the work this long, after a result, and the allocator is trimmed


class IdleTrim(QObject):
    """Trims the C heap in a short-lived thread once no result has come for `idle_ms`."""

    def __init__(self, state: AppState, *, idle_ms: int = IDLE_MS, trim: Callable[[], object] | None = None,
                 parent: QObject | None = None):
        super().__init__(parent if parent is not None else state)
        self._trim = trim if trim is not None else glibc_trim()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(idle_ms)
        self._timer.timeout.connect(self._start)
        if self._trim is not None:
            state.tokenized.connect(self._on_result)

    def _on_result(self, _result) -> None:
        self._timer.start()  # every result pushes the trim back

    def _start(self) -> None:
        threading.Thread(target=self._trim, name="tokexplorer-trim", daemon=True).start()
