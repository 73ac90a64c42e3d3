"""The line locality rule of SentencePiece BPE (`core.tokenizer.SentencePieceModel`).

With byte fallback and identity normalisation, when no piece contains "\\n", a newline is always its
own byte piece, so no merge crosses it and each line is encoded on its own; a line after a newline
is encoded without the dummy-prefix space (a second processor). When no piece has '▁' after another
character (Llama's), no merge crosses from a word into the spaces after it either, so the window is
the words around the edit, not the whole line. `line_rule` reads those conditions off the model.

It does not handle unigram or normalising models (they get no rule: whole re-encodes).
"""

from __future__ import annotations

import threading

import numpy as np
import regex

from tokexplorer.core.backends.sentencepiece_family import SPACE_MARK
from tokexplorer.core.encoding import Encoding
from tokexplorer.core.incremental.recycler import Recycler
from tokexplorer.core.incremental.splice import Window, splice
from tokexplorer.core.incremental.state import State, next_special
from tokexplorer.core.tokenizer import Tokenizer

# Reverse match from a position: the run of spaces that ends there.
_SPACES_BEFORE = regex.compile(" *", flags=regex.REVERSE)
_WORD_END = regex.compile("(?<=[^ ]) ")  # a space after a non-space


class LineRule:
    """SentencePiece BPE where no piece contains "\\n": each line is encoded on its own, and with
    `space_boundaries` each run of spaces with the word after it."""

    split_beside_encode = False  # no regex split

    def __init__(self, tokenizer: Tokenizer, model_proto: bytes, no_prefix_proto: bytes, space_boundaries: bool):
        import sentencepiece as spm

        self._processors = {}
        for dummy_prefix, proto in ((True, model_proto), (False, no_prefix_proto)):
            sp = spm.SentencePieceProcessor()
            sp.LoadFromSerializedProto(proto)
            self._processors[dummy_prefix] = sp
        sp = self._processors[True]
        self._lock = threading.Lock()  # rules are shared by encoders; processors may not be thread-safe
        self._token_bytes = [tokenizer.token_bytes(i) for i in range(sp.get_piece_size())]
        self._bytes_of = lambda ids: [self._token_bytes[i] for i in ids]  # for LazyTokenBytes
        self._is_byte = np.array([sp.is_byte(i) for i in range(sp.get_piece_size())], dtype=bool)
        self._special_ids = tokenizer.special_tokens
        self._space_boundaries = space_boundaries

    def full(self, enc: Encoding, allowed: set[str]) -> State:
        enc.starts, enc.ends, enc.flags  # noqa: B018 (computed once, spliced after)
        return State(enc)

    def edit(self, state: State, p: int, removed: int, inserted: str, new: str, allowed: set[str],
             recycler: Recycler | None = None):
        enc = state.enc
        # subtle: text spelling the space mark '▁' does not survive as itself (its piece stands for
        # a space), so the backend takes that whole part's offsets from the model, which differ
        # from the lengths used here: such texts are re-encoded whole. (Checked for every code
        # point: '▁' is the only character the built-in's pieces do not reproduce.)
        if SPACE_MARK in new or SPACE_MARK in enc.text:
            return None
        delta = len(inserted) - removed
        w0 = self._region_start(new, p, allowed)
        w1 = self._region_end(new, p + len(inserted), allowed)
        n_tok = len(enc.ids)
        # subtle: a token starting at a region start starts exactly there (code points suffice).
        t0 = int(np.searchsorted(enc.starts, w0, side="left"))
        t1 = int(np.searchsorted(enc.starts, w1 - delta, side="left"))
        byte_w0 = int(enc.byte_starts[t0]) if t0 < n_tok else enc.n_bytes
        old_bytes = (int(enc.byte_starts[t1]) if t1 < n_tok else enc.n_bytes) - byte_w0

        ids: list[int] = []
        byte_starts, byte_ends = [], []
        offset = byte_w0
        pos = w0
        # Special tokens split the text into parts, each encoded with the dummy prefix (as the
        # backend does); the part a region continues is encoded without it.
        order = sorted(allowed, key=len, reverse=True)
        dummy_prefix = w0 == 0
        while pos < w1:
            at, special = next_special(new, pos, w1, order)
            if at > pos:
                part = new[pos:at]
                raw = part.encode("utf-8")
                with self._lock:
                    part_ids = self._processors[dummy_prefix].encode(part)
                pieces = [self._token_bytes[i] for i in part_ids]
                lead = 1 if dummy_prefix else 0
                if b"".join(pieces)[lead:] != raw:  # the model changed the text: not provably local
                    return None
                lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
                ends = np.cumsum(lengths) - lead
                ids += part_ids
                byte_starts.append(offset + np.clip(ends - lengths, 0, None))
                byte_ends.append(offset + np.clip(ends, 0, None))
                offset += len(raw)
            if special is not None:
                n = len(special.encode("utf-8"))
                ids.append(self._special_ids[special])
                byte_starts.append(np.array([offset], dtype=np.int64))
                byte_ends.append(np.array([offset + n], dtype=np.int64))
                offset += n
                at += len(special)
            pos, dummy_prefix = at, True
        ids_arr = np.asarray(ids, dtype=np.int64)
        empty = np.zeros(0, dtype=np.int64)
        win = Window(
            w0, w1, ids, [self._token_bytes[i] for i in ids],
            np.concatenate(byte_starts) if byte_starts else empty,
            np.concatenate(byte_ends) if byte_ends else empty,
            np.isin(ids_arr, list(self._special_ids.values())) if allowed else None,
            self._is_byte[ids_arr],
        )
        new_enc, changed = splice(
            enc, t0, t1, win, new, byte_w0, offset - byte_w0 - old_bytes, (p, p + len(inserted)),
            self._bytes_of, recycler=recycler,
        )
        return State(new_enc), changed

    # Region boundaries: the tokens before one do not depend on the text after it. A line start
    # always is one; with `space_boundaries`, so is a space after a non-space. No special token
    # contains "\n" or " " (checked), so none crosses a boundary. Both functions return
    # boundaries that read only unedited text.

    def _region_start(self, text: str, p: int, allowed: set[str]) -> int:
        """The last boundary at or before `p` that depends only on text[:p], and where the text
        after it continues a part (the window is encoded without the dummy prefix there)."""
        line = text.rfind("\n", 0, p) + 1
        space = text.rfind(" ", line, p) if self._space_boundaries else -1
        if space < 0:
            return line
        run = _SPACES_BEFORE.match(text, line, space + 1).start()
        if run > line and not any(text.endswith(t, 0, run) for t in allowed):
            return run
        return line

    def _region_end(self, text: str, end: int, allowed: set[str]) -> int:
        """The first boundary after `end` that depends only on text[end:]."""
        newline = text.find("\n", end)
        line_end = len(text) if newline < 0 else newline + 1
        if self._space_boundaries:
            # subtle: from `end + longest` on, a special token ending at the boundary lies in
            # unedited text, so it ended there before the edit too (it did not in "<s> " -> "s> "),
            # and the text after it is a new part in both: the old tokens there still hold.
            longest = max(map(len, allowed), default=0)
            word_end = _WORD_END.search(text, end + max(longest, 1), line_end)
            if word_end:
                return word_end.start()
        return line_end


def line_rule(tokenizer: Tokenizer, proto: bytes) -> LineRule | None:
    """The rule for a SentencePiece model, or None when its options do not make lines independent."""
    from sentencepiece import sentencepiece_model_pb2

    model = sentencepiece_model_pb2.ModelProto()
    model.ParseFromString(proto)
    normalizer, trainer = model.normalizer_spec, model.trainer_spec
    if not (
        trainer.model_type == sentencepiece_model_pb2.TrainerSpec.BPE
        and trainer.byte_fallback  # so "\n" is always the byte piece <0x0A>, never <unk>
        and normalizer.name == "identity"
        and not normalizer.remove_extra_whitespaces
        and not trainer.treat_whitespace_as_suffix
        and not any("\n" in piece.piece for piece in model.pieces)  # special tokens included
    ):
        return None
    # A '▁' after another character: one is left once the leading '▁'s are stripped.
    # (A str test, not a regex per piece: 32,000 regex calls took a second of the first edit.)
    space_boundaries = not any(
        SPACE_MARK in piece.piece.lstrip(SPACE_MARK) or " " in piece.piece for piece in model.pieces
    )
    normalizer.add_dummy_prefix = False
    return LineRule(tokenizer, proto, model.SerializeToString(), space_boundaries)
