"""The sync protocol: keeping a tokenize service's copy of one view's text in step with the document.

Holds what a view sends its service with each request (`snapshot` -> `server.protocol.TextDelta`):
the edits of the source since the last request when they are plain ones, else the whole text;
the text's length in UTF-16 units; where its soft breaks are; and probes, short bits of the text
around the last edits and one window that walks through it, by which the server finds a copy gone
wrong. Both the editor and each compare pane keep one, since each has its own service.

Does not hold what the document's line breaks stand for (`core.positions.SourceMap`, the editor's)
nor how an edit is followed in it (`editor.TokenEditor`): the owner works the source's edit out
and hands it to `edited`.
"""

from __future__ import annotations

from typing import Callable

from tokexplorer.core.positions import Edit, SourceMap
from tokexplorer.gui.editor.token_view import TokenView
from tokexplorer.server.protocol import TextDelta

MAX_OUTBOX = 1 << 16  # inserted characters beyond which a snapshot sends the whole text
PROBE_UNITS = 32  # UTF-16 units each side of an edit that a request sends to check the worker's copy
PROBE_EDITS = 4  # the last edits of a request probed around
PROBE_WALK = 4096  # UTF-16 units of one more probe per request, that walks through the text

SourceEdit = tuple[int, int, str]  # source UTF-16 position, units removed, text inserted


def _low_surrogate(unit: str) -> bool:
    """Whether a UTF-16 unit read from the document is the second half of an astral character."""
    return len(unit) == 1 and 0xDC00 <= ord(unit) <= 0xDFFF


class TextSync:
    """What a view's service has not had yet of the view's text, and the request that brings it."""

    def __init__(self, view: TokenView, source_map: Callable[[], SourceMap], text: Callable[[], str]):
        """`source_map`: what the document's line breaks stand for now; `text`: the whole source
        text (the user's text), read when a request must send all of it."""
        self._view = view
        self._map = source_map
        self._text = text
        self._outbox: list[SourceEdit] | None = None  # edits not yet sent; None: send all
        self._unsent: list[Edit] = []  # the last PROBE_EDITS edits since the last snapshot
        self._walk = 0  # where the next walking probe starts

    def resend(self) -> None:
        """The next request sends the whole text (an edit could not be followed)."""
        self._outbox = None

    def restart(self, outbox: list[SourceEdit] | None = None) -> None:
        """Nothing pending: the service is given the text by other means (`outbox=[]`), or will
        be sent all of it (None)."""
        self._outbox, self._unsent = outbox, []

    def edited(self, position: int, removed: int, added: int, source_edit: SourceEdit | None) -> None:
        """Queue an edit of the document (UTF-16 units) for the service's copy: the source's edit
        the owner found for it, or None when the source is the document's text.

        subtle: Qt counts the document's final block separator in some changes (setPlainText
        reports removing 1 character from an empty document); an edit that reaches it is not a
        plain-text edit, so the next snapshot sends the whole text instead.
        """
        self._unsent = self._unsent[1 - PROBE_EDITS:] + [Edit(position, removed, added)]
        if self._outbox is None:
            return
        count = self._view.document().characterCount()
        if position + added > count - 1 or position + removed > count - added + removed - 1:
            self._outbox = None
            return
        if source_edit is None:
            source_edit = (position, removed, self._view.text16(position, position + added).replace("\u2029", "\n"))
        self._outbox.append(source_edit)

    def snapshot(self, full: bool = False, loaded: str | None = None) -> TextDelta:
        """What changed since the previous snapshot: the edits when they are plain ones, else the
        whole text; with the view's edit count and the text's length in UTF-16 units. `loaded`:
        the whole text, if the owner holds it as a str (sent instead of reading the document
        when nothing was edited since)."""
        view, source = self._view, self._map()
        outbox, self._outbox = self._outbox, []
        doc = view.document()
        length16 = doc.characterCount() - 1  # without the final block separator
        if not source.identity:  # the source's length
            length16 += source.extra(length16, doc.blockCount() - 1)
        edits, self._unsent = self._unsent, []
        soft16 = () if source.identity else tuple(
            source.soft16(lambda p: doc.findBlock(p).blockNumber()).tolist())
        if full or outbox is None or sum(len(t) for _, _, t in outbox) > MAX_OUTBOX:
            text = loaded if loaded is not None and not outbox else self._text()
            return TextDelta(text, None, view.edit_count, length16, soft16=soft16)
        return TextDelta(None, outbox, view.edit_count, length16, self._probes(edits, source), soft16)

    def _probes(self, edits: list[Edit], source: SourceMap) -> tuple[tuple[int, str], ...]:
        """Bits of the source, as (source UTF-16 position, text), for the worker to find in its
        copy: around each of `edits` (where they lie now), and one window that walks through the
        text a step per request, so that a copy gone wrong anywhere is found in the end. Costs
        a few short reads of the document, whatever its size."""
        doc = self._view.document()
        end = doc.characterCount() - 1
        spans = []
        for k, e in enumerate(edits):
            lo, hi = e.position, e.position + e.added
            for later in edits[k + 1:]:
                lo, hi = later.start(lo), later.end(hi)
            spans.append((lo - PROBE_UNITS, max(lo, hi) + PROBE_UNITS))
        if self._walk >= end:
            self._walk = 0
        spans.append((self._walk, self._walk + PROBE_WALK))
        self._walk += PROBE_WALK
        probes = []
        for lo, hi in spans:
            lo, hi = max(0, lo), min(end, hi)
            # subtle: never half an astral character (PySide drops a lone surrogate it reads).
            if 0 < lo < end and _low_surrogate(doc.characterAt(lo)):
                lo -= 1
            if 0 < hi < end and _low_surrogate(doc.characterAt(hi)):
                hi += 1
            if hi <= lo:
                continue
            text = self._view.text16(lo, hi).replace("\u2029", "\n")
            if source.identity:
                probes.append((lo, text))
            else:
                probes.append((lo + source.extra(lo, doc.findBlock(lo).blockNumber()),
                               source.source(text, lo)))
        return tuple(probes)
