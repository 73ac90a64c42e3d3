"""The window's end of the tokenizing server, without Qt: takes the server process (started by
`launch`, early or now), sends calls from a thread of its own (a whole text
can be megabytes: the caller never waits for the pipe) and reads answers in another, handing each
to `on_message` there. `on_lost` is called once if the server goes away unasked.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
from typing import Callable

from tokexplorer.server import launch
from tokexplorer.server import protocol as p
from tokexplorer.server.columns import ColumnFrames, columns_from_frames, unframed


class ServerProcess:
    """One server process and the two threads that talk to it."""

    def __init__(self, on_message: Callable[[object], None], on_lost: Callable[[str], None]):
        self._on_message, self._on_lost = on_message, on_lost
        self._conn, self._process = self._launch()
        self._outbox: queue.SimpleQueue = queue.SimpleQueue()
        self._closing = False
        self._lost = False
        self._sender = threading.Thread(target=self._send_loop, daemon=True, name="server-send")
        self._reader = threading.Thread(target=self._read_loop, daemon=True, name="server-read")
        self._sender.start()
        self._reader.start()

    def _launch(self) -> tuple:
        """(this end of the pipe, the server process): the one started early, else a new one."""
        return launch.take_early() or launch.launch()

    @property
    def pid(self) -> int | None:
        return self._process.pid

    @property
    def alive(self) -> bool:
        return not self._lost and self._process.is_alive()

    def send(self, call: p.Call) -> None:
        self._outbox.put(call)

    def kill(self) -> None:
        """End the server at once (tests: a server that dies)."""
        self._process.kill()

    def close(self, timeout: float = 2.0) -> None:
        """Ask the server to stop, wait `timeout` seconds for it, then end it."""
        if self._closing:
            return
        self._closing = True
        self._outbox.put(p.Stop())
        self._sender.join(timeout)
        self._process.join(timeout)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(timeout)
        self._conn.close()

    def _send_loop(self) -> None:
        while True:
            message = self._outbox.get()
            try:
                self._conn.send(message)
            except (OSError, EOFError, ValueError):
                self._gone("the pipe to the tokenizing server broke")
                return
            if isinstance(message, p.Stop):
                return

    def _read_loop(self) -> None:
        while True:
            try:
                message = self._conn.recv()
                if (isinstance(message, p.Answer) and isinstance(message.value, p.TokensChanged)
                        and isinstance(message.value.new, ColumnFrames)):  # its arrays follow
                    columns = columns_from_frames(message.value.new, self._conn.recv_bytes_into)
                    message = p.Answer(message.rid, dataclasses.replace(message.value, new=columns))
                elif isinstance(message, p.Answer):  # (its big arrays follow it: `columns.framed`)
                    value = unframed(message.value, self._conn.recv_bytes_into)
                    if value is not message.value:
                        message = p.Answer(message.rid, value)
            except (OSError, EOFError, ValueError):
                self._gone("the tokenizing server stopped")
                return
            self._on_message(message)

    def _gone(self, why: str) -> None:
        if self._closing or self._lost:
            return
        self._lost = True
        code = self._process.exitcode
        self._on_lost(why if code is None else f"{why} (exit code {code})")

