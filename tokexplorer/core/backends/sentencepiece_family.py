"""SentencePiece models as Tokenizers: the Llama-style built-in and any `.model` file.

Encoding runs in sentencepiece's own C++ core. This adapter hides its double API and `out_type`,
turns pieces into bytes ('▁' is a space, '<0xNN>' is one byte), and finds each token's place in
the text: from the piece lengths when the model keeps the text as it is (identity normalisation, as
Llama's), otherwise from sentencepiece's own offsets.

It does not train (see the training module).
"""

from __future__ import annotations

import functools
import re
import threading
from typing import TYPE_CHECKING

import sentencepiece as spm

from tokexplorer.core.tokenizer import (AllowedSpecial, SentencePieceModel, TokexplorerError, clean_text,
                                      resolve_special)

if TYPE_CHECKING:
    import numpy as np

    from tokexplorer.core.encoding import Encoding, TokenByteTable

# subtle: numpy and the Encoding module are imported where they are used, and the per-piece tables
# are made when first asked for: a command that only wants a short text's ids (`encode_ids`)
# pays for neither (sentencepiece loads the Llama model in 10 ms; the tables took 60).

_BYTE_PIECE = r"<0x([0-9A-Fa-f]{2})>"  # a byte-fallback piece (compiled when the tables are made)
SPACE_MARK = "\u2581"  # '▁', SentencePiece's visible space


class SentencePieceTokenizer:
    """A SentencePiece model behind the Tokenizer protocol."""

    family = "sentencepiece"
    split_pattern = None  # the model splits on its own: no regex
    chat_template = None  # a .model carries none
    bos_token = eos_token = ""
    save_formats: tuple[str, ...] = ("sentencepiece",)  # the model as it is

    @property
    def has_merges(self) -> bool:
        """BPE models are built by merges (their scores give the order); unigram models are not."""
        return self.options.get("model_type") == "bpe"

    @property
    def normalizes(self) -> str | None:
        """The model's normalisation rule ("nmt_nfkc", ...) and whether it removes extra
        whitespace; None for identity normalisation that keeps whitespace (Llama's)."""
        rule = self.options.get("name")
        parts = [str(rule)] if rule and rule != "identity" else []
        if self.options.get("remove_extra_whitespaces", True):
            parts.append("extra whitespace removed")
        return ", ".join(parts) or None

    def merge_tree(self, token_id: int):
        """A BPE model's merges, recovered from the pieces' scores (minus the merge order); a
        unigram model has none (`core.analysis.merge_tree.tree_from_scores`)."""
        from tokexplorer.core.analysis.merge_tree import tree_from_scores

        return tree_from_scores(self, token_id)

    def locality(self) -> SentencePieceModel:
        """The serialized model: `core.incremental` reads from its options whether lines (and
        words) are encoded independently."""
        return SentencePieceModel(self.model_proto)

    def library_encoder(self):
        """sentencepiece's `SentencePieceProcessor.encode` (ids)."""
        return self._sp.encode, "sentencepiece"

    def __init__(self, model_proto: bytes, *, name: str, source: str = "", description: str = "",
                 special_tokens: dict[str, int] | None = None):
        """`special_tokens`: the model's control and unknown pieces when the caller read them from
        this very model before (the registry keeps a built-in's with its checked file's stamp,
        `vocab_cache`); None reads them from the model (15 ms for 32,000 pieces)."""
        self.name = name
        self.source = source
        self.description = description
        self.model_proto = model_proto
        sp = spm.SentencePieceProcessor()
        try:
            sp.LoadFromSerializedProto(model_proto)
        except (RuntimeError, OSError, TypeError):
            raise TokexplorerError(
                f"{source or name}: not a SentencePiece model (it may be truncated or corrupt)"
            ) from None
        self._sp = sp
        self._lock = threading.Lock()  # sentencepiece's processor is not documented thread-safe
        self._n = n = sp.GetPieceSize()
        # Control and unknown pieces are the special tokens (the policy needs them for every encode).
        if special_tokens is None:
            special_tokens = {sp.IdToPiece(i): i for i in range(n) if sp.IsControl(i) or sp.IsUnknown(i)}
        self._special_tokens = dict(special_tokens)

    @functools.cached_property
    def _pieces(self) -> list[str]:
        return self._sp.id_to_piece(list(range(self._n)))  # (one call for the list)

    @functools.cached_property
    def _token_bytes(self) -> list[bytes]:
        """Each piece's bytes: a byte piece its byte, a special piece its text, '▁' a space."""
        sp, out = self._sp, []
        for i, piece in enumerate(self._pieces):
            if sp.IsByte(i):
                out.append(bytes([int(re.fullmatch(_BYTE_PIECE, piece).group(1), 16)]))
            elif piece in self._special_tokens and self._special_tokens[piece] == i:
                out.append(piece.encode("utf-8"))
            else:
                out.append(piece.replace(SPACE_MARK, " ").encode("utf-8"))
        return out

    @functools.cached_property
    def _is_byte(self) -> np.ndarray:
        import numpy as np

        sp = self._sp
        return np.fromiter((sp.IsByte(i) for i in range(self._n)), dtype=bool, count=self._n)

    @functools.cached_property
    def _table(self) -> TokenByteTable:
        """The tokens' bytes as arrays, to check that tokens spell a text."""
        from tokexplorer.core.encoding import TokenByteTable

        return TokenByteTable(self._token_bytes)

    @functools.cached_property
    def _lengths(self) -> np.ndarray:
        return self._table.lengths

    @functools.cached_property
    def _special_ids(self) -> np.ndarray:
        import numpy as np

        return np.array(sorted(self._special_tokens.values()), dtype=np.int64)

    @functools.cached_property
    def _dummy_prefix(self) -> bool:
        return adds_dummy_prefix(self.model_proto)

    @functools.cached_property
    def options(self) -> dict[str, object]:
        """The model's trainer and normaliser options, read from its proto when first asked for
        (reading them imports protobuf's model classes: a tenth of a second a command that only
        wants ids need not pay)."""
        return _model_options(self.model_proto)

    # --- the protocol -------------------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        return self._n

    @property
    def special_tokens(self) -> dict[str, int]:
        return dict(self._special_tokens)

    @property
    def pieces(self) -> list[str]:
        """Every piece, by id, as sentencepiece spells it."""
        return list(self._pieces)

    def score(self, token_id: int) -> float:
        """The piece's score (log probability for unigram, minus merge order for BPE)."""
        self._check_ids([token_id])
        return self._sp.get_score(token_id)

    def encode_ids(self, text: str, *, allowed_special: AllowedSpecial | None = None) -> list[int]:
        """Ids only, at sentencepiece's speed."""
        text = clean_text(text)
        allowed = resolve_special(self._special_tokens, allowed_special, text)
        ids: list[int] = []
        for part, special_id in self._segments(text, allowed):
            ids.extend(self._sp.encode(part) if special_id is None else [special_id])
        return ids

    def encode(self, text: str, *, allowed_special: AllowedSpecial | None = None) -> Encoding:
        import numpy as np

        from tokexplorer.core.encoding import Encoding, LazyTokenBytes, TokenIds

        text = clean_text(text)
        allowed = resolve_special(self._special_tokens, allowed_special, text)
        ids: list[np.ndarray] = []
        starts: list[np.ndarray] = []
        ends: list[np.ndarray] = []
        offset = 0  # in UTF-8 bytes of the whole text
        for part, special_id in self._segments(text, allowed):
            n_part = len(part.encode("utf-8"))
            if special_id is not None:
                ids.append(np.array([special_id], dtype=np.int64))
                starts.append(np.array([offset], dtype=np.int64))
                ends.append(np.array([offset + n_part], dtype=np.int64))
            else:
                part_ids, part_starts, part_ends = self._encode_part(part)
                ids.append(part_ids)
                starts.append(part_starts + offset)
                ends.append(part_ends + offset)
            offset += n_part
        ids_arr = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
        token_ids = TokenIds(ids_arr)
        return Encoding(
            text,
            token_ids,
            LazyTokenBytes(token_ids, self._bytes_of),
            np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64),
            np.concatenate(ends) if ends else np.zeros(0, dtype=np.int64),
            np.isin(ids_arr, self._special_ids) if allowed else None,
            self._is_byte[ids_arr] if len(ids_arr) else None,
        )

    def decode_bytes(self, ids: list[int]) -> bytes:
        """Concatenated token bytes, minus the dummy-prefix space that encoding added.

        Control tokens (<s>, </s>) decode to nothing, as in sentencepiece.
        """
        self._check_ids(ids)
        out = b"".join(
            b"" if (i in self._special_tokens.values() and i != self._sp.unk_id()) else self._token_bytes[i]
            for i in ids
        )
        if self._dummy_prefix and out.startswith(b" "):
            out = out[1:]
        return out

    def decode(self, ids: list[int]) -> str:
        """Text of the ids; byte pieces that do not form UTF-8 become U+FFFD."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    def token_bytes(self, token_id: int) -> bytes:
        self._check_ids([token_id])
        return self._token_bytes[token_id]

    # --- helpers ------------------------------------------------------------------------

    def _segments(self, text: str, allowed: set[str]):
        """Split the text around allowed special tokens: (part, None) or (token, id)."""
        if not allowed or not text:
            if text:
                yield text, None
            return
        special_re = re.compile("|".join(re.escape(t) for t in sorted(allowed, key=len, reverse=True)))
        pos = 0
        for m in special_re.finditer(text):
            if m.start() > pos:
                yield text[pos : m.start()], None
            yield m.group(), self._special_tokens[m.group()]
            pos = m.end()
        if pos < len(text):
            yield text[pos:], None

    def _encode_part(self, part: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Ids and UTF-8 byte spans of one special-free part of the text, as int64 arrays.

        subtle: the check that the tokens spell the text works on arrays (`TokenByteTable.spells`):
        looking up and joining a book's 300,000 token bytes took 30 ms in one call.
        """
        import numpy as np

        with self._lock:
            listed = self._sp.encode(part)
        ids = np.array(listed, dtype=np.int64)
        lead = b" " if self._dummy_prefix else b""  # the dummy prefix's bytes
        if len(ids) and self._table.spells(ids, part.encode("utf-8"), lead):
            lengths = self._lengths[ids]
            ends = np.cumsum(lengths) - len(lead)
            return ids, np.clip(ends - lengths, 0, None), np.clip(ends, 0, None)
        # The model changed the text (normalisation, unknown pieces): ask for its offsets.
        with self._lock:
            proto = self._sp.encode(part, out_type="proto")
        starts = np.array([p.begin for p in proto.pieces], dtype=np.int64)
        ends = np.array([p.end for p in proto.pieces], dtype=np.int64)
        return np.array([p.id for p in proto.pieces], dtype=np.int64), starts, ends

    def _bytes_of(self, ids: list[int]) -> list[bytes]:
        return list(map(self._token_bytes.__getitem__, ids))

    def _check_ids(self, ids: list[int]) -> None:
        n = self._n
        for i in ids:
            if not 0 <= i < n:
                raise TokexplorerError(f"token id {i} is not in {self.name} (valid ids: 0..{n - 1})")


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if byte < 0x80:
            return value, at
        shift += 7


def _fields(data: bytes):
    """(field number, wire type, value) of a protobuf message's fields: an int for varints, the
    bytes of length-delimited fields, None for fixed-width ones (skipped)."""
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
        elif wire == 2:
            length, at = _varint(data, at)
            value, at = data[at:at + length], at + length
        elif wire in (1, 5):
            value, at = None, at + (8 if wire == 1 else 4)
        else:
            raise ValueError(f"protobuf wire type {wire}")
        yield number, wire, value


def adds_dummy_prefix(model_proto: bytes) -> bool:
    """Whether the model puts a space before the text (its normaliser's add_dummy_prefix, true
    unless the model says otherwise), read from the proto's wire format: ModelProto field 3 is the
    NormalizerSpec, whose field 3 is add_dummy_prefix. Reading it so, rather than through
    protobuf's model classes, keeps their import off every encode (`options` has the rest).
    A model this reader cannot follow counts as the default (sentencepiece itself has loaded it)."""
    try:
        for number, wire, value in _fields(model_proto):
            if number == 3 and wire == 2:
                for inner, inner_wire, flag in _fields(value):
                    if inner == 3 and inner_wire == 0:
                        return bool(flag)
    except (ValueError, IndexError):
        pass
    return True


def _model_options(model_proto: bytes) -> dict[str, object]:
    """Trainer and normaliser options of a model (byte_fallback, add_dummy_prefix, ...)."""
    from sentencepiece import sentencepiece_model_pb2

    m = sentencepiece_model_pb2.ModelProto()
    m.ParseFromString(model_proto)
    options: dict[str, object] = {}
    for spec in (m.trainer_spec, m.normalizer_spec):
        for fd, value in spec.ListFields():
            if fd.name in ("precompiled_charsmap",):
                continue
            options[fd.name] = value
    options.setdefault("add_dummy_prefix", m.normalizer_spec.add_dummy_prefix)
    options["model_type"] = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}.get(m.trainer_spec.model_type, "unigram")
    return options
