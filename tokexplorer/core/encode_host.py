"""tiktoken's, `tokenizers`' and SentencePiece's encoders in a helper process, so that building
one, or the list of ids it answers with, never stops the window.

subtle: tiktoken builds its core (`CoreBPE`) from the ranks holding the interpreter lock, 50-190 ms
for the built-in vocabularies (o200k_base about 130 ms), and `tokenizers` builds a Tokenizer from
its JSON the same way (DeepSeek's about 270 ms). No other thread of the process runs meanwhile:
the window cannot even repaint. So the window starts one helper process (`start`), and every
tiktoken or Hugging Face tokenizer made while it runs encodes there: the window's process keeps
what the views read (token bytes, spans, merge trees, the vocabulary), the helper builds the
library's object and sends ids back. Without a helper (the command line, tests, a benchmark's
peers) tokenizers encode in process, as before.

Protocol: a few pipes made at the start (`CONNECTIONS`), each used by one calling thread at a
time and served by a thread of its own in the helper (tiktoken lets go of the interpreter lock
while it encodes, so encodes run side by side there too). A request is a tuple; its answer
("ok", value) or ("error", message):
- ("load", key, "tiktoken", name, packed ranks, pattern, specials, source): remember a tiktoken
  tokenizer (see `tiktoken_backend.LocalEngine.unpacked`); its core is built at first use;
  ("load", key, "tokenizers", the tokenizer.json's UTF-8 (uint8 array), config, source): the same for a Hugging
  Face one (`tokenizers_backend.LibraryEngine`); ("load", key, "sentencepiece", the model's
  serialized proto): a SentencePiece model (`sentencepiece_backend.SentencePieceEngine`);
- tiktoken: ("encode", key, text, allowed): ids as a list; ("array", key, text, allowed): a uint32
  array; ("chunks", key, pieces): each piece's ids as tiktoken's per-chunk BPE makes them;
- tokenizers: ("info", key): its added tokens and pipeline; ("runs", key, texts, special_as_text,
  offsets): each text's ids, words (and offsets) as arrays; ("decode", key, ids): text;
- sentencepiece: ("ids", key, text): the ids of a text with no special tokens, an int32 array;
- ("drop", None, keys): forget tokenizers the window no longer holds.
If the helper cannot be reached (it died, or did not start) a tokenizer encodes in process from
then on (`HostLost`), building its core there.

SentencePiece builds its processor without holding the lock, but answers with a list: a book's
300,000 ids are made, turned into an array and freed holding it (the window's back switch to
llama-sp stalled 40-80 ms in those steps). In the helper, the window receives the array only.
Its incremental windows (a few hundred characters) still encode in process (`incremental`).
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import sys
import threading
import traceback
import weakref
from multiprocessing.connection import Connection
from typing import Callable

from .tokenizer import TokexplorerError

log = logging.getLogger(__name__)

# Requests in flight at once (the editor's worker, four compare panes, a panel's job); a further
# thread waits for a free pipe.
CONNECTIONS = 6


class HostLost(Exception):
    """The helper process cannot be reached."""


class EncodeHost:
    """The window's side of the helper process: starts it, and sends it requests."""

    def __init__(self):
        ctx = multiprocessing.get_context("spawn")
        # subtle: pipes, not a listening socket: nothing here ever connects to anything
        pipes = [ctx.Pipe() for _ in range(CONNECTIONS)]
        self._process = ctx.Process(target=serve, args=([child for _, child in pipes],), daemon=True,
                                    name="tokexplorer-encoder")
        self._process.start()
        for _, child in pipes:
            child.close()  # the helper holds them now: EOF here means it has gone
        self._idle = [parent for parent, _ in pipes]
        self._free = threading.Condition()
        self._keys = itertools.count()
        self._dropped: list[int] = []
        self.lost = False

    @property
    def pid(self) -> int | None:
        return self._process.pid

    def peak_mb(self) -> float | None:
        """The helper's peak resident memory in MB, where the system tells (Linux's /proc)."""
        try:
            with open(f"/proc/{self._process.pid}/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024
        except (OSError, ValueError):
            pass
        return None

    def engine(self, spec: tuple, local: Callable[[], object]) -> "HostedEngine":
        """An engine for a tokenizer given as its family and its engine's arguments (see "load"
        above); `local()` makes its in-process engine, used if the helper is lost."""
        return HostedEngine(self, spec, local)

    def request(self, message: tuple):
        """Send one request and return its answer's value; raise HostLost, or TokexplorerError
        with the helper's message."""
        conn = self._connection()
        try:
            dropped = []
            while self._dropped:  # list.pop is atomic: a finalizer may append meanwhile
                dropped.append(self._dropped.pop())
            if dropped:
                conn.send(("drop", None, dropped))
                conn.recv()
            conn.send(message)
            kind, value = conn.recv()
        except (OSError, EOFError) as exc:
            conn.close()
            self._lose(exc)
            raise HostLost from exc
        except BaseException:  # interrupted between send and receive: the pipe is out of step
            conn.close()
            self._lose("a request was interrupted")
            raise
        with self._free:
            self._idle.append(conn)
            self._free.notify()
        if kind == "error":
            raise TokexplorerError(value)
        return value

    def new_key(self) -> int:
        return next(self._keys)

    def forget(self, key: int) -> None:
        """A tokenizer is gone: the helper forgets it with the next request (safe from a finalizer)."""
        self._dropped.append(key)

    def close(self) -> None:
        """End the helper (the window is closing)."""
        self._lose(None)
        with self._free:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
        if self._process.is_alive():
            self._process.kill()
        self._process.join(5)

    def _connection(self) -> Connection:
        with self._free:
            while not self._idle and not self.lost:
                self._free.wait()
            if self.lost:
                raise HostLost
            return self._idle.pop()

    def _lose(self, reason) -> None:
        with self._free:
            if not self.lost and reason is not None:
                log.warning("the encoding helper was lost (%s); tokenizers now encode in this process", reason)
            self.lost = True
            self._free.notify_all()


class HostedEngine:
    """One tokenizer's encodes, run in the helper; in process once the helper is lost.

    The calls of the in-process engine it stands for: `tiktoken_backend.LocalEngine`'s (encode,
    array, chunks), `tokenizers_backend.LibraryEngine`'s (info, runs, decode) or
    `sentencepiece_backend.SentencePieceEngine`'s (ids)."""

    def __init__(self, host: EncodeHost, spec: tuple, local: Callable[[], object]):
        self._host = host
        self._spec = spec  # the family and its engine's arguments, sent once
        self._make_local = local
        self._local = None
        self._key: int | None = None
        self._lock = threading.Lock()

    @property
    def hosted(self) -> bool:
        """Whether encodes still go to the helper."""
        return self._local is None

    def encode(self, text: str, allowed: set[str]) -> list[int]:
        return self._call("encode", text, allowed)

    def array(self, text: str, allowed: set[str]):
        return self._call("array", text, allowed)

    def chunks(self, pieces: list[str]) -> list[list[int]]:
        return self._call("chunks", pieces)

    def info(self):
        return self._call("info")

    def runs(self, texts: list[str], special_as_text: bool, offsets: bool):
        return self._call("runs", texts, special_as_text, offsets)

    def decode(self, ids: list[int]) -> str:
        return self._call("decode", ids)

    def ids(self, text: str):
        return self._call("ids", text)

    def _call(self, kind: str, *args):
        if self._local is None:
            try:
                return self._host.request((kind, self._loaded(), *args))
            except HostLost:
                with self._lock:
                    if self._local is None:
                        self._local = self._make_local()
        return getattr(self._local, kind)(*args)

    def _loaded(self) -> int:
        """The tokenizer's key in the helper, sending it there the first time."""
        if self._key is None:
            with self._lock:
                if self._key is None:
                    key = self._host.new_key()
                    self._host.request(("load", key, *self._spec))
                    self._spec = ()  # sent (a tokenizer.json's text is megabytes)
                    weakref.finalize(self, self._host.forget, key)
                    self._key = key
        return self._key


_current: EncodeHost | None = None


def start() -> EncodeHost:
    """Start the helper (once); tiktoken tokenizers encode there from their next encode on."""
    global _current
    if _current is None or _current.lost:
        _current = EncodeHost()
    return _current


def current() -> EncodeHost | None:
    """The running helper, or None: encode in process."""
    return _current if _current is not None and not _current.lost else None


def stop() -> None:
    """End the helper; tokenizers that used it encode in process from then on."""
    global _current
    host, _current = _current, None
    if host is not None:
        host.close()


# --- the helper's side ----------------------------------------------------------------------------


def serve(connections: list[Connection]) -> None:
    """The helper's entry point: answer each pipe in a thread of its own, until all are closed."""
    import signal

    from .child_process import exit_with_parent

    exit_with_parent()
    # Ctrl-C in the terminal reaches the whole process group; the window asks before it closes
    # (and may stay open), so the helper leaves it to the window and ends with it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    table = _Table()
    threads = [threading.Thread(target=_answer, args=(conn, table), daemon=True) for conn in connections]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


class _Table:
    """The tokenizers the window sent: their specs, and their engines once built."""

    def __init__(self):
        self._specs: dict[int, tuple] = {}
        self._engines: dict[int, object] = {}
        self._lock = threading.Lock()
        self._building: dict[int, threading.Lock] = {}

    def handle(self, message: tuple):
        kind, key, *args = message
        if kind == "load":
            with self._lock:
                self._specs[key] = tuple(args)
                self._building[key] = threading.Lock()
            return None
        if kind == "drop":
            with self._lock:
                for k in args[0]:
                    self._specs.pop(k, None)
                    self._engines.pop(k, None)
                    self._building.pop(k, None)
            return None
        return getattr(self._engine(key), kind)(*args)

    def _engine(self, key: int):
        engine = self._engines.get(key)
        if engine is None:
            with self._lock:
                building = self._building.get(key)
            if building is None:
                raise TokexplorerError(f"the encoding helper has no tokenizer {key}")
            with building:  # one build per tokenizer; other threads wait for it
                engine = self._engines.get(key)
                if engine is None:
                    engine = _build(*self._specs[key])
                    with self._lock:
                        if key in self._specs:
                            self._engines[key] = engine
                            self._specs[key] = ()  # built: its arguments are no longer needed
        return engine


def _build(family: str, *args):
    """A tokenizer's engine in the helper, from the arguments the window sent."""
    if family == "tiktoken":
        from .tiktoken_backend import LocalEngine

        return LocalEngine.unpacked(*args)
    if family == "sentencepiece":
        from .sentencepiece_backend import SentencePieceEngine

        return SentencePieceEngine.from_proto(*args)
    from .tokenizers_backend import LibraryEngine

    utf8, config, source = args  # the file's UTF-8 as a uint8 array (`encoding.utf8_array`)
    return LibraryEngine(utf8.tobytes().decode("utf-8"), config, source)


# A request on this many characters or more is followed by a trim of the C heap: DeepSeek's
# encode of a 5 MB text left the helper at 684 MB, 576 MB after the next request (110 loaded).
TRIM_AFTER_CHARS = 1_000_000


def _text_size(message: tuple) -> int:
    """The characters a request's text or texts hold (0 for the other requests)."""
    kind, _, *args = message
    if kind in ("encode", "array", "ids"):
        return len(args[0])
    if kind in ("runs", "chunks"):
        return sum(map(len, args[0]))
    return 0


def _answer(conn: Connection, table: _Table) -> None:
    from .heap_trim import glibc_trim

    trim = glibc_trim()
    with conn:
        while True:
            try:
                message = conn.recv()
            except (OSError, EOFError):
                return
            try:
                answer = ("ok", table.handle(message))
            except TokexplorerError as exc:
                answer = ("error", str(exc))
            except Exception as exc:  # a bug: tell the window, log the details
                traceback.print_exc(file=sys.stderr)
                answer = ("error", f"internal error in the encoding helper: {exc!r}")
            try:
                conn.send(answer)
            except (OSError, EOFError):
                return
            del answer
            if trim is not None and _text_size(message) >= TRIM_AFTER_CHARS:
                trim()  # after the answer: the window does not wait for it
