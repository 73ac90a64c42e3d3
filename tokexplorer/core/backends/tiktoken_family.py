"""tiktoken encodings as Tokenizers: GPT-2, cl100k_base, o200k_base, Qwen, Tekken and any
`.tiktoken` file.

Encoding runs in tiktoken's own Rust core; this adapter adds what a view needs (token bytes, spans,
flags, chunks) and reads vocabulary files from disk, never from the network: `.tiktoken` files
(one "base64(token) rank" per line) and GPT-2's `encoder.json` + `vocab.bpe` pair. A tokenizer
may normalise the text to NFC first (as Qwen's do): tokens are then found on the NFC form and shown
on the user's text (see `normalization`).

It does not know where the built-in files live (see `registry`) and does not train. It runs past
400 lines because the adapter and the two file formats it reads belong to one library; the
readers are the second half of the module.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import tiktoken

from tokexplorer.core.patterns import NAMED_PATTERNS, TILING_PATTERNS, piece_spans, split
from tokexplorer.core.tokenizer import (MAX_SPECIAL_GAP, AllowedSpecial, RegexChunks, TokexplorerError, clean_text,
                                      native_errors, resolve_special)

if TYPE_CHECKING:
    import numpy as np

    from tokexplorer.core.encoding import Encoding, TokenIds

# subtle: numpy, regex and the Encoding module are imported where they are used, not here: a
# command that only wants a short text's ids (`encode_ids`) never needs them, and numpy alone is
# a fifth of a cold start.

# Characters encoded per tiktoken call on a long text: each call's temporary copies (the piece's
# UTF-8, its ids) stay the size of a piece, not of the text.
ENCODE_PIECE = 1 << 18


class TiktokenTokenizer:
    """A tiktoken `Encoding` behind the Tokenizer protocol.

    >>> tok = TiktokenTokenizer.from_ranks("toy", {bytes([b]): b for b in range(256)}, r"\\S+|\\s+")
    >>> tok.encode("hi").ids
    [104, 105]
    """

    family = "tiktoken"
    has_merges = True  # recovered from the ranks (`merge_tree`)
    chat_template = None  # a tiktoken file carries none
    bos_token = eos_token = ""
    save_formats: tuple[str, ...] = ()  # read from tiktoken's files, not saved from here

    def __init__(self, name: str, mergeable_ranks: dict[bytes, int], pattern: str,
                 special_tokens: dict[str, int], *, source: str = "", description: str = "",
                 normalizes: str | None = None):
        if normalizes not in (None, "NFC"):
            raise ValueError(f"unsupported normalisation {normalizes!r}")
        self.name = name
        self.source = source
        self.description = description
        self.normalizes = normalizes  # "NFC": the text is encoded in that form; None: as it is
        self._ranks = mergeable_ranks
        self._pattern = pattern
        self._specials = dict(special_tokens)
        where = source or name
        with native_errors(where):
            try:
                self._enc = tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=mergeable_ranks,
                                              special_tokens=self._specials)
            except ValueError as exc:  # tiktoken's own refusal (its split pattern does not compile)
                raise TokexplorerError(f"{where}: tiktoken cannot use this tokenizer: {exc}") from None

    # Each id's bytes (None in a gap between ids) and byte length: token bytes and spans come from
    # these tables, not from calls into tiktoken. Made when first asked for: a command that only
    # encodes ids never builds them (a tenth of a second for o200k's 200,000 tokens).

    @functools.cached_property
    def _bytes(self) -> list[bytes | None]:
        top = max(max(self._ranks.values(), default=0), max(self._specials.values(), default=0))
        tokens = list(self._ranks)
        if list(self._ranks.values()) == list(range(len(tokens))):  # ranks 0..n-1 in order, as shipped
            table: list[bytes | None] = tokens + [None] * (top + 1 - len(tokens))
        else:
            table = [None] * (top + 1)
            for token, rank in self._ranks.items():
                table[rank] = token
        for token, rank in self._specials.items():
            table[rank] = token.encode("utf-8")
        return table

    @functools.cached_property
    def _lengths(self) -> np.ndarray:
        import numpy as np

        lengths = np.zeros(len(self._bytes), dtype=np.int32)
        ranks = np.fromiter(self._ranks.values(), dtype=np.int64, count=len(self._ranks))
        lengths[ranks] = np.fromiter(map(len, self._ranks), dtype=np.int32, count=len(self._ranks))
        for token, rank in self._specials.items():
            lengths[rank] = len(token.encode("utf-8"))
        return lengths

    @functools.cached_property
    def _special_ids(self) -> np.ndarray:
        import numpy as np

        return np.array(sorted(self._specials.values()), dtype=np.int64)

    @classmethod
    def from_ranks(
        cls,
        name: str,
        mergeable_ranks: dict[bytes, int],
        pattern: str,
        special_tokens: dict[str, int] | None = None,
        **kwargs,
    ) -> "TiktokenTokenizer":
        """Build from ranks (token bytes -> rank), a split pattern and special tokens; what
        tiktoken's core would panic on later (a missing byte, a rank given twice) is refused now."""
        source = kwargs.get("source") or name
        check_ranks(mergeable_ranks, special_tokens or {}, source=source)
        return cls(name, mergeable_ranks, pattern, special_tokens or {}, **kwargs)

    def with_special_tokens(self, extra: dict[str, int | None]) -> "TiktokenTokenizer":
        r"""A new tokenizer with more special tokens (as one adds <|im_start|> for chat).

        An id of None takes the next free id. Ids must not collide with a rank or another token.

        >>> tok = TiktokenTokenizer.from_ranks("toy", {bytes([b]): b for b in range(256)}, r"\S+|\s+")
        >>> tok.with_special_tokens({"<|im_start|>": None}).special_tokens
        {'<|im_start|>': 256}
        """
        specials = dict(self._specials)
        taken = {**{r: repr(t) for t, r in self._ranks.items()}, **{i: t for t, i in specials.items()}}
        next_id = len(self._bytes)
        for token, token_id in extra.items():
            if not token:
                raise TokexplorerError("a special token cannot be empty")
            if token_id is None:
                token_id = next_id
            if specials.get(token) == token_id:
                continue
            if token in specials:
                raise TokexplorerError(
                    f"{token!r} is already a special token of {self.name} with id {specials[token]}"
                )
            if token_id in taken:
                raise TokexplorerError(
                    f"id {token_id} for {token!r} is already {taken[token_id]} in {self.name}; "
                    f"choose a free id (the next one is {next_id})"
                )
            specials[token] = token_id
            taken[token_id] = token
            next_id = max(next_id, token_id + 1)
        names = "+".join(t.strip("<|>") for t in extra)
        return TiktokenTokenizer.from_ranks(
            f"{self.name}+{names}", self._ranks, self._pattern, specials,
            source=self.source, description=f"{self.description}, with added special tokens",
            normalizes=self.normalizes,
        )

    # --- the protocol -------------------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        return len(self._bytes)

    @property
    def special_tokens(self) -> dict[str, int]:
        return dict(self._specials)

    @property
    def split_pattern(self) -> str:
        return self._pattern

    @property
    def byte_lengths(self) -> np.ndarray:
        """Each id's length in bytes (int32, indexed by id): spans without bytes objects."""
        return self._lengths

    @property
    def mergeable_ranks(self) -> dict[bytes, int]:
        """Token bytes -> rank, the merge order of byte-level BPE."""
        return self._ranks

    @property
    def tiktoken_encoding(self) -> tiktoken.Encoding:
        """The underlying tiktoken Encoding (for benchmarks and checks)."""
        return self._enc

    def encode_ids(self, text: str, *, allowed_special: AllowedSpecial | None = None) -> list[int]:
        """Ids only, at tiktoken's speed."""
        text = clean_text(text)
        allowed = resolve_special(self._specials, allowed_special, text)
        if self.normalizes:  # (the NFC form `encode` finds its tokens on; no alignment is needed)
            import unicodedata

            text = unicodedata.normalize("NFC", text)
        with native_errors(self.source or self.name):
            return self._enc.encode(text, allowed_special=allowed, disallowed_special=())

    def encode(self, text: str, *, allowed_special: AllowedSpecial | None = None) -> Encoding:
        import numpy as np

        from tokexplorer.core.backends.normalization import nfc_alignment
        from tokexplorer.core.encoding import Encoding, LazyTokenBytes

        text = clean_text(text)
        allowed = resolve_special(self._specials, allowed_special, text)
        alignment = nfc_alignment(text) if self.normalizes else None
        with native_errors(self.source or self.name):
            ids, ids_array = self._encode_pieces(alignment.normalized if alignment else text, allowed)
        special_mask = None
        if allowed and len(self._special_ids):
            special_mask = np.isin(ids_array, self._special_ids)
        token_bytes = LazyTokenBytes(ids, self.tokens_bytes)
        chunk_finder = ChunkFinder(self._pattern, frozenset(allowed))
        lengths = self._lengths[ids_array]
        if alignment is None:
            chunks, dropped = chunk_finder.dropped(text)
            return with_chunks(Encoding.from_byte_lengths(
                text, ids, token_bytes, lengths=lengths, special_mask=special_mask,
                chunk_finder=chunk_finder, id_array=ids_array, dropped=dropped,
            ), chunks)
        # Tokens were found on the NFC form: place them on the user's text. A token that covers
        # part of a run NFC changed covers all of it here, and is flagged NORMALIZED.
        # subtle: the chunks are the pattern's split of the user's text, not of the NFC form.
        norm_ends = np.cumsum(lengths)
        starts = alignment.to_text(norm_ends - lengths, end=False)
        ends = alignment.to_text(norm_ends, end=True)
        enc = Encoding(text, ids, token_bytes, starts, ends, special_mask, None, chunk_finder,
                       alignment.touched(starts, ends))
        enc.__dict__["id_array"] = ids_array
        return enc

    def _encode_pieces(self, text: str, allowed: set[str]) -> tuple[list[int] | TokenIds, np.ndarray]:
        """tiktoken's encode, as a sequence and as an array; the ids of a text of ENCODE_PIECE
        characters or more are kept as an array only (`TokenIds`), and a huge text with a named
        pattern goes in pieces (`piece_spans`), which give the same ids.

        subtle: a list of ids holds an int object per id (for 50 MB of text, ten million of
        them), and freed ints leave Python's arenas fragmented; so a long text's ids come as
        arrays (`encode_to_numpy`). A piece at a time, since tiktoken reads a str as UTF-8, and
        Python keeps that UTF-8 copy with a non-ASCII str for as long as the str lives: the
        text's would live as long as its Encoding, a piece's goes with the piece.
        """
        import numpy as np

        from tokexplorer.core.encoding import TokenIds

        if len(text) < ENCODE_PIECE:
            ids = self._enc.encode(text, allowed_special=allowed, disallowed_special=())
            return ids, np.asarray(ids, dtype=np.int64)
        spans = [(0, len(text))]
        if self._pattern in NAMED_PATTERNS.values() and not any("\n" in t for t in allowed):
            spans = piece_spans(text, size=ENCODE_PIECE)
        pieces = [self._enc.encode_to_numpy(text[a:b], allowed_special=allowed, disallowed_special=())
                  for a, b in spans]  # uint32: half the memory until joined
        ids_array = np.concatenate(pieces, dtype=np.int64)
        return TokenIds(ids_array), ids_array

    # --- capabilities -----------------------------------------------------------------

    def merge_tree(self, token_id: int):
        """The token's merges, recovered from the ranks (`core.analysis.merge_tree.tree_from_ranks`):
        tiktoken files store the merge order, not the merges."""
        from tokexplorer.core.analysis.merge_tree import tree_from_ranks

        return tree_from_ranks(self._ranks, self.token_bytes(token_id))

    def locality(self) -> RegexChunks | None:
        """Specials first, then the split pattern's chunks, each BPE-encoded alone by tiktoken;
        None without tiktoken's per-chunk encoder (then an edit re-encodes the whole text)."""
        chunks = self.chunk_encoder()
        if chunks is None:  # subtle: tiktoken's per-chunk BPE is private, and may go
            return None
        return RegexChunks(self._pattern, chunks, self.tokens_bytes, self._lengths)

    def library_encoder(self) -> tuple[Callable[[str], list[int]], str]:
        """tiktoken's `Encoding.encode` with every special token read as text."""
        enc = self._enc
        return (lambda text: enc.encode(text, disallowed_special=())), "tiktoken"

    def encode_piece_bytes(self, data: bytes) -> list[int]:
        """tiktoken's BPE of one chunk given as bytes (no split, no special tokens)."""
        with native_errors(self.source or self.name):
            return self._enc._encode_single_piece(data)

    def chunk_encoder(self) -> Callable[[list[str]], list[list[int]]] | None:
        """tiktoken's BPE of each of a list of chunks (what its encode runs on each match of the
        split pattern), for re-encoding a window of a text; None if this tiktoken has none."""
        return self._chunks if CHUNKS_EXACT else None

    def _chunks(self, pieces: list[str]) -> list[list[int]]:
        with native_errors(self.source or self.name):
            return [self._enc._encode_single_piece(piece) for piece in pieces]

    def decode_bytes(self, ids: list[int]) -> bytes:
        self._check_ids(ids)
        return b"".join(map(self._bytes.__getitem__, ids))

    def decode(self, ids: list[int]) -> str:
        """Text of the ids; bytes that are not valid UTF-8 become U+FFFD (errors='replace')."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    def token_bytes(self, token_id: int) -> bytes:
        self._check_ids([token_id])
        return self._bytes[token_id]

    def tokens_bytes(self, ids) -> list[bytes]:
        """Each (valid) id's bytes."""
        return list(map(self._bytes.__getitem__, ids))

    def _check_ids(self, ids: list[int]) -> None:
        table = self._bytes
        for i in ids:
            if not (0 <= i < len(table)) or table[i] is None:
                gaps = len(self._ranks) + len(self._specials) < len(table)
                raise TokexplorerError(
                    f"token id {i} is not in {self.name} (valid ids: 0..{len(table) - 1}"
                    + (", with gaps" if gaps else "") + ")"
                )


# Whether this tiktoken has its private per-chunk BPE (what `chunk_encoder` needs).
CHUNKS_EXACT = hasattr(tiktoken.Encoding, "_encode_single_piece")


def check_ranks(ranks: dict[bytes, int], special_tokens: dict[str, int], *, source: str) -> None:
    """Refuse a vocabulary tiktoken's core cannot build: each rank and special id used once,
    ids non-negative and not absurdly large.

    >>> check_ranks({b"a": 0, b"b": 0}, {}, source="x.tiktoken")
    Traceback (most recent call last):
    ...
    tokexplorer.core.tokenizer.TokexplorerError: x.tiktoken: rank 0 is given to both b'a' and b'b'; each token needs its own rank (the file is truncated or corrupt)
    """
    # subtle: as a sorted array, not sets of Python ints: for o200k_base's 200,000 ranks 13 ms
    # instead of 31.
    import numpy as np

    try:
        values = np.fromiter(ranks.values(), dtype=np.int64, count=len(ranks))
    except OverflowError:  # a rank beyond even int64
        raise TokexplorerError(f"{source}: rank {max(ranks.values(), key=abs)} is out of range") from None
    values.sort()
    repeated = np.flatnonzero(values[1:] == values[:-1])
    if len(repeated):
        rank = int(values[repeated[0]])
        first, second = [token for token, r in ranks.items() if r == rank][:2]
        raise TokexplorerError(
            f"{source}: rank {rank} is given to both {first!r} and {second!r}; "
            "each token needs its own rank (the file is truncated or corrupt)"
        )
    lowest, highest = (int(values[0]), int(values[-1])) if len(values) else (0, -1)
    if lowest < 0 or highest >= 1 << 31:
        raise TokexplorerError(f"{source}: rank {lowest if lowest < 0 else highest} is out of range")
    # subtle: the tables are indexed by id, so a rank is memory: one of 2^30 among 257 tokens
    # would take gigabytes. Ranks may leave gaps, but not more than the vocabulary can explain.
    from tokexplorer.core.files.file_budget import check_id

    check_id(highest, len(values), source=source, what=f"a token ({ranks_token(ranks, highest)!r})")
    taken: set[int] = set()  # the special ids so far
    for token, token_id in special_tokens.items():
        if not isinstance(token, str) or not token:  # tiktoken's core would match "" for ever
            raise TokexplorerError(f"{source}: special token {token!r} (id {token_id!r}) is empty or "
                                   "not text; each special token needs some text")
        if not isinstance(token_id, int) or isinstance(token_id, bool) or token_id < 0:
            raise TokexplorerError(f"{source}: special token {token!r} has id {token_id!r}; ids are "
                                   "whole numbers from 0")
        if token_id > highest + MAX_SPECIAL_GAP:
            raise TokexplorerError(
                f"{source}: special token {token!r} has id {token_id:,}, far beyond the vocabulary "
                f"(ranks up to {highest:,}); use an id below {highest + MAX_SPECIAL_GAP:,}"
            )
        at = int(values.searchsorted(np.int64(token_id)))
        if token_id in taken or (at < len(values) and values[at] == token_id):
            raise TokexplorerError(f"{source}: special token {token!r} has id {token_id}, which is "
                                   "already a token's rank or another special token's id")
        taken.add(token_id)


def ranks_token(ranks: dict[bytes, int], rank: int) -> bytes | None:
    """The token of a rank (a search: for messages only)."""
    return next((token for token, r in ranks.items() if r == rank), None)


def require_every_byte(ranks: dict[bytes, int], *, source: str) -> dict[bytes, int]:
    """A vocabulary file must make every byte a token: tiktoken's core panics on a byte it lacks.

    >>> require_every_byte({b"a": 0}, source="x.tiktoken")
    Traceback (most recent call last):
    ...
    tokexplorer.core.tokenizer.TokexplorerError: x.tiktoken: byte 0x00 is not a token (a byte-level vocabulary has all 256); the file is truncated or not a byte-level BPE vocabulary
    """
    missing = next((b for b in range(256) if bytes([b]) not in ranks), None)
    if missing is not None:
        raise TokexplorerError(
            f"{source}: byte 0x{missing:02X} is not a token (a byte-level vocabulary has all 256); "
            "the file is truncated or not a byte-level BPE vocabulary"
        )
    return ranks


class ChunkFinder:
    """The pre-split as tiktoken does it: allowed special tokens first, the regex in between (minbpe's
    Regex tokenizer splits the same way: `trained_bpe` uses it too)."""

    def __init__(self, pattern: str, allowed_special: frozenset[str]):
        self.pattern = pattern
        self.allowed_special = allowed_special

    def dropped(self, text: str) -> tuple[list[tuple[int, int]] | None, list[tuple[int, int]]]:
        """(the chunks, or None when not computed; the spans of `text` no chunk covers).

        subtle: a custom pattern need not match everywhere ("[a-z]+" skips spaces and
        punctuation); minbpe and tiktoken encode only the matches, so that text has no token.
        The patterns known to tile every text match everywhere: no split is run for them (on a
        book it would take 50 ms and more).

        >>> ChunkFinder("[a-z]+", frozenset()).dropped("hi, there!")
        ([(0, 2), (4, 9)], [(2, 4), (9, 10)])
        """
        if self.pattern in TILING_PATTERNS:
            return None, []
        from tokexplorer.core.encoding import uncovered

        chunks = self(text)
        return chunks, uncovered(chunks, len(text))

    def __call__(self, text: str) -> list[tuple[int, int]]:
        if not self.allowed_special:
            return split(text, self.pattern)
        import regex

        special_re = regex.compile("|".join(regex.escape(t) for t in sorted(self.allowed_special)))
        chunks: list[tuple[int, int]] = []
        pos = 0
        for m in special_re.finditer(text):
            chunks += [(a + pos, b + pos) for a, b in split(text[pos : m.start()], self.pattern)]
            chunks.append(m.span())
            pos = m.end()
        chunks += [(a + pos, b + pos) for a, b in split(text[pos:], self.pattern)]
        return chunks


def with_chunks(enc: Encoding, chunks: list[tuple[int, int]] | None) -> Encoding:
    """`enc`, keeping the chunks found already (the chunk view then runs no split again)."""
    if chunks is not None:
        import numpy as np

        spans = np.asarray(chunks, dtype=np.int64).reshape(-1, 2)
        enc.keep_chunk_spans(spans[:, 0].copy(), spans[:, 1].copy())
    return enc


# --- files ------------------------------------------------------------------------------------


def parse_tiktoken_bpe(data: bytes, *, source: str = "the file") -> dict[bytes, int]:
    """Parse a `.tiktoken` file's bytes: one "base64(token) rank" per line.

    >>> import base64
    >>> ranks = parse_tiktoken_bpe(b"".join(base64.b64encode(bytes([i])) + b" %d\\n" % i for i in range(256)))
    >>> len(ranks), ranks[b"a"]
    (256, 97)
    """
    import base64
    import binascii

    from tokexplorer.core.files.file_budget import check_id, check_token_count

    # subtle: the lines are counted before they are split (one token a line): a file of newlines
    # would otherwise become a list of a hundred million lines.
    n_lines = data.count(b"\n") + data.count(b"\r") + 1
    check_token_count(n_lines, source=source, what="lines")
    ranks: dict[bytes, int] = {}
    lines_of: dict[int, int] = {}  # rank -> line number
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError
            token, rank = base64.b64decode(parts[0], validate=True), int(parts[1])
        except (ValueError, binascii.Error):
            raise TokexplorerError(
                f"{source}: line {lineno} is not 'base64-token rank'; "
                "is this a .tiktoken file? (it may be truncated or of another format)"
            ) from None
        if rank in lines_of or token in ranks:
            what = f"rank {rank} is on line {lines_of[rank]} too" if rank in lines_of else "the token is there twice"
            raise TokexplorerError(
                f"{source}: line {lineno}: {what}; the .tiktoken file is truncated or corrupt"
            )
        check_id(rank, n_lines, source=f"{source}: line {lineno}", what="the token")
        ranks[token] = rank
        lines_of[rank] = lineno
    if not ranks:
        raise TokexplorerError(f"{source}: no tokens found; is this a .tiktoken file?")
    return require_every_byte(ranks, source=source)


def gpt2_byte_decoder() -> dict[str, int]:
    """GPT-2's printable stand-ins for bytes in encoder.json / vocab.bpe: character -> byte.

    Printable Latin-1 bytes stand for themselves; the other 68 bytes are shifted to U+0100 onwards
    in byte order, so 'Ġ' (U+0120) is the space byte 0x20.

    >>> gpt2_byte_decoder()["Ġ"]
    32
    """
    printable = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
    mapping = {chr(b): b for b in printable}
    shifted = [b for b in range(256) if b not in mapping.values()]
    for n, b in enumerate(shifted):
        mapping[chr(256 + n)] = b
    return mapping


def parse_gpt2_files(
    encoder_json: bytes, vocab_bpe: bytes, *, source: str = "encoder.json"
) -> tuple[dict[bytes, int], dict[str, int]]:
    """Ranks and special tokens from GPT-2's encoder.json and vocab.bpe.

    The ranks are the encoder's ids; vocab.bpe is checked against them (merge i makes rank 256+i),
    since tiktoken assumes ranks are merge priorities.
    """
    import json

    decoder = gpt2_byte_decoder()

    def to_bytes(s: str) -> bytes:
        try:
            return bytes(decoder[c] for c in s)
        except KeyError:
            raise TokexplorerError(f"{source}: {s!r} is not in GPT-2's byte alphabet") from None

    from tokexplorer.core.files.file_budget import check_token_count, parse_json

    encoder = parse_json(encoder_json, source=source, kind="GPT-2 encoder.json")
    if not isinstance(encoder, dict):
        raise TokexplorerError(f"{source}: not a GPT-2 encoder.json (a JSON object of token -> id)")
    check_token_count(len(encoder), source=source)
    for token, value in encoder.items():
        if not isinstance(value, int) or isinstance(value, bool):
            raise TokexplorerError(
                f"{source}: the id of {token!r} is {json.dumps(value)}, not a whole number; "
                "a GPT-2 encoder.json maps each token to an integer id"
            )
    special = {k: v for k, v in encoder.items() if k.startswith("<|") and k.endswith("|>")}
    ranks = {to_bytes(k): v for k, v in encoder.items() if k not in special}
    check_token_count(vocab_bpe.count(b"\n"), source=f"{source}: vocab.bpe", what="lines of merges")
    try:
        lines = vocab_bpe.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        raise TokexplorerError(f"{source}: vocab.bpe is not UTF-8 text") from None
    merges = [line.split() for line in lines[1:] if line.strip()]
    for i, pair in enumerate(merges):
        if len(pair) != 2 or ranks.get(to_bytes(pair[0]) + to_bytes(pair[1])) != 256 + i:
            raise TokexplorerError(
                f"{source}: vocab.bpe line {i + 2} does not match encoder.json "
                "(merge i must make token 256+i); are the two files from the same tokenizer?"
            )
    return require_every_byte(ranks, source=source), special


def load_tiktoken_file(path: Path, pattern: str, *, name: str | None = None) -> TiktokenTokenizer:
    """A user's `.tiktoken` file with the given split pattern and no special tokens."""
    from tokexplorer.core.files.file_budget import read_limited

    ranks = parse_tiktoken_bpe(read_limited(path), source=str(path))
    return TiktokenTokenizer.from_ranks(
        name or path.stem, ranks, pattern, source=str(path), description="tiktoken file"
    )
