"""Byte-level BPE tokenizers trained here (or read from minbpe files), behind the Tokenizer protocol.

A tokenizer is its merges (pair -> new id, in the order learned), a split pattern (None for Basic:
the text is one stream of bytes) and special tokens. It encodes as minbpe does: in each chunk,
repeatedly merge the pair that was learned first. For speed a Regex tokenizer encodes through
tiktoken's core, a `tiktoken.Encoding` built from the ranks, which merges by the rank of the
concatenated bytes instead. The two agree unless the vocabulary can read some token two ways
(e.g. "abc" learned as ("ab", "c") while ("a", "bc") are tokens too) in a way that changes the
result; such vocabularies are detected when the tokenizer is built and then encode with the Python
encoder, and `fast_path_note` says why. The Python encoder also gives `trace`: which merge applied
in what order within a chunk, for the GUI.

Basic has no chunks: its text is one stream of bytes, encoded in pieces (`basic_pieces`) cut only
between two bytes that stand side by side in no merged token, so the pieces' ids are the whole
text's and the Python encoder's lists (up to 200 bytes a byte of the piece) stay a piece's size.

It does not train (see `training.bpe`) nor read or write files (see `files.minbpe`).
"""

from __future__ import annotations

import heapq
import threading
from typing import TYPE_CHECKING, Iterable, Iterator, NamedTuple

from tokexplorer.core.tokenizer import (MAX_SPECIAL_GAP, AllowedSpecial, RegexChunks, TokexplorerError, clean_text,
                                      resolve_special)

if TYPE_CHECKING:
    from tokexplorer.core.encoding import Encoding

# tiktoken_family (and tiktoken), `encoding` and numpy are imported where they are used: training
# and saving never need them (`tokexplorer train` is a whole process a user waits for).
# subtle: tiktoken needs a pattern; Basic has none, and one piece per text would make tiktoken's
# merge loop quadratic, so Basic always uses the Python encoder (linear-logarithmic).
BASIC_PIECE = 1 << 16  # bytes at least in a piece of a Basic text (`basic_pieces`)
CUT_LOOK = 1 << 12  # bytes looked at a time for a place to cut one


class TraceStep(NamedTuple):
    """One merge while encoding a chunk: `pair` became `new_id`, giving `ids`."""

    pair: tuple[int, int]
    new_id: int
    ids: list[int]


class BPETokenizer:
    """A byte-level BPE: merges, a split pattern (None: Basic) and special tokens.

    >>> tok = BPETokenizer({(104, 105): 256}, None)
    >>> tok.encode("hihi").ids, tok.n_vocab
    ([256, 256], 257)
    """

    family = "bpe"
    has_merges = True  # the merges learned, in order (`merge_tree`)
    normalizes = None  # bytes as they are
    chat_template = None
    bos_token = eos_token = ""
    # minbpe's .model keeps the split pattern and the special tokens; the other two do not
    save_formats: tuple[str, ...] = ("minbpe", "tiktoken", "gpt2")

    def __init__(
        self,
        merges: dict[tuple[int, int], int],
        pattern: str | None,
        special_tokens: dict[str, int] | None = None,
        *,
        name: str = "trained",
        source: str = "",
        description: str = "",
    ):
        self.name = name
        self.source = source
        self.description = description or ("byte-level BPE, " + ("Basic (no split pattern)"
                                                                  if pattern is None else "Regex"))
        self.merges: dict[tuple[int, int], int] = {}  # (int, int) -> int, in the order learned
        self.vocab: dict[int, bytes] = {i: bytes([i]) for i in range(256)}  # int -> bytes
        for (a, b), new in merges.items():
            if new != 256 + len(self.merges) or a not in self.vocab or b not in self.vocab:
                raise TokexplorerError(
                    f"{source or name}: merge ({a}, {b}) -> {new} does not follow the earlier "
                    "merges (merge i must make id 256+i from known ids); the model is corrupt"
                )
            self.merges[(a, b)] = new
            self.vocab[new] = self.vocab[a] + self.vocab[b]
        self.split_pattern = pattern
        self._special = dict(special_tokens or {})
        for token, token_id in self._special.items():
            if not 0 <= token_id <= len(self.vocab) + MAX_SPECIAL_GAP:
                raise TokexplorerError(
                    f"{source or name}: special token {token!r} has id {token_id:,}; special ids run from "
                    f"{len(self.vocab)} to {len(self.vocab) + MAX_SPECIAL_GAP:,} here"
                )
            if token_id in self.vocab:
                raise TokexplorerError(
                    f"{source or name}: special token {token!r} has id {token_id}, which is "
                    f"already a byte or merged token; its id must be {256 + len(self.merges)} or more"
                )
            self.vocab[token_id] = token.encode("utf-8")
        self._cache: dict[bytes, list[int]] = {}  # chunk bytes -> ids, for the Python encoder
        self._junctions: bytes | None = None  # Basic: which byte pairs a merged token holds (`basic_pieces`)
        # The fast path is checked and built on first use: a tokenizer that is only saved
        # (`tokexplorer train`) never pays for it.
        self._lock = threading.Lock()
        self._checked = False
        self._note: str | None = None
        self._fast = None  # TiktokenTokenizer, or None for the Python encoder

    # --- the protocol -------------------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        return max(self.vocab) + 1

    @property
    def special_tokens(self) -> dict[str, int]:
        return dict(self._special)

    @property
    def fast_path(self) -> bool:
        """Whether encoding runs in tiktoken's core."""
        return self._fast_encoder() is not None

    @property
    def fast_path_note(self) -> str | None:
        """Why encoding does not run in tiktoken's core, or None when it does."""
        self._fast_encoder()
        return self._note

    def _fast_encoder(self):
        """tiktoken's encoder for these ranks, or None; checked and built once, thread-safe."""
        if not self._checked:
            with self._lock:
                if not self._checked:
                    self._note = self._rank_conflict()
                    if self._note is None:
                        from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer

                        self._fast = TiktokenTokenizer.from_ranks(self.name, self.mergeable_ranks,
                                                                  self.split_pattern, self._special)
                    self._checked = True
        return self._fast

    @property
    def mergeable_ranks(self) -> dict[bytes, int]:
        """Token bytes -> id for every byte and merged token (what a .tiktoken file holds)."""
        return {self.vocab[i]: i for i in range(256 + len(self.merges))}

    def encode_ids(self, text: str, *, allowed_special: AllowedSpecial | None = None) -> list[int]:
        """Ids only."""
        fast = self._fast_encoder()
        if fast is not None:
            return fast.encode_ids(text, allowed_special=allowed_special)
        return self._python_ids(clean_text(text), allowed_special)[0]

    def encode(self, text: str, *, allowed_special: AllowedSpecial | None = None) -> Encoding:
        fast = self._fast_encoder()
        if fast is not None:
            return fast.encode(text, allowed_special=allowed_special)
        text = clean_text(text)
        ids, allowed = self._python_ids(text, allowed_special)
        import numpy as np

        from tokexplorer.core.encoding import Encoding

        special_mask = None
        if allowed:
            special_mask = np.isin(np.asarray(ids, dtype=np.int64), [self._special[t] for t in allowed])
        from tokexplorer.core.backends.tiktoken_family import ChunkFinder, with_chunks

        finder = None if self.split_pattern is None else ChunkFinder(self.split_pattern, frozenset(allowed))
        chunks, dropped = finder.dropped(text) if finder else (None, [])
        return with_chunks(Encoding.from_byte_lengths(
            text, ids, [self.vocab[i] for i in ids], special_mask=special_mask, chunk_finder=finder,
            dropped=dropped,
        ), chunks)

    def decode_bytes(self, ids: list[int]) -> bytes:
        vocab = self.vocab
        try:
            return b"".join(vocab[i] for i in ids)
        except KeyError as exc:
            raise TokexplorerError(
                f"token id {exc.args[0]} is not in {self.name} (valid ids: 0..{self.n_vocab - 1})"
            ) from None

    def decode(self, ids: list[int]) -> str:
        """Text of the ids; bytes that are not valid UTF-8 become U+FFFD (errors='replace')."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    def token_bytes(self, token_id: int) -> bytes:
        return self.decode_bytes([token_id])

    # --- the Python encoder -------------------------------------------------------------

    def encode_chunk(self, data: bytes) -> list[int]:
        """minbpe's encoding of one chunk: merges applied in the order they were learned.

        >>> BPETokenizer({(97, 97): 256}, None).encode_chunk(b"aaa")
        [256, 97]
        """
        cached = self._cache.get(data)
        if cached is not None:
            return cached
        ids = list(data)
        n = len(ids)
        merges = self.merges
        if n >= 2:
            nxt = list(range(1, n + 1))
            nxt[-1] = -1
            prv = list(range(-1, n - 1))
            heap = [(merges[p], i) for i, p in enumerate(zip(ids, ids[1:])) if p in merges]
            heapq.heapify(heap)
            # subtle: equal ranks pop left to right, and a merge only creates pairs of higher rank,
            # so this is minbpe's "merge every occurrence of the first-learned pair" loop.
            while heap:
                new, pos = heapq.heappop(heap)
                q = nxt[pos]
                if q < 0 or ids[pos] < 0 or merges.get((ids[pos], ids[q])) != new:
                    continue
                ids[pos], ids[q] = new, -1
                right = nxt[q]
                nxt[pos] = right
                if right >= 0:
                    prv[right] = pos
                    rank = merges.get((new, ids[right]))
                    if rank is not None:
                        heapq.heappush(heap, (rank, pos))
                left = prv[pos]
                if left >= 0:
                    rank = merges.get((ids[left], new))
                    if rank is not None:
                        heapq.heappush(heap, (rank, left))
            ids = [i for i in ids if i >= 0]
        if len(data) <= 256:
            self._cache[data] = ids
        return ids

    def basic_pieces(self, blocks: Iterable[bytes], size: int | None = None) -> Iterator[bytes]:
        """A Basic text (its UTF-8 given in `blocks`, cut anywhere) in pieces of at least `size`
        bytes (default BASIC_PIECE; the last one shorter) whose `encode_chunk` ids are the whole
        text's: a piece ends only between two bytes that no merged token holds side by side. A
        stretch with no such place comes as one piece, however long (the caller may refuse it).

        subtle: a token that crosses a place is made of bytes on both sides, so it holds the two
        bytes there side by side; where no token does, no merge ever joins the two sides, and each
        side meets the merges in the same order (by rank) alone as in the whole. The pairs a token
        holds are those of its two parts and the one where they join, so the joins of the merges
        are all of them (`_junction_flags`).

        >>> tok = BPETokenizer({(97, 97): 256}, None)
        >>> list(tok.basic_pieces([b"aaab", b"aa"], size=2))  # not between two a's
        [b'aaa', b'baa']
        """
        import numpy as np

        size = BASIC_PIECE if size is None else size
        flags = np.frombuffer(self._junction_flags(), dtype=np.uint8)
        data = b""
        scanned = 0  # no place to cut in data[:scanned]
        for block in blocks:
            data += block
            start = 0
            while len(data) - start > size:
                at = max(start + size, scanned)
                cut = _first_free(data, at, flags)
                if cut < 0:
                    scanned = len(data)
                    break
                yield data[start:cut]
                start = cut
            if start:
                scanned = max(0, scanned - start)
                data = data[start:]
        if data:
            yield data

    def _junction_flags(self) -> bytes:
        """65,536 flags, one per byte pair (first byte * 256 + second): 1 where a merged token holds
        the two bytes side by side, i.e. where some merge joins a token ending in the first to one
        starting with the second."""
        if self._junctions is None:
            flags = bytearray(1 << 16)
            vocab = self.vocab
            for a, b in self.merges:
                flags[vocab[a][-1] << 8 | vocab[b][0]] = 1
            self._junctions = bytes(flags)
        return self._junctions

    def trace(self, chunk: str) -> list[TraceStep]:
        """Every merge of one chunk, in the order the encoder applies them.

        >>> [s.ids for s in BPETokenizer({(97, 97): 256, (256, 98): 257}, None).trace("aab")]
        [[256, 98], [257]]
        """
        ids = list(chunk.encode("utf-8"))
        steps = []
        while len(ids) >= 2:
            present = [p for p in zip(ids, ids[1:]) if p in self.merges]
            if not present:
                break
            pair = min(present, key=self.merges.__getitem__)
            new = self.merges[pair]
            out, i = [], 0
            while i < len(ids):
                if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
                    out.append(new)
                    i += 2
                else:
                    out.append(ids[i])
                    i += 1
            ids = out
            steps.append(TraceStep(pair, new, list(ids)))
        return steps

    def merge_tree(self, token_id: int):
        """The token's merge tree down to bytes, read off the learned merges (see `merge_tree`)."""
        from tokexplorer.core.analysis.merge_tree import tree_from_merges

        return tree_from_merges(self, token_id)

    def locality(self) -> RegexChunks | None:
        """Regex: specials first, then the pattern's chunks, each encoded alone by minbpe's encoder
        (`encode_chunk`; the tiktoken fast path gives the same ids, being only used where it does).
        Basic has no split: None."""
        if self.split_pattern is None:
            return None
        vocab = self.vocab
        return RegexChunks(
            self.split_pattern,
            lambda pieces: [self.encode_chunk(piece.encode("utf-8")) for piece in pieces],
            lambda ids: [vocab[i] for i in ids],
        )

    def library_encoder(self) -> None:
        """None: this encoder is tokexplorer's own (its fast path is tiktoken's core)."""
        return None

    # --- helpers ------------------------------------------------------------------------

    def _python_ids(self, text: str, allowed_special) -> tuple[list[int], set[str]]:
        from tokexplorer.core.backends.tiktoken_family import ChunkFinder

        allowed = resolve_special(self._special, allowed_special, text)
        finder = ChunkFinder(self.split_pattern, frozenset(allowed)) if self.split_pattern else None
        ids: list[int] = []
        spans = finder(text) if finder else _special_spans(text, allowed)
        for a, b in spans:
            piece = text[a:b]
            if piece in allowed:
                ids.append(self._special[piece])
            elif finder is None:
                for part in self.basic_pieces(utf8_blocks(piece)):
                    ids += self.encode_chunk(part)
            else:
                ids += self.encode_chunk(piece.encode("utf-8"))
        return ids, allowed

    def _rank_conflict(self) -> str | None:
        """Why tiktoken's merge-by-rank could differ from merge-by-pair here, or None."""
        if self.split_pattern is None:
            return "Basic (no split pattern): encoded by the Python encoder"
        n = 256 + len(self.merges)
        by_bytes: dict[bytes, int] = {}
        for i in range(n):
            other = by_bytes.setdefault(self.vocab[i], i)
            if other != i:
                return (f"tokens {other} and {i} have the same bytes {self.vocab[i]!r}; "
                        "encoded by the Python encoder")
        probe = None
        for (a, b), new in self.merges.items():
            data = self.vocab[new]
            for k in range(1, len(data)):
                u, v = by_bytes.get(data[:k]), by_bytes.get(data[k:])
                if u is not None and v is not None and (u, v) != (a, b):
                    # Two readings: check that both encoders agree on the token's own bytes.
                    if probe is None:
                        from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer

                        ranks = {self.vocab[i]: i for i in range(n)}
                        probe = TiktokenTokenizer.from_ranks("probe", ranks, self.split_pattern)
                    fast = probe.encode_piece_bytes(data)
                    if fast != self.encode_chunk(data):
                        return (f"token {new} ({data!r}) encodes differently by rank and by pair; "
                                "encoded by the Python encoder (slower, exact)")
                    break
        return None


def _special_spans(text: str, allowed: set[str]) -> list[tuple[int, int]]:
    """The text cut around allowed special tokens (Basic has no other split)."""
    if not text:
        return []
    if not allowed:
        return [(0, len(text))]
    from tokexplorer.core.backends.tiktoken_family import ChunkFinder

    return ChunkFinder(r"[\s\S]+", frozenset(allowed))(text)


def utf8_blocks(text: str, size: int = 1 << 20) -> Iterator[bytes]:
    """The text's UTF-8, `size` characters at a time (never a copy of the whole text as bytes).

    >>> list(utf8_blocks("héllo", 2))
    [b'h\\xc3\\xa9', b'll', b'o']
    """
    for start in range(0, len(text), size):
        yield text[start:start + size].encode("utf-8")


def _first_free(data: bytes, at: int, flags) -> int:
    """The first place p >= `at` (between data[p - 1] and data[p]) whose byte pair no merged token
    holds (`flags`: `_junction_flags` as a numpy array), or -1."""
    import numpy as np

    at = max(at, 1)
    while at < len(data):
        end = min(len(data), at + CUT_LOOK)
        window = np.frombuffer(data, dtype=np.uint8, count=end - at + 1, offset=at - 1)
        free = np.flatnonzero(flags[(window[:-1].astype(np.uint16) << 8) | window[1:]] == 0)
        if free.size:
            return at + int(free[0])
        at = end
    return -1
