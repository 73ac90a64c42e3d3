"""The server's side of an open document: its text (kept up to date from the window's edits), its
incremental encoder, and how many tokens the window holds, against which the next answer's delta
is counted.

`Retokenizer` re-encodes only around an edit (`core.incremental.IncrementalEncoder`) and splices
the colours likewise; `Document.tokenize` turns its result into the columns the editor shows
(spans in the editor's UTF-16 units, flags, colours) and answers with what changed.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Callable

import numpy as np

from tokexplorer.core.encoding import Encoding
from tokexplorer.core.incremental.encoder import IncrementalEncoder
from tokexplorer.core.incremental.recycler import Recycler
from tokexplorer.core.positions import TextMirror, code_points, editor_positions
from tokexplorer.core.streaming import whole_text_refusal
from tokexplorer.core.token_colours import colour_indices, update_colours
from tokexplorer.core.tokenizer import SpecialFinder, Tokenizer, TokexplorerError
from tokexplorer.server.columns import POSITION, REFUSED, TokenColumns, shared
from tokexplorer.server.protocol import Failed, OutOfStep, Tokenize, TokensChanged

if TYPE_CHECKING:
    from tokexplorer.core.analysis.pattern_parts import ExplainedChunks

# The special-token policies the window offers -> allowed_special for the core.
POLICIES: dict[str, object] = {"refuse": None, "all": "all", "none": "none"}
PARKED = 3  # encoders kept for switching back to their tokenizers
PARKED_TOKENS = 2_000_000  # ...of texts up to this many tokens (a few MB of text)

class Retokenizer:
    """Encodes a document's text, re-encoding only around the edit when the tokenizer and policy
    are the ones of the previous call (`IncrementalEncoder`), and splicing the colours likewise.

    Under "refuse" the text is encoded as plain text (allowed_special "none", which gives the same
    tokens wherever no special token is spelled) and the places that spell one are reported
    alongside, so a refusal keeps the picture instead of emptying it.

    The encoders of the last few tokenizers used are kept (up to PARKED, of texts up to
    PARKED_TOKENS tokens), so that switching back to one brings its tokens up to date with an
    edit, or not at all, instead of encoding the whole text again.

    Not thread-safe: one document's requests run one at a time.
    """

    def __init__(self) -> None:
        self._encoder: IncrementalEncoder | None = None
        self._policy = ""
        self._colours = np.zeros(0, dtype=np.uint8)
        self._recycler = Recycler()  # for the colours, as the encoder's for its columns
        # (tokenizer, policy) -> (its encoder, its colours): the ones switched away from, oldest first
        self._parked: dict[tuple[int, str], tuple[IncrementalEncoder, np.ndarray]] = {}
        self._spans: tuple[tuple[int, int], ...] | None = None  # special-token spans of the last text
        self._length = 0  # the last text's length
        self._text: str | None = None  # the last text, as given
        self._finder: tuple[Tokenizer | None, SpecialFinder] = (None, SpecialFinder(()))  # of this tokenizer

    def finder(self, tok: Tokenizer) -> SpecialFinder:
        """The finder of `tok`'s special tokens (made again only when the tokenizer changes)."""
        if self._finder[0] is not tok:
            self._finder = (tok, SpecialFinder(tok.special_tokens))
        return self._finder[1]

    def run(self, tok: Tokenizer, policy: str, text: str, *, fresh: bool = False,
            edit: tuple[int, int, str] | None = None
            ) -> tuple[Encoding, np.ndarray, tuple[int, int] | None, tuple[tuple[int, int], ...]]:
        """(encoding, colour indices, code-point range whose tokens or colours changed or None for
        everything, code-point spans that spell a special token the policy refuses).

        `fresh`: the text is a new one (a file was opened), not worth comparing with the last.
        `edit`: (start, removed, inserted) in code points, the one edit that made `text` from the
        last call's text, if known; else the two texts are compared to find it.
        """
        encoding, colours, changed = self._encode(tok, "none" if policy == "refuse" else policy, text, fresh,
                                                  edit)
        self._text = text
        if policy != "refuse":
            self._spans = None  # the next "refuse" searches the whole text
            return encoding, colours, changed, ()
        return encoding, colours, changed, self._special_spans(tok, text, changed)

    def _special_spans(self, tok: Tokenizer, text: str, changed: tuple[int, int] | None):
        """Where `text` spells a special token: found again only around the changed range (a
        search of a 1 MB text for every special token costs ~10 ms a keystroke)."""
        finder = self.finder(tok)
        old, old_length = self._spans, self._length
        self._length = len(text)
        if changed is None or old is None or not finder.longest:
            self._spans = finder.spans(text)
            return self._spans
        longest = finder.longest
        c0, c1 = changed
        lo = max(0, c0 - longest)
        shift = len(text) - old_length
        # Spans starting before lo end before c0 and those starting from c1 on lie after the
        # changed range: both in text that did not change.
        middle = tuple((s + lo, e + lo) for s, e in finder.spans(text[lo:c1 + longest]) if s + lo < c1)
        self._spans = (tuple(sp for sp in old if sp[0] < lo) + middle
                       + tuple((s + shift, e + shift) for s, e in old if s + shift >= c1))
        return self._spans

    def _encode(self, tok: Tokenizer, policy: str, text: str, fresh: bool, edit: tuple[int, int, str] | None):
        encoder = self._encoder
        switched = encoder is None or encoder.tokenizer is not tok or policy != self._policy
        if fresh:
            self._parked.clear()
        elif switched:
            back = self._parked.pop((id(tok), policy), None)  # (before parking: it must not be evicted)
            if encoder is not None:
                self._park(encoder, self._policy, self._colours)
            if back is not None:  # (the encoder holds its tokenizer: the id is still its)
                self._encoder, self._policy, self._colours = back[0], policy, back[1]
                encoding, colours, _ = self._edit(back[0], text)
                return encoding, colours, None  # another tokenizer was shown: everything changed
        if fresh or switched:
            encoder = IncrementalEncoder(tok, text, allowed_special=POLICIES[policy])
            self._encoder, self._policy = encoder, policy
            encoding = encoder.encoding
            self._colours = colour_indices(encoding.id_array)
            return encoding, self._colours, None
        return self._edit(encoder, text, edit)

    def _park(self, encoder: IncrementalEncoder, policy: str, colours: np.ndarray) -> None:
        if len(encoder.encoding) > PARKED_TOKENS:
            return  # (a long text's tokens take hundreds of MB: encoded again if wanted)
        encoder.drop_spares()
        self._parked[(id(encoder.tokenizer), policy)] = (encoder, colours)
        while len(self._parked) > PARKED:
            del self._parked[next(iter(self._parked))]

    def _edit(self, encoder: IncrementalEncoder, text: str, edit: tuple[int, int, str] | None = None):
        # (the edit as the editor made it: comparing two 1 MB texts to find it took 0.6 ms)
        if edit is None:
            encoding, changed = encoder.update(text)
        else:  # (the encoder's text is the last one given, object for object: `text` is it edited)
            encoding, changed = encoder.edit(*edit, new_text=text if encoder.encoding.text is self._text else None)
        first = int(np.searchsorted(encoding.ends, changed[0], side="right"))
        stop = max(first, int(np.searchsorted(encoding.starts, changed[1], side="left")))
        self._colours, lo, hi = update_colours(self._colours, encoding.id_array, first, stop, self._recycler.empty)
        if hi > lo:  # a recoloured neighbour counts as changed too
            changed = (min(changed[0], int(encoding.starts[lo])), max(changed[1], int(encoding.ends[hi - 1])))
        return encoding, self._colours, changed


def token_columns(encoding: Encoding, colours: np.ndarray, soft: np.ndarray,
                  refused: tuple[tuple[int, int], ...]) -> tuple[TokenColumns, np.ndarray, np.ndarray]:
    """The columns the editor shows of an encoding, and the dropped text's spans and the soft
    breaks' units, both in UTF-16 units of the editor's text.

    The text is the source (the file's own); the spans are wanted in the editor's UTF-16
    positions, where an astral character counts two, a "\\r\\n" one and a soft break one unit more:
    the break before code point q moves q itself, so a token ending there ends after it (the
    break's unit is the end of the piece before) and one starting there starts after it.
    """
    starts, ends = encoding.starts, encoding.ends
    text = encoding.text
    dropped = np.asarray(encoding.dropped, dtype=np.int64).reshape(-1)
    moved = editor_positions(text, soft, starts, ends, dropped, soft)
    if moved is None:
        starts16, ends16, dropped16, soft16 = starts, ends, dropped, soft
    else:
        starts16, ends16, dropped16, soft16 = moved
        soft16 = soft16 - 1  # the unit before code point q is its soft break
    flags = encoding.flags
    if refused:
        flags = flags.copy()
        for s, e in refused:
            flags[np.searchsorted(ends, s, side="right"):np.searchsorted(starts, e, side="left")] |= REFUSED
    blob, offsets = bytes_and_offsets(encoding.token_bytes)
    p = lambda a: np.asarray(a, dtype=POSITION)  # noqa: E731
    columns = TokenColumns(p(encoding.id_array), p(starts), p(ends), p(starts16), p(ends16),
                           p(encoding.byte_starts), p(encoding.byte_ends), np.asarray(flags, dtype=np.uint8),
                           np.asarray(colours, dtype=np.uint8), offsets, blob)
    return shared(columns), dropped16.reshape(-1, 2), soft16


BYTES_BLOCK = 1 << 20  # tokens whose bytes are read at a time


def bytes_and_offsets(token_bytes) -> tuple[bytes, np.ndarray]:
    """The tokens' bytes end to end, and where each one's start in them (and the end), read a
    block of tokens at a time: a lazily read Encoding's bytes as one list of 13 million bytes
    objects (50 MB of text) took 450 MB.

    >>> blob, offsets = bytes_and_offsets([b"ab", b"", b"c"])
    >>> blob, offsets.tolist()
    (b'abc', [0, 2, 2, 3])
    """
    pieces, offsets = [], np.zeros(len(token_bytes) + 1, dtype=POSITION)
    for a in range(0, len(token_bytes), BYTES_BLOCK):
        block = token_bytes[a:a + BYTES_BLOCK]
        pieces.append(b"".join(block))
        offsets[a + 1:a + 1 + len(block)] = np.fromiter(map(len, block), dtype=POSITION, count=len(block))
    np.cumsum(offsets, out=offsets)
    return b"".join(pieces), offsets


def editor_marks(encoding: Encoding, soft: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The dropped text's spans and the soft breaks' units in the editor's UTF-16 units (a pass over
    the text only when there are any: usually there are none)."""
    dropped = np.asarray(encoding.dropped, dtype=np.int64).reshape(-1)
    if not len(dropped) and not len(soft):
        return np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.int64)
    moved = editor_positions(encoding.text, soft, dropped, soft)
    dropped16, soft16 = (dropped, soft) if moved is None else (moved[0], moved[1] - 1)
    return dropped16.reshape(-1, 2), soft16


def edited_columns(count: int, position16: Callable[[int], int], encoding: Encoding, colours: np.ndarray,
                   changed: tuple[int, int], refused: tuple[tuple[int, int], ...], reach: int = 0
                   ) -> tuple[int, int, TokenColumns] | None:
    """(first, removed, new): the columns of the tokens an edit replaced among the `count` the
    window holds, made for those tokens only (a keystroke in a book: a few dozen tokens, not
    300,000); None if the edit's tokens are not all among them. `position16` gives a code point's
    position in the editor's units.

    Tokens ending before the changed code-point range are the old ones, and tokens starting after
    it are the old ones moved by the edit (the incremental encoder's promise), except for a
    REFUSED flag: a special token the policy refuses is found again (or lost) up to `reach` code
    points around the changed range, so those tokens are made too. A new token's UTF-16 span is
    counted from the start of the token before it (found by `position16`): only the text between
    them is read. For a text without soft breaks (the caller's condition).
    """
    n_new = len(encoding)
    starts, ends = encoding.starts, encoding.ends
    first = max(0, int(np.searchsorted(ends, changed[0] - reach, side="right")) - 1)
    stop = min(n_new, int(np.searchsorted(starts, changed[1] + reach, side="left")) + 1)
    tail = n_new - stop
    if count - tail < first:
        return None
    mid_starts, mid_ends = starts[first:stop], ends[first:stop]
    anchor = int(starts[first - 1]) if first else 0
    anchor16 = position16(anchor) if first else 0
    mid_starts16, mid_ends16 = _utf16_from(encoding.text, anchor, anchor16, mid_starts, mid_ends)
    flags = np.array(encoding.flags[first:stop], dtype=np.uint8)
    for s, e in refused:
        flags[np.searchsorted(mid_ends, s, side="right"):np.searchsorted(mid_starts, e, side="left")] |= REFUSED
    blob, offsets = bytes_and_offsets(encoding.token_bytes[first:stop])
    p = lambda a: np.asarray(a, dtype=POSITION)  # noqa: E731
    new = TokenColumns(p(encoding.id_array[first:stop]), p(mid_starts), p(mid_ends), p(mid_starts16),
                       p(mid_ends16), p(encoding.byte_starts[first:stop]), p(encoding.byte_ends[first:stop]), flags,
                       np.asarray(colours[first:stop], dtype=np.uint8), offsets, blob)
    return first, count - tail - first, shared(new)


def _utf16_from(text: str, anchor: int, anchor16: int, starts: np.ndarray, ends: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """The editor's UTF-16 positions of code points `starts` and `ends` (all at or after
    `anchor`, whose own position is `anchor16`) in a text without soft breaks, reading only the
    text from `anchor` on: a unit per code point, one more per astral character, one less per
    "\r\n"."""
    starts, ends = np.asarray(starts, dtype=np.int64) - anchor, np.asarray(ends, dtype=np.int64) - anchor
    if not len(starts):
        return starts, ends
    piece = text[anchor:anchor + int(max(starts.max(), ends.max())) + 2]  # (one past, for a "\r")
    moved = editor_positions(piece, (), starts, ends)
    if moved is None:
        return starts + anchor16, ends + anchor16
    return moved[0] + anchor16, moved[1] + anchor16


SMALL_EDIT = 4096  # code points: a bigger edit is found again by comparing the texts (it may be smaller)


def crlf_change(old: str, new: str, start: int, removed: int, inserted: int) -> int:
    r"""How many more "\r\n" `new` holds than `old`, which an edit made into it (at code point
    `start`, `removed` characters out and `inserted` in): only pairs touching the edit can change.

    >>> crlf_change("a\r\nb", "a\rb", 2, 1, 0), crlf_change("a\rb", "a\r\nb", 2, 0, 1)
    (-1, 1)
    """
    lo = max(start - 1, 0)
    return new[lo:start + inserted + 1].count("\r\n") - old[lo:start + removed + 1].count("\r\n")


class Document:
    """One open document of the window: its text, its encoder, and what the window holds."""

    def __init__(self, doc: int):
        self.doc = doc
        self.mirror = TextMirror()
        self.retokenizer = Retokenizer()
        # how many tokens the window holds (None: it holds none, or the next answer sends every one)
        self._held: int | None = None
        self.encoding: Encoding | None = None  # of the last answer
        self.tokenizer: Tokenizer | None = None
        self.generation = 0  # of the last answer
        self._lengths = (0, 0, 0)  # code points, editor UTF-16 units, UTF-8 bytes of the last answer's text
        self._soft = 0  # soft breaks in the last answer's text
        self._key = ("", "")  # the last answer's tokenizer and policy
        self._tokenized: str | None = None  # the text of the last answer (the encoder's, uncleaned)
        self._crlf = 0  # "\r\n" in the text (a count of a 1 MB text took 1.4 ms a keystroke)
        # (code point q, "\r\n" before it): the last one `position16` counted, while no edit since
        # reached text it depends on (up to q): the next keystroke's count starts from it
        self._crlf_mark: tuple[int, int] | None = None
        self._edit: tuple[int, int, str] | None = None  # the one small edit since the last answer
        # the last answer to `ChunksOf` (handlers), which the next one starts from
        self.explained: "ExplainedChunks | None" = None

    def apply(self, request: Tokenize) -> bool:
        """Apply a request's edits to the text; False if the copy is out of step (the window must
        send the whole text)."""
        delta = request.delta
        before, self._edit = self.mirror.text, None
        try:
            if delta.text is not None:
                self.mirror.reset(delta.text)
                self._crlf, self._crlf_mark = delta.text.count("\r\n"), None
                self._held = None  # a whole text: the window starts afresh too
            else:
                for position, removed, inserted in delta.edits:
                    old = self.mirror.text
                    start, gone = self.mirror.apply(position, removed, inserted)
                    if self._crlf_mark is not None and start <= self._crlf_mark[0]:
                        self._crlf_mark = None
                    self._crlf += crlf_change(old, self.mirror.text, start, gone, len(inserted))
                    if len(delta.edits) == 1 and before is self._tokenized and gone + len(inserted) <= SMALL_EDIT:
                        self._edit = (start, gone, inserted)
            in_step = self.mirror.len16 == delta.length16 and self.mirror.agrees(delta.probes)
        except Exception:  # a bug, but one the user need not see: the whole text fixes it
            import traceback

            traceback.print_exc(file=sys.stderr)
            in_step = False
        if in_step:
            return True
        if delta.text is None or self.mirror.len16 > delta.length16:
            what = (f"{self.mirror.len16} != {delta.length16} UTF-16 units" if self.mirror.len16 != delta.length16
                    else "same length, other text")
            print(f"tokexplorer: the server's copy of the text is out of step ({what}); resending it",
                  file=sys.stderr)
            return False
        # subtle: the whole text disagrees too (Qt holds units Python cannot see, such as a lone
        # surrogate put in by other code than the editor's paste); asking again would loop for
        # ever, so tokenize what Python sees and say so.
        print(f"tokexplorer: the editor's text has {delta.length16 - self.mirror.len16} UTF-16 "
              "units Python cannot see; positions after them may be off", file=sys.stderr)
        return True

    def tokenize(self, request: Tokenize, tok: Tokenizer) -> TokensChanged | Failed:
        """Tokenize the text as the request asks; the delta against what the window holds."""
        text, delta = self.mirror.text, request.delta
        too_big = whole_text_refusal(tok, len(text))
        if too_big is not None:  # encoded whole, it would take many GB
            self.forget()  # (the window drops its tokens on a failure)
            return Failed(self.doc, request.generation,
                          f"{too_big}; open a part of the text, or pick a tokenizer that reads a text in "
                          "pieces (gpt2, cl100k_base, o200k_base)", loaded=True)
        t0 = time.perf_counter()
        encoding, colours, changed, refused = self.retokenizer.run(tok, request.policy, text,
                                                                   fresh=delta.text is not None, edit=self._edit)
        self._tokenized = text
        soft = code_points(text, delta.soft16)
        # (the editor's units: UTF-16, but a "\r\n" is one line break and a soft break one more)
        lengths = (len(text), self.mirror.len16 - self._crlf + len(soft), encoding.n_bytes)
        shift = tuple(b - a for a, b in zip(self._lengths, lengths))
        key = (request.tokenizer, request.policy)  # ("refuse" and "none" encode alike, but flag apart)
        # subtle: soft breaks (a long line's pieces) may move tokens after the edit by other than
        # the shift: then every column is sent
        held = self._held
        local = (held is not None and changed is not None and not len(soft) and not self._soft
                 and key == self._key)
        # (a refused special token found or lost near the edit flags tokens up to its length away)
        reach = self.retokenizer.finder(tok).longest if request.policy == "refuse" else 0
        edited = (edited_columns(held, self.position16, encoding, colours, changed, refused, reach)
                  if local else None)
        if edited is not None:  # only the tokens around the edit were made
            first, removed, new = edited
            base = held
            dropped16, soft16 = editor_marks(encoding, soft)
        else:  # a new text, tokenizer or policy: every token
            new, dropped16, soft16 = token_columns(encoding, colours, soft, refused)
            first, removed, base = 0, None, -1
        self._held = len(encoding)
        self.encoding, self.tokenizer = encoding, tok
        self.generation, self._lengths, self._soft, self._key = request.generation, lengths, len(soft), key
        return TokensChanged(
            doc=self.doc, generation=request.generation, tokenizer=request.tokenizer, policy=request.policy,
            mark=delta.mark, base=base, first=first, removed=removed, new=new, shift=shift, changed=changed,
            refused=refused, dropped=tuple(encoding.dropped),
            dropped16=dropped16 if len(dropped16) else None, soft=soft, soft16=np.asarray(soft16, dtype=np.int64),
            n_bytes=encoding.n_bytes, seconds=time.perf_counter() - t0,
            has_chunks=encoding.has_chunk_split)

    def position16(self, p: int) -> int:
        r"""Code point `p` of the text as the editor's position in a text without soft breaks:
        one UTF-16 unit more per astral character before it, one less per "\r\n" (counted from
        the last code point counted, or from the nearer end of the text: a count over half a
        1 MB text took 1 ms, a keystroke's anchor is near the last one)."""
        text, pairs = self.mirror.text, 0
        if self._crlf:
            q, before = self._crlf_mark or (0, 0)
            if len(text) - p < abs(p - q):
                pairs = self._crlf - text.count("\r\n", p)
            elif p >= q:
                pairs = before + text.count("\r\n", q, p + 1)
            else:
                pairs = before - text.count("\r\n", p, q + 1)
            self._crlf_mark = (p, pairs)
        return self.mirror.utf16_position(p) - pairs

    def forget(self) -> None:
        """The window dropped its tokens (a failure): the next answer sends every token."""
        self._held = None
        self._tokenized = None

    def out_of_step(self, request: Tokenize) -> OutOfStep:
        return OutOfStep(self.doc, request.generation)


def user_error(exc: BaseException) -> TokexplorerError | None:
    """The error a user should see for an exception raised while tokenizing, or None for a bug."""
    from tokexplorer.core.tokenizer import native_errors, native_panic

    if isinstance(exc, TokexplorerError):
        return exc
    if native_panic(exc):  # subtle: not an Exception; pyo3's panic from a library's Rust core
        try:
            with native_errors("the tokenizer"):
                raise exc
        except TokexplorerError as err:
            return err
    return None
