"""One tokenization result as the views need it: the Encoding plus its spans in UTF-16 units,
each token's colour index and the spans a "refuse" policy refused, all computed in the worker
thread so the UI thread only looks them up.

No Qt here, so the worker can build it and tests can check it without a display.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.encoding import Encoding
from ..core.tokenizer import DisallowedSpecialError
from ..core.positions import editor_positions

# A GUI-only bit of `Tokenized.flags` beside the TokenFlag bits: the token overlaps text that spells
# a special token, which the "refuse" policy refused (shown tokenized as plain text).
REFUSED = 0x40
# And one for text no token covers (a split pattern that did not match it: `Encoding.dropped`),
# given to the painter as a piece of its own, never to a token.
DROPPED = 0x20


@dataclass(frozen=True, eq=False)
class Tokenized:
    """The tokens of `encoding.text` for `tokenizer` under `policy`, request `generation`."""

    generation: int
    tokenizer: str
    policy: str
    encoding: Encoding
    starts16: np.ndarray  # int64 [n]: UTF-16 start of each token in the editor's text
    ends16: np.ndarray  # int64 [n]: UTF-16 end (exclusive)
    colours: np.ndarray  # uint8 [n]: colour index (colours.colour_indices)
    flags: np.ndarray  # uint8 [n]: TokenFlag bits
    mark: int = 0  # the editor's edit count when the text was taken
    refused: tuple[tuple[int, int], ...] = ()  # code-point spans spelling a refused special token
    changed: tuple[int, int] | None = None  # code-point range re-encoded, None: everything
    seconds: float = 0.0  # time spent in the worker
    stats: dict = field(default_factory=dict)
    dropped16: np.ndarray | None = None  # int64 [k, 2]: UTF-16 spans of `encoding.dropped`, or None
    soft: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # code points after soft breaks
    soft16: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # the soft breaks' own units

    @classmethod
    def build(cls, generation: int, tokenizer: str, policy: str, encoding: Encoding,
              colours: np.ndarray, *, mark: int = 0, changed=None, seconds: float = 0.0,
              refused: tuple[tuple[int, int], ...] = (), soft=()) -> "Tokenized":
        """`soft`: the code points before which the editor holds a soft break (sorted)."""
        starts, ends = encoding.starts, encoding.ends
        text = encoding.text
        # The text is the source (the file's own); the spans are wanted in the editor's UTF-16
        # positions, where an astral character counts two, a "\r\n" one and a soft break one
        # unit more: the break before code point q moves q itself, so a token ending there
        # ends after it (the break's unit is the end of the piece before) and one starting
        # there starts after it.
        # Converted in blocks, and as one array when starts and ends are views of one: on a 50 MB
        # text each array of positions is 100 MB.
        soft = np.asarray(soft, dtype=np.int64)
        bounds = encoding.span_bounds
        dropped = np.asarray(encoding.dropped, dtype=np.int64).reshape(-1)
        moved = editor_positions(text, soft, *([starts, ends] if bounds is None else [bounds]), dropped, soft)
        if moved is None:
            starts16, ends16, dropped16, soft16 = starts, ends, dropped, soft
        else:
            *spans16, dropped16, soft16 = moved
            starts16, ends16 = spans16 if bounds is None else (spans16[0][:-1], spans16[0][1:])
            soft16 -= 1  # the unit before code point q is its soft break
        flags = encoding.flags
        if refused:
            flags = flags.copy()
            for s, e in refused:
                flags[np.searchsorted(ends, s, side="right"):np.searchsorted(starts, e, side="left")] |= REFUSED
        return cls(generation, tokenizer, policy, encoding, starts16, ends16, colours, flags, mark, refused,
                   changed, seconds, encoding.stats(), dropped16.reshape(-1, 2) if len(dropped16) else None,
                   soft, soft16)

    @property
    def refusal(self) -> DisallowedSpecialError | None:
        """The first refused special token, as the core's refusal would name it; None if none."""
        if not self.refused:
            return None
        s, e = self.refused[0]
        return DisallowedSpecialError(self.encoding.text[s:e], s)

    def __len__(self) -> int:
        return len(self.encoding)

    def index_at16(self, position16: int) -> int | None:
        """The token covering UTF-16 position `position16`, or None."""
        i = int(self.ends16.searchsorted(position16, side="right"))
        if i < len(self.ends16) and self.starts16[i] <= position16:
            return i
        return None

    def range16(self, start16: int, end16: int) -> range:
        """Indices of the tokens overlapping UTF-16 range [start16, end16)."""
        first = int(self.ends16.searchsorted(start16, side="right"))  # the method: no wrapper's cost
        last = int(self.starts16.searchsorted(end16, side="left"))
        return range(first, max(first, last))
