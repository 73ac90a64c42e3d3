"""Incremental re-tokenization: after an edit, re-encode only a window around it.

An `IncrementalEncoder` holds a tokenizer, a special-token policy and the Encoding of the current
text. `edit(start, removed, inserted)` (or `update(new_text)`, which finds the edit itself with
`text_edit`) returns the Encoding of the new text, exactly what a full encode gives (ids, token
bytes, spans, flags, chunks), and the code-point range of the new text whose tokens changed, so an
editor repaints only that. The work is a small window around the edit plus numpy splicing of the
per-token arrays.

The window comes from a locality rule, each used only where it is provably exact and chosen from
what the tokenizer declares (`rules`): the regex split (`regex_rule`), DeepSeek's tokenizer.json
splits (`splits_rule`), SentencePiece BPE's lines (`line_rule`); the arrays are spliced in
`splice`, into arrays the encoder's edits made before and nothing holds any more (`recycler`).
Any other tokenizer is re-encoded whole on every edit: correct, not fast.

This module holds the encoder and the text diff only. Positions are code points (convert Qt's
UTF-16 positions first, or use `update`). Not thread-safe: one worker owns an encoder.
"""

from __future__ import annotations

import threading
import weakref
from concurrent.futures import Future

from tokexplorer.core.encoding import Encoding
from tokexplorer.core.incremental.recycler import Recycler
from tokexplorer.core.incremental.regex_rule import LOCAL_PATTERNS, MINBPE_GPT2_PATTERN, MINBPE_GPT4_PATTERN
from tokexplorer.core.incremental.rules import local_rule
from tokexplorer.core.incremental.splice import changed_tokens
from tokexplorer.core.incremental.state import Changed, PendingChunks, State
from tokexplorer.core.tokenizer import (
    AllowedSpecial, DisallowedSpecialError, Tokenizer, TokexplorerError, clean_text, resolve_special,
)

__all__ = ["Changed", "IncrementalEncoder", "LOCAL_PATTERNS", "MINBPE_GPT2_PATTERN", "MINBPE_GPT4_PATTERN",
           "text_edit"]

# Characters from which a whole encode splits the text in a second thread (`_full_overlapped`).
OVERLAP_TEXT = 1 << 18


class IncrementalEncoder:
    """The Encoding of an edited text, re-encoding only around each edit.

    An editor's worker keeps one per (tokenizer, policy): `reset` when a file is opened, then per
    debounced change either `edit` (positions in code points) or `update` with the whole new text;
    repaint the returned `changed` range. The constructor and `reset` encode the whole text (and
    raise DisallowedSpecialError as `encode` does).

    >>> from tokexplorer.core.registry import get_builtin
    >>> inc = IncrementalEncoder(get_builtin("gpt2"), "hello world")
    >>> enc, changed = inc.edit(5, 0, ",")
    >>> enc.text, enc.ids == get_builtin("gpt2").encode("hello, world").ids, changed
    ('hello, world', True, (5, 6))
    """

    def __init__(
        self, tokenizer: Tokenizer, text: str = "", *, allowed_special: AllowedSpecial | None = None
    ):
        self.tokenizer = tokenizer
        self.allowed_special = allowed_special
        # (A property that copies a thousand entries for DeepSeek or Tekken: read once, not per edit.)
        self._specials = tokenizer.special_tokens
        self._longest_special = max(map(len, self._specials), default=1)
        self._local = local_rule(tokenizer)
        self._recycler = Recycler()  # the arrays of the edits' Encodings, made once (`recycler`)
        self._state = self._full(text)

    @property
    def encoding(self) -> Encoding:
        """The Encoding of the current text."""
        return self._state.enc

    @property
    def text(self) -> str:
        """The current text (inserted lone surrogates are U+FFFD here)."""
        return self._state.enc.text

    @property
    def is_incremental(self) -> bool:
        """Whether edits re-encode a window (True) or the whole text (False) for this tokenizer."""
        return self._local is not None

    def reset(self, text: str) -> Encoding:
        """Encode `text` whole and make it the current text.

        Raises DisallowedSpecialError (state unchanged) if the policy refuses the text.
        """
        self._state = self._full(text)
        return self._state.enc

    def edit(self, start: int, removed: int, inserted: str, *, new_text: str | None = None
             ) -> tuple[Encoding, Changed]:
        """Replace `removed` code points at `start` by `inserted`; return the new Encoding and the
        code-point range of the new text whose tokens differ from before (it always contains the
        inserted text; tokens outside it are unchanged, only shifted).

        Lone surrogates in `inserted` become U+FFFD, as in a full encode: the Encoding's text is
        the truth. Raises DisallowedSpecialError (state unchanged) if the new text spells a special
        token the policy refuses.

        `new_text`: the text after the edit, if the caller holds it already (a 1 MB text is not
        put together again); the caller vouches that it is this text with the edit made.
        """
        old = self._state.enc.text
        if not (0 <= start <= len(old) and 0 <= removed <= len(old) - start):
            raise TokexplorerError(
                f"edit out of range: removing {removed} characters at {start} in a text of "
                f"{len(old)} characters (positions are code points, not UTF-16 units)"
            )
        cleaned = clean_text(inserted)
        if new_text is None or cleaned is not inserted or len(new_text) != len(old) - removed + len(inserted):
            new_text = old[:start] + cleaned + old[start + removed :]
        inserted, new = cleaned, new_text
        allowed = self._check_policy(new, start, start + len(inserted))
        result = None
        if self._local is not None:
            result = self._local.edit(self._state, start, removed, inserted, new, allowed, self._recycler)
        if result is None:  # no locality rule, or the window could not be proved exact
            state = self._full(new)
            changed = changed_tokens(self._state.enc, state.enc, start, start + len(inserted))
            result = state, changed
        self._state = result[0]
        return result[0].enc, result[1]

    def drop_spares(self) -> None:
        """Let go of the arrays kept for the next edits that the Encoding does not use (for an
        encoder kept aside while another one is edited); the next edits make them again."""
        self._recycler.clear()

    def update(self, text: str) -> tuple[Encoding, Changed]:
        """Make `text` the current text, as the one edit that keeps the common prefix and suffix.

        For an editor that knows only the new text (or coalesced several edits). The Encoding's
        text is `text` itself (cleaned), not a copy put together from the edit: a caller keeping
        several encoders of one document (one per tokenizer) keeps one text, not one each.
        """
        cleaned = clean_text(text)
        return self.edit(*text_edit(self._state.enc.text, cleaned), new_text=cleaned)

    def _check_policy(self, new: str, start: int, end: int) -> set[str]:
        """The allowed special tokens; raise if the new text spells a refused one.

        The current text passed the policy, so a refused token can only appear where it overlaps
        the inserted text new[start:end]: look there, not through the whole text.
        """
        longest = self._longest_special
        lo = max(start - longest + 1, 0)
        try:
            return resolve_special(self._specials, self.allowed_special, new[lo : end + longest - 1])
        except DisallowedSpecialError as exc:
            raise DisallowedSpecialError(exc.token, exc.position + lo) from None

    def _full(self, text: str) -> State:
        if self._local is not None and self._local.split_beside_encode and len(text) >= OVERLAP_TEXT:
            return self._full_overlapped(clean_text(text))
        enc = self.tokenizer.encode(text, allowed_special=self.allowed_special)
        if self._local is None:
            return State(enc)
        allowed = resolve_special(self._specials, self.allowed_special, enc.text)
        return self._local.full(enc, allowed)

    def _full_overlapped(self, text: str) -> State:
        """`_full` of a long text, its regex split in a second thread started beside the library's
        encode (both let go of the interpreter lock) and waited for only where the chunks are
        first needed: the next edit, the chunk view. The text's tokens do not wait for it (on a
        50 MB text the split takes longer than the encode)."""
        allowed = resolve_special(self._specials, self.allowed_special, text)
        split: Future = Future()
        chunks, rule = PendingChunks(split), self._local
        wanted = weakref.ref(chunks)  # gone with the state and its Encoding: the split stops

        def run() -> None:
            try:
                split.set_result(rule.bounds(text, allowed, wanted=lambda: wanted() is not None))
            except BaseException as exc:  # raised again where the chunks are asked for
                split.set_exception(exc)

        threading.Thread(target=run, name="tokexplorer-split", daemon=True).start()
        enc = self.tokenizer.encode(text, allowed_special=self.allowed_special)
        return rule.full(enc, allowed, chunks)


def text_edit(old: str, new: str) -> tuple[int, int, str]:
    """The edit (start, removed, inserted) that turns `old` into `new`, keeping the longest common
    prefix, then the longest common suffix of what is left.

    >>> text_edit("hello world", "hello, world")
    (5, 0, ',')
    >>> text_edit("aaa", "aa")
    (2, 1, '')
    """
    limit = min(len(old), len(new))
    prefix = _common_run(old, new, limit, from_end=False)
    suffix = _common_run(old, new, limit - prefix, from_end=True)
    return prefix, len(old) - prefix - suffix, new[prefix : len(new) - suffix]


def _common_run(a: str, b: str, limit: int, *, from_end: bool) -> int:
    """Length (at most `limit`) of the common prefix, or suffix, of a and b.

    Compares galloping slices, so the work is C-speed copying proportional to the answer.
    """

    def part(s: str, lo: int, hi: int) -> str:  # characters lo..hi counted from the chosen end
        return s[len(s) - hi : len(s) - lo] if from_end else s[lo:hi]

    lo, step = 0, 1024
    while lo < limit:
        hi = min(lo + step, limit)
        if part(a, lo, hi) != part(b, lo, hi):
            break
        lo, step = hi, step * 2
    else:
        return limit
    while hi - lo > 1:  # invariant: equal before lo, a difference in [lo, hi)
        mid = (lo + hi) // 2
        if part(a, lo, mid) == part(b, lo, mid):
            lo = mid
        else:
            hi = mid
    return lo
