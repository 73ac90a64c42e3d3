"""What every child process the window starts does first: end when the window's process ends.

Used by the training child (`core/training/child`); it starts nothing itself.
"""

from __future__ import annotations


def exit_with_parent() -> None:
    """End this process as soon as the process that started it ends: a window that crashes or is
    killed cannot stop its children, which would otherwise run on, orphans, until they next write
    to a pipe (minutes, while training on a big corpus) or for ever (a helper waiting for work)."""
    import multiprocessing
    import os
    import threading

    parent = multiprocessing.parent_process()
    if parent is None:  # not started by multiprocessing (a test calling a child's main directly)
        return

    def watch() -> None:
        parent.join()  # returns when the parent's end of a pipe closes: the parent has gone
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="exit-with-parent").start()
