"""Start the tokenizing server's process, early if asked: the window's start imports Qt and its
views for most of a second, and a server started first imports its own modules meanwhile, on
another core (`start_early`, called by the window before it imports Qt).

This module imports only `multiprocessing`, so that calling it costs no more than the process's
launch; `client.ServerProcess` takes the early process (`take_early`), or launches one.
"""

from __future__ import annotations

import multiprocessing

_early: tuple | None = None  # (this end of the pipe, the started process), not yet taken


def launch() -> tuple:
    """Start a server process (the `spawn` method: the same on Linux, macOS and Windows) on a
    new pipe; (this end of the pipe, the started process)."""
    conn, child = multiprocessing.Pipe()  # subtle: a pipe, not a listening socket: nothing connects
    ctx = multiprocessing.get_context("spawn")
    process = ctx.Process(target=serve, args=(child,), daemon=True, name="tokexplorer-server")
    process.start()
    child.close()  # the server holds it now: EOF here means it has gone
    return conn, process


def start_early() -> None:
    """Launch the server now, for the first `take_early` (a second call does nothing)."""
    global _early
    if _early is None:
        _early = launch()


def take_early() -> tuple | None:
    """The process `start_early` launched, once; None if there is none (or it has died)."""
    global _early
    early, _early = _early, None
    if early is not None and not early[1].is_alive():
        early[0].close()
        return None
    return early


def serve(conn) -> None:
    """The server process's entry point. subtle: the server's modules (and the tokenizer libraries
    they load) are imported here, in the child: the window imports only the client."""
    from tokexplorer.server.process import serve

    serve(conn)
