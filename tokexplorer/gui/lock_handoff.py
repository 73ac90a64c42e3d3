"""How soon the window's thread gets the interpreter lock back from busy background threads.

subtle: the window's thread lets go of the lock at every call into Qt and needs it again at every
call back into Python (a paint, a slot, a model's data). While a background thread runs Python
code (a tokenizer loading, a panel reading a vocabulary, the worker catching up on edits), the
window's thread waits for it to hand the lock over, which Python asks of it only after the switch
interval: 5 ms by default, paid at each of the dozens of such calls one event takes. After typing
60 keys into the 1 MB book, switching to o200k_base stalled the window for 16-97 ms (three runs);
with a 1 ms interval, 14-21 ms, and the switch took as long as before (0.9 s).

What it does not do: make a background thread's single long call into C (which holds the lock
throughout) any shorter; those are kept short where they are made.
"""

from __future__ import annotations

import sys

INTERVAL_S = 0.001

_windows = 0  # windows open
_default = 0.005  # Python's interval before the first window opened


def favour_the_window() -> None:
    """A window opens: hand the interpreter lock over every INTERVAL_S while one is open."""
    global _windows, _default
    if _windows == 0:
        _default = sys.getswitchinterval()
        sys.setswitchinterval(INTERVAL_S)
    _windows += 1


def release() -> None:
    """A window closes: back to Python's own interval once none is open."""
    global _windows
    if _windows:
        _windows -= 1
        if _windows == 0:
            sys.setswitchinterval(_default)
