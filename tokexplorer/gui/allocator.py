"""The window keeps its Python objects in the C heap (PYTHONMALLOC=malloc) on Linux with glibc, so
hours of editing do not leave memory stranded.

Why: Python's own small-object allocator (pymalloc) takes memory in 1 MiB arenas and gives an
arena back only when every object in it is gone. Each result on a book-length text allocates and
frees tens of MB of small objects, while other objects that live on (a cache entry, a Qt
wrapper) land in the same arenas and pin them: the editing soak's RSS climbed for thousands of
edits (+82 MB after 2,000, +92 to +127 MB after 10,000) while the memory in use stayed within
+17 to +34 MB. In glibc's heap the same objects leave free pages that `malloc_trim` (the idle
trim, `idle_trim`) hands back: the same soak read +30 MB after 2,000 edits and +49.1 / +31.8 MB
after 10,000 (`tokexplorer bench --soak`, November 2026), with no change in CPU per keystroke.

On that heap, glibc's fast bins are turned off (`glibc.malloc.mxfast=0`, set with the same
restart): a freed small block waits in a fast bin until a larger request gathers them all in one
pass, and after a tokenizer's file was parsed (a million small objects made and freed) the next
list of a megabyte took 60-65 ms in that pass instead of 1-2 ms, holding the interpreter lock
(a thread loading tekken kept the others waiting for it 112 ms at a time; with the bins off,
46-48 ms).

Python reads PYTHONMALLOC only when it starts, so the window's command line starts the app again
in a fresh interpreter with it set (`os.execve`: the same process, no second one left behind).
Nothing happens where the choice is not ours or brings nothing: PYTHONMALLOC already set (by the
user, or by this restart), a frozen app, another C library or system. It never runs for the
command line's other commands, whose objects live for one run.
"""

from __future__ import annotations

import os
import sys
from typing import Mapping

VARIABLE, VALUE = "PYTHONMALLOC", "malloc"
TUNABLES, NO_FAST_BINS = "GLIBC_TUNABLES", "glibc.malloc.mxfast=0"


def applies(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether a restart would change the allocator here: Linux with glibc, not frozen, and the
    allocator not chosen yet."""
    if VARIABLE in environ or getattr(sys, "frozen", False) or not sys.platform.startswith("linux"):
        return False
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") is not None
    except (ValueError, OSError):  # not glibc (musl has no such name)
        return False


def restart_command() -> tuple[str, list[str], dict[str, str]]:
    """(executable, argv, environment) that start this very command line again with the
    allocator set and its fast bins off (kept as the user set them, if they did); `sys.orig_argv`
    keeps the interpreter's own options (-X, -m ...)."""
    tunables = os.environ.get(TUNABLES, "")
    if "glibc.malloc.mxfast=" not in tunables:
        tunables = f"{tunables}:{NO_FAST_BINS}" if tunables else NO_FAST_BINS
    return sys.executable, [sys.executable, *sys.orig_argv[1:]], {**os.environ, VARIABLE: VALUE, TUNABLES: tunables}


def restart_on_c_heap() -> None:
    """Replace this process by the same command line on the C heap, where that `applies`;
    otherwise return and go on as before. Call it before anything starts (no Qt, no threads)."""
    if not applies():
        return
    executable, argv, env = restart_command()
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(executable, argv, env)
    except OSError:  # the interpreter cannot be started again (removed meanwhile): go on as is
        return
