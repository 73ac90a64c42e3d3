"""Keep what lives as long as the window out of the scans of Python's cyclic garbage collector.

A full collection walks every container object the process holds, with the interpreter lock held,
in whichever thread happens to allocate: in the window that is about 80,000 objects (the modules,
classes and functions of Qt, pyqtgraph and numpy, the views, each loaded tokenizer's tables), and
a collection took 60-137 ms, a stall of the UI wherever it fell (a keystroke, a switch). Objects
that live as long as the window are moved to the permanent generation (`gc.freeze`), which the
collector never walks: once the window is built, and after each tokenizer loads. Garbage is
collected first, so nothing already dead is kept.

What this does not do: collect a cycle among frozen objects that dies later; that waits for
`release`, when the window closes (`gc.unfreeze`: the next full collection walks them again).
"""

from __future__ import annotations

import gc


def keep_long_lived() -> None:
    """Collect what is garbage now, then keep every object alive out of later collections."""
    gc.collect()
    gc.freeze()


def release() -> None:
    """Let the collector walk the objects kept out again (the window that held them closes)."""
    gc.unfreeze()
