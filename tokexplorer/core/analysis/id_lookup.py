"""Token ids typed by a user, decoded: "15339, 1917" -> the text and each token's bytes.

For the inspector's decode box (and anything else that takes ids as text). One id is a lookup:
its bytes, as text where they are whole UTF-8. Bad input raises TokexplorerError with a message
that says what was wrong. No Qt here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tokexplorer.core.tokenizer import Tokenizer, TokexplorerError

MAX_IDS = 10_000  # a decode box is for looking, not for books


def parse_ids(text: str) -> list[int]:
    """Ids separated by spaces, commas or brackets (a JSON list works).

    >>> parse_ids("[15339, 1917]"), parse_ids("15339 1917")
    ([15339, 1917], [15339, 1917])
    """
    words = [w for w in re.split(r"[\s,\[\]]+", text) if w]
    if not words:
        raise TokexplorerError("no ids: type token ids separated by commas or spaces, e.g. 15339, 1917")
    ids = []
    for w in words:
        # subtle: not \d, which also takes "١٢" and "１２" (as int() does, with "1_000" and "+5")
        if not re.fullmatch(r"-?[0-9]+", w):
            raise TokexplorerError(f"{w!r} is not a token id (ids are whole numbers in the digits 0-9, "
                                   "such as 1917)")
        ids.append(int(w))
    return ids


@dataclass(frozen=True)
class DecodedIds:
    """What some ids stand for in one tokenizer."""

    tokenizer: str
    ids: list[int]
    token_bytes: list[bytes]  # each id's bytes
    data: bytes  # the decoded bytes (as the tokenizer decodes: SentencePiece drops its dummy prefix)

    @property
    def text(self) -> str:
        """The decoded text; bytes that are not valid UTF-8 become U+FFFD, as in tiktoken."""
        return self.data.decode("utf-8", errors="replace")

    @property
    def valid_utf8(self) -> bool:
        try:
            self.data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True


def decode_ids(tokenizer: Tokenizer, text: str) -> DecodedIds:
    """Parse ids from `text` and decode them; an id the tokenizer lacks raises TokexplorerError.

    >>> from tokexplorer.core.registry import get_builtin
    >>> d = decode_ids(get_builtin("cl100k_base"), "15339, 1917")
    >>> d.text, d.token_bytes
    ('hello world', [b'hello', b' world'])
    """
    ids = parse_ids(text)
    if len(ids) > MAX_IDS:
        raise TokexplorerError(f"{len(ids):,} ids: decode at most {MAX_IDS:,} at a time here "
                               "(tokexplorer decode takes any number)")
    token_bytes = [tokenizer.token_bytes(i) for i in ids]
    return DecodedIds(tokenizer.name, ids, token_bytes, tokenizer.decode_bytes(ids))
