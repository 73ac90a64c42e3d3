"""One tokenization result as the views need it: an Encoding of the document's text plus each
token's span in the editor's UTF-16 units, its colour index and its flags, read from the token
columns the window holds (spliced from the tokenizing server's answers, `server.columns`).

No Qt here, and no tokenizer: the values were computed in the server.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tokexplorer.core.encoding import Encoding, TokenFlag, TokenIds
from tokexplorer.core.tokenizer import DisallowedSpecialError
from tokexplorer.server.columns import REFUSED, BlobTokenBytes, TokenColumns
from tokexplorer.server.protocol import TokensChanged

__all__ = ["DROPPED", "REFUSED", "Tokenized"]

# A GUI-only bit beside the TokenFlag bits, for text no token covers (a split pattern that did
# not match it: `Encoding.dropped`), given to the painter as a piece of its own, never to a token.
DROPPED = 0x20
_TOKEN_FLAGS = int(TokenFlag.SPECIAL | TokenFlag.BYTE_FALLBACK | TokenFlag.PARTIAL | TokenFlag.NORMALIZED)


@dataclass(frozen=True, eq=False)
class Tokenized:
    """The tokens of `encoding.text` for `tokenizer` under `policy`, request `generation`."""

    generation: int
    tokenizer: str
    policy: str
    encoding: Encoding
    starts16: np.ndarray  # int64 [n]: UTF-16 start of each token in the editor's text
    ends16: np.ndarray  # int64 [n]: UTF-16 end (exclusive)
    colours: np.ndarray  # uint8 [n]: colour index (core.token_colours)
    flags: np.ndarray  # uint8 [n]: TokenFlag bits, and REFUSED
    mark: int = 0  # the editor's edit count when the text was taken
    refused: tuple[tuple[int, int], ...] = ()  # code-point spans spelling a refused special token
    changed: tuple[int, int] | None = None  # code-point range re-encoded, None: everything
    seconds: float = 0.0  # time spent in the server
    stats: dict = field(default_factory=dict)
    dropped16: np.ndarray | None = None  # int64 [k, 2]: UTF-16 spans of `encoding.dropped`, or None
    soft: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # code points after soft breaks
    soft16: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # the soft breaks' own units
    has_chunks: bool = False  # the tokenizer pre-splits the text (the server answers `ChunksOf`)

    @classmethod
    def of(cls, columns: TokenColumns, text: str, answer: TokensChanged, *, changed="answer") -> "Tokenized":
        """The result of `answer`, whose tokens (spliced in) are `columns`, of `text`."""
        flags = columns.flags
        token_flags = flags & np.uint8(_TOKEN_FLAGS)
        encoding = Encoding.from_parts(
            text, TokenIds(columns.ids), BlobTokenBytes(columns), columns.byte_starts, columns.byte_ends,
            special_mask=(flags & np.uint8(TokenFlag.SPECIAL)) != 0,
            byte_fallback_mask=(flags & np.uint8(TokenFlag.BYTE_FALLBACK)) != 0,
            starts=columns.starts, ends=columns.ends, flags=token_flags, n_bytes=answer.n_bytes,
            id_array=columns.ids, dropped=answer.dropped)
        return cls(answer.generation, answer.tokenizer, answer.policy, encoding, columns.starts16, columns.ends16,
                   columns.colours, flags, answer.mark, answer.refused,
                   answer.changed if changed == "answer" else changed, answer.seconds, encoding.stats(),
                   answer.dropped16, answer.soft, answer.soft16, answer.has_chunks)

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
