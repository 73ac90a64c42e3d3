"""Memory the allocator keeps after results are replaced goes back to the system once the window
is idle, in a thread of its own (a trim of a GB heap takes over 100 ms: never on the UI thread)
that ends with it."""

from __future__ import annotations

import threading

from tokexplorer.core.heap_trim import glibc_trim
from tokexplorer.gui.idle_trim import IdleTrim
from tokexplorer.gui.state import AppState


def test_a_trim_follows_a_quiet_spell_after_results_once_and_off_the_ui_thread(qtbot):
    state = AppState()
    threads = []
    IdleTrim(state, idle_ms=200, trim=lambda: threads.append(threading.current_thread()))
    qtbot.wait(400)
    assert threads == []  # no result yet: nothing was freed
    for _ in range(3):  # results in quick succession push the trim back
        state.set_result(None)
        qtbot.wait(50)
    assert threads == []
    qtbot.waitUntil(lambda: len(threads) == 1, timeout=2_000)
    assert threads[0] is not threading.main_thread()
    qtbot.waitUntil(lambda: not threads[0].is_alive(), timeout=2_000)  # the thread count comes back
    qtbot.wait(400)
    assert len(threads) == 1  # once per quiet spell


def test_the_glibc_trim_runs_here():
    trim = glibc_trim()
    assert trim is not None and trim() in (0, 1)  # this machine has glibc
