"""What a user types into the decode box, looked up: token ids decoded ("15339, 1917" -> the text
and each token's bytes), or characters and code points as Python's `chr` and `ord` give them.

How a typed text is read (`lookup`), first rule that fits:
- whole numbers in the digits 0-9, separated by spaces, commas or brackets: token ids ("104",
  "[15339, 1917]"). One id is a look-up of its bytes; when it is also a code point, what `chr`
  makes of it is shown beside (`DecodedIds.code_point`), but a bare number is always a token id;
- code points: "U+0068" (several separated by spaces or commas), "chr(104)", "chr(0x68)": `chr`;
- characters: quoted ('h', "héllo"), "ord('h')", or one unquoted character or grapheme cluster
  that is not a digit ("h", "👋🏽"): `ord` of each code point;
- anything else is refused, with a message saying how to write ids and characters.

For SentencePiece vocabularies the ids' pieces are also named as sentencepiece names them
(`▁hello`, `<0x0A>`: its `id_to_piece`). Bad input raises TokexplorerError with a message that
says what was wrong. No Qt here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tokexplorer.core.tokenizer import Tokenizer, TokexplorerError
from tokexplorer.core.analysis.unicode_info import graphemes

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
                                   "such as 1917; a character is looked up quoted, 'h', or as U+0068)")
        ids.append(int(w))
    return ids


@dataclass(frozen=True)
class DecodedIds:
    """What some ids stand for in one tokenizer."""

    tokenizer: str
    ids: list[int]
    token_bytes: list[bytes]  # each id's bytes
    data: bytes  # the decoded bytes (as the tokenizer decodes: SentencePiece drops its dummy prefix)
    pieces: list[str] | None = None  # each id's piece as sentencepiece names it; None: not SentencePiece

    @property
    def code_point(self) -> str | None:
        """What chr() makes of a single id, when it is a code point (shown beside, never instead)."""
        if len(self.ids) == 1 and 0 <= self.ids[0] <= 0x10FFFF:
            return chr(self.ids[0])
        return None

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
    return DecodedIds(tokenizer.name, ids, token_bytes, tokenizer.decode_bytes(ids), piece_names(tokenizer, ids))


def piece_names(tokenizer: Tokenizer, ids: list[int]) -> list[str] | None:
    """The ids' pieces as sentencepiece's `id_to_piece` names them, for a SentencePiece vocabulary
    (None for other families, whose tokens are bytes).

    >>> from tokexplorer.core.registry import get_builtin
    >>> piece_names(get_builtin("llama-sp"), [6312, 28709, 13]), piece_names(get_builtin("gpt2"), [31373])
    (['▁hell', 'o', '<0x0A>'], None)
    """
    pieces = getattr(tokenizer, "pieces", None)
    if pieces is None:
        return None
    n = len(pieces)
    return [pieces[i] if 0 <= i < n else "" for i in ids]


@dataclass(frozen=True)
class CharacterLookup:
    """Characters looked up as chr() or ord() would, and how one tokenizer encodes them."""

    tokenizer: str
    chars: str
    asked: str  # "chr": code points were typed; "ord": characters were typed
    ids: list[int]  # the characters encoded as ordinary text
    token_bytes: list[bytes]
    pieces: list[str] | None = None  # as in DecodedIds

    @property
    def code_points(self) -> list[int]:
        return [ord(c) for c in self.chars]


MAX_CHARACTERS = 64  # characters looked up at once
_CODE_POINT = re.compile(r"(?i)u\+([0-9a-f]{1,6})")
_CHR = re.compile(r"chr\(\s*(0x[0-9a-fA-F]+|[0-9]+)\s*\)")
_QUOTED = re.compile(r"(?s)(?:ord\(\s*)?(['\"])(.+)\1(?:\s*\))?")
_IDS = re.compile(r"[\s,\[\]0-9-]+")


def _chr(value: int, typed: str) -> str:
    if value > 0x10FFFF:
        raise TokexplorerError(f"{typed} is past the last code point, U+10FFFF (1114111)")
    return chr(value)


def parse_characters(text: str) -> tuple[str, str] | None:
    """(characters, "chr" or "ord") when `text` asks for a character look-up, else None (ids, or
    nothing we read). See the module docstring for the rules.

    >>> parse_characters("U+0068"), parse_characters("'h'"), parse_characters("h"), parse_characters("104")
    (('h', 'chr'), ('h', 'ord'), ('h', 'ord'), None)
    """
    typed = text.strip()
    if not typed or _IDS.fullmatch(typed):
        return None
    words = [w for w in re.split(r"[\s,]+", typed) if w]
    if all(_CODE_POINT.fullmatch(w) for w in words):
        return "".join(_chr(int(_CODE_POINT.fullmatch(w).group(1), 16), w) for w in words), "chr"
    m = _CHR.fullmatch(typed)
    if m:
        return _chr(int(m.group(1), 0), typed), "chr"
    m = _QUOTED.fullmatch(typed)
    if m:
        return m.group(2), "ord"
    if len(graphemes(typed)) == 1 and not typed.isdigit():
        return typed, "ord"
    return None


def lookup(tokenizer: Tokenizer, text: str) -> DecodedIds | CharacterLookup:
    """What the decode box shows for `text`: ids decoded, or characters looked up.

    >>> from tokexplorer.core.registry import get_builtin
    >>> found = lookup(get_builtin("cl100k_base"), "U+0068")
    >>> found.chars, found.code_points, found.ids
    ('h', [104], [71])
    """
    chars = parse_characters(text)
    if chars is None:
        return decode_ids(tokenizer, text)
    found, asked = chars
    if len(found) > MAX_CHARACTERS:
        raise TokexplorerError(f"{len(found):,} characters: look up at most {MAX_CHARACTERS} at a time here "
                               "(tokexplorer inspect takes any text)")
    ids = list(tokenizer.encode(found, allowed_special="none").ids)
    return CharacterLookup(tokenizer.name, found, asked, ids, [tokenizer.token_bytes(i) for i in ids],
                           piece_names(tokenizer, ids))
