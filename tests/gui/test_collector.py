"""The window keeps what lives as long as it does out of the garbage collector's walks
(gui/collector.py): after it is built and after each tokenizer it loads, and lets them go when it
closes; what was already garbage is collected, not kept."""

from __future__ import annotations

import base64
import gc
import weakref

from tokexplorer.gui import collector


class _Node:
    pass


def test_garbage_is_collected_before_the_rest_is_kept():
    cycle = _Node()
    cycle.me = cycle
    dead = weakref.ref(cycle)
    alive = _Node()
    alive.me = alive
    del cycle
    try:
        collector.keep_long_lived()
        assert dead() is None
        assert gc.get_freeze_count() > 0
        assert all(o is not alive for o in gc.get_objects())  # kept out of the walks
    finally:
        collector.release()
    assert gc.get_freeze_count() == 0
    assert any(o is alive for o in gc.get_objects())


def test_the_window_and_each_tokenizer_it_loads_are_kept_out(make_window, tmp_path):
    gc.unfreeze()
    window = make_window()
    assert gc.get_freeze_count() > 0  # the window once built
    gc.unfreeze()
    path = tmp_path / "mine.tiktoken"
    path.write_bytes(b"".join(base64.b64encode(bytes([i])) + b" %d\n" % i for i in range(256)))
    name = window.state.catalog.add_file(path)
    assert gc.get_freeze_count() == 0
    tok = window.state.catalog.get(name)  # loads it
    assert gc.get_freeze_count() > 0
    assert all(o is not tok for o in gc.get_objects())
    window.close()
    assert gc.get_freeze_count() == 0  # the window closed: nothing is kept out any more
