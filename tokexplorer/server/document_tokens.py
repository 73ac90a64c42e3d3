"""The window's copy of one document's tokens: the columns it holds, spliced from each answer of
the tokenizing server, and the text they are of (the editor's edits, applied as the server applied
them). Each answer is a delta against the previous one, so every answer is applied, in order,
whether or not its result is still wanted.

No Qt: the service calls `apply` in the thread that reads the server's pipe.
"""

from __future__ import annotations

import collections
import threading

from tokexplorer.core.positions import TextMirror
from tokexplorer.server import protocol as p
from tokexplorer.server.columns import TokenColumns, splice
from tokexplorer.server.tokenized import Tokenized


class OutOfStep(Exception):
    """The window's columns and the server's answer disagree: send the whole text again."""


class DocumentTokens:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: collections.deque[tuple[int, p.TextDelta]] = collections.deque()
        self._mirror = TextMirror()
        self.columns: TokenColumns | None = None

    def sent(self, generation: int, delta: p.TextDelta) -> None:
        """A request with this delta went to the server (UI thread)."""
        with self._lock:
            self._pending.append((generation, delta))

    def reset(self) -> None:
        """The server was replaced: what it answered before means nothing to the new one."""
        with self._lock:
            self._pending.clear()
            self.columns = None

    def apply(self, answer) -> Tokenized | object:
        """Take in an answer (reader thread): the Tokenized result of a TokensChanged, the answer
        itself for the others, or OutOfStep."""
        with self._lock:
            while self._pending and self._pending[0][0] <= answer.generation:
                _, delta = self._pending.popleft()
                if delta.text is not None:
                    self._mirror.reset(delta.text)
                else:
                    for position, removed, inserted in delta.edits:
                        self._mirror.apply(position, removed, inserted)
            if not isinstance(answer, p.TokensChanged):
                if isinstance(answer, p.Failed):
                    self.columns = None  # the server starts afresh too
                return answer
            if answer.removed is None:
                columns = answer.new
            elif self.columns is None or len(self.columns) != answer.base:
                self.columns = None
                return OutOfStep()
            else:
                columns = splice(self.columns, answer.first, answer.removed, answer.new, answer.shift)
            self.columns = columns
            return Tokenized.of(columns, self._mirror.text, answer)
