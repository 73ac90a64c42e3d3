"""A tokenizer's whole vocabulary as arrays, for the vocabulary browser and `tokexplorer vocab`:
every token's bytes (one joined byte string and offsets), its kind (special, byte-fallback piece,
not valid UTF-8 on its own, or an unused id), search by text, hex bytes or id, filters, sort orders,
and how often each token occurs in an Encoding.

Built once per tokenizer (o200k_base's 200,019 ids: about 0.1 s, so callers build it in a worker).
A search is a few vectorised comparisons over the joined bytes; no Python object is made per token,
so the 200k-row view stays instant. It draws nothing: views format the rows they show.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from tokexplorer.core.encoding import Encoding, is_utf8
from tokexplorer.core.tokenizer import Tokenizer, TokexplorerError

_BYTE_PIECE = re.compile(r"<0x[0-9A-Fa-f]{2}>")



SEARCH_BLOCK = 1 << 22  # bytes of the vocabulary searched at a time (`Vocabulary.containing`)

class Kind(enum.IntFlag):
    """What kind of token an id is, combined bitwise."""

    NONE = 0
    SPECIAL = 1  # added, not merged: <|endoftext|>, <s>, <unk>
    BYTE_FALLBACK = 2  # a SentencePiece byte piece such as <0xE4>
    NOT_UTF8 = 4  # its bytes are not valid UTF-8 on their own (part of a character)
    UNUSED = 8  # an id no token has (o200k_base has gaps below its special tokens)


FILTERS = {  # name -> (kind bits that must be set, description)
    "all": (Kind.NONE, "every token"),
    "special": (Kind.SPECIAL, "special tokens"),
    "byte-fallback": (Kind.BYTE_FALLBACK, "byte-fallback pieces (<0xNN>)"),
    "not-utf8": (Kind.NOT_UTF8, "tokens that are not valid UTF-8 on their own"),
}

SORT_KEYS = ("id", "length", "count")


def _all_token_bytes(tok: Tokenizer) -> tuple[list[bytes], np.ndarray]:
    """Each id's bytes (b"" for an unused id) and the unused ids."""
    n = tok.n_vocab
    ranks = getattr(tok, "mergeable_ranks", None)
    if ranks is not None:  # tiktoken-style: one dict holds every ordinary token
        data = [b""] * n
        used = bytearray(n)
        for token, rank in ranks.items():
            data[rank] = token
            used[rank] = 1
        for text, i in tok.special_tokens.items():
            data[i] = text.encode("utf-8")
            used[i] = 1
        return data, np.flatnonzero(np.frombuffer(used, dtype=np.uint8) == 0)
    data, unused = [], []
    for i in range(n):
        try:
            data.append(tok.token_bytes(i))
        except TokexplorerError:
            data.append(b"")
            unused.append(i)
    return data, np.array(unused, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """Every id of one tokenizer: `token_bytes(i)` is `blob[offsets[i]:offsets[i + 1]]`."""

    name: str
    blob: bytes
    offsets: np.ndarray  # int64 [n + 1]
    kinds: np.ndarray  # uint8 [n]: Kind bits
    scores: np.ndarray | None = None  # float [n]: SentencePiece piece scores, None for other families

    @classmethod
    def of(cls, tok: Tokenizer) -> "Vocabulary":
        """Read a tokenizer's vocabulary.

        >>> from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer
        >>> v = Vocabulary.of(TiktokenTokenizer.from_ranks("toy", {b"a": 0, b"\\xe2": 1}, r"\\S", {"<|x|>": 3}))
        >>> [v.token_bytes(i) for i in range(4)], [Kind(k).name for k in v.kinds]
        ([b'a', b'\\xe2', b'', b'<|x|>'], ['NONE', 'NOT_UTF8', 'UNUSED', 'SPECIAL'])
        """
        data, unused = _all_token_bytes(tok)
        n = len(data)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, data), dtype=np.int64, count=n), out=offsets[1:])
        kinds = np.zeros(n, dtype=np.uint8)
        # Most tokens are ASCII; only the others need a decode attempt.
        for i, token in enumerate(data):
            if not token.isascii() and not is_utf8(token):
                kinds[i] = Kind.NOT_UTF8
        kinds[unused] = Kind.UNUSED
        kinds[list(tok.special_tokens.values())] = Kind.SPECIAL
        scores = None
        pieces = getattr(tok, "pieces", None)
        if pieces is not None:
            for i, piece in enumerate(pieces):
                if _BYTE_PIECE.fullmatch(piece):
                    kinds[i] = Kind.BYTE_FALLBACK | Kind(int(kinds[i]))
            scores = np.fromiter((tok.score(i) for i in range(n)), dtype=np.float64, count=n)
        return cls(tok.name, b"".join(data), offsets, kinds, scores)

    def __len__(self) -> int:
        return len(self.kinds)

    def token_bytes(self, token_id: int) -> bytes:
        return self.blob[self.offsets[token_id] : self.offsets[token_id + 1]]

    @cached_property
    def lengths(self) -> np.ndarray:
        """Byte length of each token (int64 [n])."""
        return np.diff(self.offsets)

    @cached_property
    def _array(self) -> np.ndarray:
        return np.frombuffer(self.blob, dtype=np.uint8)

    @cached_property
    def _folded(self) -> np.ndarray:
        """The joined bytes with ASCII letters lowered, for searches that ignore case."""
        return np.frombuffer(self.blob.lower(), dtype=np.uint8)

    def ids(self, kind: str = "all") -> np.ndarray:
        """The used ids with a filter's kind (see FILTERS), ascending."""
        if kind not in FILTERS:
            raise TokexplorerError(f"unknown filter {kind!r}; use one of {', '.join(FILTERS)}")
        bits = FILTERS[kind][0]
        usable = (self.kinds & Kind.UNUSED) == 0
        if bits:
            usable &= (self.kinds & bits) != 0
        return np.flatnonzero(usable)

    def containing(self, needle: bytes, *, match_case: bool = True) -> np.ndarray:
        """Ids of the tokens whose bytes contain `needle`, ascending (ASCII case folded unless
        `match_case`).

        >>> from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer
        >>> v = Vocabulary.of(TiktokenTokenizer.from_ranks("toy", {b"xa": 0, b"aa": 1, b"Ab": 2}, r"\\S+"))
        >>> v.containing(b"aa").tolist(), v.containing(b"ab", match_case=False).tolist()
        ([1], [2])
        """
        if not needle:
            return self.ids()
        hay = self._array if match_case else self._folded
        if not match_case:
            needle = needle.lower()
        m = len(needle)
        if m > len(hay):
            return np.zeros(0, dtype=np.int64)
        # Every position where the needle starts (overlapping ones too), one comparison per byte,
        # a block of the bytes at a time: a needle found everywhere in a crafted vocabulary's 60 MB
        # of bytes took 2.6 GB of positions at once.
        found = np.zeros(len(self.offsets) - 1, dtype=bool)
        n = len(hay) - m + 1
        for lo in range(0, n, SEARCH_BLOCK):
            hi = min(n, lo + SEARCH_BLOCK)
            hits = hay[lo:hi] == needle[0]
            for k in range(1, m):
                hits &= hay[lo + k : hi + k] == needle[k]
            starts = np.flatnonzero(hits) + lo
            owner = np.searchsorted(self.offsets, starts, side="right") - 1
            found[owner[starts + m <= self.offsets[owner + 1]]] = True  # not across two tokens' bytes
        ids = np.flatnonzero(found)
        return ids[(self.kinds[ids] & Kind.UNUSED) == 0]

    def search(self, query: str, *, by: str = "text", match_case: bool = False) -> np.ndarray:
        """Ids matching a query: by "text" (a substring of the token; ␣ stands for a space), by
        "hex" bytes ("e2 80 99", a substring of the token's bytes) or by "id" (ids separated by
        spaces or commas). Ascending. In text, ␣ and SentencePiece's ▁ stand for a space.

        >>> from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer
        >>> v = Vocabulary.of(TiktokenTokenizer.from_ranks("toy", {b" a": 0, b"\\xe2\\x80\\x99": 1}, r"\\S+"))
        >>> v.search("␣a").tolist(), v.search("80 99", by="hex").tolist(), v.search("1", by="id").tolist()
        ([0], [1], [1])
        """
        if by == "text":
            # ␣ (how views show a space) and ▁ (SentencePiece's space) both stand for a space.
            text = query.replace("\u2423", " ").replace("\u2581", " ")
            return self.containing(text.encode("utf-8", "surrogatepass"),
                                   match_case=match_case)
        if by == "hex":
            return self.containing(parse_hex(query))
        if by == "id":
            wanted = np.array(parse_ids(query, len(self)), dtype=np.int64)
            wanted = np.unique(wanted)
            return wanted[(self.kinds[wanted] & Kind.UNUSED) == 0] if len(wanted) else wanted
        raise TokexplorerError(f"unknown search {by!r}; search by text, hex or id")

    def order(self, ids: np.ndarray, key: str = "id", *, counts: np.ndarray | None = None,
              descending: bool = False) -> np.ndarray:
        """`ids` sorted by id, byte length or count in the text; ties stay in id order.

        >>> from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer
        >>> v = Vocabulary.of(TiktokenTokenizer.from_ranks("toy", {b"a": 0, b"bcd": 1, b"ef": 2}, r"\\S+"))
        >>> v.order(np.arange(3), "length", descending=True).tolist()
        [1, 2, 0]
        """
        ids = np.asarray(ids, dtype=np.int64)
        if key == "id":
            values = ids
        elif key == "length":
            values = self.lengths[ids]
        elif key == "count":
            if counts is None:
                raise TokexplorerError("sorting by count needs a text to count tokens in")
            values = counts[ids]
        else:
            raise TokexplorerError(f"unknown sort key {key!r}; use one of {', '.join(SORT_KEYS)}")
        if key == "id":
            return ids[::-1].copy() if descending else ids.copy()
        # lexsort: the last key is the primary one; ids (ascending) break ties.
        return ids[np.lexsort((ids, -values if descending else values))]

    def counts(self, encoding: Encoding) -> np.ndarray:
        """How many times each id occurs in an encoding (int64 [n]).

        >>> from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer
        >>> tok = TiktokenTokenizer.from_ranks("toy", {b"a": 0, b"b": 1, b"ab": 2}, r"\\S+")
        >>> Vocabulary.of(tok).counts(tok.encode("ab a ab")).tolist()
        [1, 0, 2]
        """
        ids = encoding.id_array
        if len(ids) and int(ids.max()) >= len(self):
            raise TokexplorerError(f"the encoding has ids beyond {self.name}'s vocabulary")
        return np.bincount(ids, minlength=len(self))

    def occurrences(self, encoding: Encoding) -> Occurrences:
        """Where each id of this vocabulary occurs in an encoding (counts and positions)."""
        return Occurrences.of(encoding.id_array, len(self))


@dataclass(frozen=True)
class Occurrences:
    """How many times each token id occurs in one encoding, and where: the browser's counts column
    and its "find in text".

    Holds the encoding's own id array (no copy) and a count per vocabulary id; finding an id's next
    occurrence scans the ids from a position (under a millisecond for a book's 300,000 tokens, 6 ms
    for the 13 million of 50 MB of text). An index of every occurrence would make that instant but
    cost eight bytes a token and a sort of them all: 100 MB and a second for 50 MB of text.
    """

    counts: np.ndarray  # int64 [n_vocab]: how many times each id occurs
    ids: np.ndarray  # the encoding's ids, in text order

    @classmethod
    def of(cls, ids: np.ndarray, n_vocab: int) -> Occurrences:
        """Count an id array over a vocabulary of n_vocab ids.

        >>> occ = Occurrences.of(np.array([5, 7, 5, 9]), 10)
        >>> int(occ.counts[5]), int(occ.counts[7]), occ.next_after(5, 0), occ.next_after(5, 2), occ.next_after(8, 0)
        (2, 1, 2, 0, None)
        """
        ids = np.asarray(ids)
        if len(ids) and (int(ids.max()) >= n_vocab or int(ids.min()) < 0):
            raise TokexplorerError(f"the encoding has ids outside a vocabulary of {n_vocab:,}")
        return cls(np.bincount(ids, minlength=n_vocab), ids)

    def next_after(self, token_id: int, after: int) -> int | None:
        """As `next_occurrence`: the first index of `token_id` after `after`, wrapping round."""
        if not 0 <= token_id < len(self.counts) or not self.counts[token_id]:
            return None
        return next_occurrence(self.ids, token_id, after)


SEARCH_BLOCK = 1 << 18  # ids compared at a time when looking for the next occurrence


def parse_hex(query: str) -> bytes:
    """Hex bytes as users write them: "e2 80 99", "E28099", "\\xe2\\x80", "0xe2,0x80".

    >>> parse_hex("e2 80 99"), parse_hex("\\\\xE2\\\\x80"), parse_hex("0x41, 0x42")
    (b'\\xe2\\x80\\x99', b'\\xe2\\x80', b'AB')
    """
    text = query.strip().lower().replace("\\x", " ").replace("0x", " ")
    digits = re.sub(r"[\s,:;-]+", " ", text).split()
    if any(len(d) % 2 for d in digits):  # "e2 8 99": each byte is two digits
        digits = [d.zfill(2) if len(d) == 1 else d for d in digits]
    joined = "".join(digits)
    if not re.fullmatch(r"(?:[0-9a-f]{2})*", joined):
        raise TokexplorerError(f"{query!r} is not hex bytes; write bytes as two hex digits each, e.g. 'e2 80 99'")
    return bytes.fromhex(joined)


def parse_ids(query: str, n: int) -> list[int]:
    """Token ids separated by spaces or commas, each checked against the vocabulary size."""
    parts = [p for p in re.split(r"[\s,]+", query.strip()) if p]
    ids = []
    for p in parts:
        if not p.isdigit():
            raise TokexplorerError(f"{p!r} is not a token id; ids are whole numbers 0..{n - 1}")
        if int(p) >= n:
            raise TokexplorerError(f"token id {p} is not in the vocabulary (0..{n - 1})")
        ids.append(int(p))
    return ids


def next_occurrence(ids: np.ndarray, token_id: int, after: int) -> int | None:
    """Index of the first token `token_id` after index `after` in `ids`, wrapping round; None if
    it does not occur.

    >>> next_occurrence(np.array([5, 7, 5, 9]), 5, 0), next_occurrence(np.array([5, 7, 5, 9]), 5, 2)
    (2, 0)
    """
    start = min(max(after + 1, 0), len(ids))
    for a, b in ((start, len(ids)), (0, start)):
        for lo in range(a, b, SEARCH_BLOCK):  # a common token is found in the first block
            hits = np.flatnonzero(ids[lo:min(lo + SEARCH_BLOCK, b)] == token_id)
            if len(hits):
                return lo + int(hits[0])
    return None
