"""An answer read while the UI thread deletes the link that asked for it: the reading thread must
not touch the link's Qt object (emitting a signal on an object being destroyed in another thread
crashed an xdist worker once), and the answer is dropped, not delivered to a dead window."""

from __future__ import annotations

import threading

import shiboken6

from tokexplorer.gui.services import server_link
from tokexplorer.server import protocol as p


def _register(link: server_link.ServerLink, rid: int, results: list) -> None:
    """Make `rid` a request of `link` waiting for its answer, as `ask` does."""
    with server_link._server.lock:
        server_link._server.owners[rid] = link
    with link._lock:
        link._waiting[rid] = (results.append, None, None, None)


def test_answers_racing_the_deletion_of_their_link_are_dropped_and_others_delivered(qtbot):
    rids = iter(range(10**9, 10**9 + 100_000))
    kept = server_link.ServerLink()
    kept_results: list = []
    for _ in range(300):
        doomed, doomed_results = server_link.ServerLink(), []
        late = [next(rids) for _ in range(20)]
        for rid in late:
            _register(doomed, rid, doomed_results)
        kept_rid = next(rids)
        _register(kept, kept_rid, kept_results)
        go = threading.Event()

        def read() -> None:  # what the reading thread does with answers off the pipe
            go.wait()
            for rid in late:
                server_link._server.on_message(p.Answer(rid, "late"))
            server_link._server.on_message(p.Answer(kept_rid, kept_rid))

        reader = threading.Thread(target=read)
        reader.start()
        go.set()
        shiboken6.delete(doomed)  # the window goes, in the UI thread, as the answer is read
        reader.join()
        qtbot.waitUntil(lambda: kept_rid in kept_results, timeout=5000)
        assert doomed_results == []
    assert len(kept_results) == 300
    assert not [r for r, owner in server_link._server.owners.items() if owner is kept]
