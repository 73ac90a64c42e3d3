"""The tokenizer stored in a `.gguf` model file's metadata, run through the matching family.

`files.gguf_metadata` reads the metadata (`tokenizer.ggml.model`, `.pre`, `.tokens`, `.merges`,
`.scores`, `.token_type`) within what the file holds; tensors are never read. Two kinds of vocabulary:

- `gpt2` (byte-level BPE: Llama 3, Qwen 2, DeepSeek V3, Mistral Tekken, GPT-2): run by the
  `tokenizers` core, built in memory as a tokenizer.json with the split pattern that `pre` names.
  subtle: not through tiktoken, although its core is faster: llama.cpp, like `tokenizers`, merges
  the adjacent pair that comes first in the merge list, while tiktoken merges the pair whose
  result has the lowest id, and the two disagree when ids are not in merge order. An unknown `pre`
  is refused, naming the known ones.
- `llama` (SentencePiece-style: Llama 1 and 2, Mistral 7B): pieces, scores and types become a
  SentencePiece BPE ModelProto (identity normalisation, byte fallback when the vocabulary has byte
  pieces, a dummy prefix unless `tokenizer.ggml.add_space_prefix` is false), run by sentencepiece.
  llama.cpp's own SPM tokenizer merges by score the same way.

Other models (`bert`, `t5`, `rwkv`, ...) are refused with the reason. This module writes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

from tokexplorer.core.tokenizer import Tokenizer, TokexplorerError
from tokexplorer.core.patterns import GPT2_SPLIT_PATTERN, LLAMA3_PATTERN, QWEN_PATTERN, TEKKEN_PATTERN

DEEPSEEK_V3_PATTERNS = [
    r"\p{N}{1,3}",
    "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"""
    r"""| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
]
# llama.cpp's names for the split (tokenizer.ggml.pre) -> the regexes applied in turn.
PRE_PATTERNS: dict[str, list[str]] = {
    "gpt-2": [GPT2_SPLIT_PATTERN],
    "llama-bpe": [LLAMA3_PATTERN],
    "llama3": [LLAMA3_PATTERN],
    "qwen2": [QWEN_PATTERN],
    "deepseek-v3": DEEPSEEK_V3_PATTERNS,
    "tekken": [TEKKEN_PATTERN],
}
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6  # token_type values


def read_vocabulary(path: Path) -> dict:
    """The tokenizer fields of a GGUF file's metadata, as plain Python values, each of the type
    llama.cpp writes and within what the file holds (`files.gguf_metadata`)."""
    from tokexplorer.core.files.gguf_metadata import read_tokenizer_metadata

    out = read_tokenizer_metadata(path, check=lambda fields: _check_unknown(path, fields))
    if "model" not in out or "tokens" not in out:
        raise TokexplorerError(
            f"{path}: this GGUF file has no tokenizer in its metadata (no tokenizer.ggml.model / "
            "tokenizer.ggml.tokens); open the model's own .gguf, not an adapter or a projector"
        )
    n = len(out["tokens"])
    for key in ("bos_token_id", "eos_token_id"):
        if key in out and not 0 <= out[key] < n:
            raise TokexplorerError(f"{path}: tokenizer.ggml.{key} is {out[key]:,}, not one of the "
                                   f"{n:,} token ids; the file is corrupt or crafted")
    return out


def _check_unknown(path: Path, fields: dict) -> None:
    """A 'llama' vocabulary is refused without an unknown token before its strings are decoded
    (a crafted file of two million tokens took 5 s and 387 MB to be refused)."""
    if fields.get("model") == "llama" and "tokens" in fields and UNKNOWN not in (fields.get("token_type") or ()):
        raise TokexplorerError(f"{path}: a 'llama' vocabulary needs an unknown token (type 2)")


def load_gguf(path: Path) -> Tokenizer:
    """A tokenizer from a .gguf file's metadata."""
    vocab = read_vocabulary(path)
    model = vocab["model"]
    if model == "gpt2":
        return _byte_level_bpe(path, vocab)
    if model == "llama":
        return _sentencepiece(path, vocab)
    raise TokexplorerError(
        f"{path}: its tokenizer is of type {model!r}, which tokexplorer does not run yet (it runs "
        "'gpt2' byte-level BPE and 'llama' SentencePiece-style vocabularies)"
    )


def _byte_level_bpe(path: Path, vocab: dict) -> Tokenizer:
    from tokexplorer.core.backends.hf_tokenizers import TokenizersTokenizer

    pre = vocab.get("pre", "gpt-2") or "gpt-2"
    if pre not in PRE_PATTERNS:
        raise TokexplorerError(
            f"{path}: its split pattern is named {pre!r}, which tokexplorer does not know; known: "
            f"{', '.join(PRE_PATTERNS)}"
        )
    tokens = vocab["tokens"]
    types = vocab.get("token_type") or [NORMAL] * len(tokens)
    if len(types) != len(tokens):
        raise TokexplorerError(f"{path}: {len(tokens)} tokens but {len(types)} token types")
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": types[i] == CONTROL}
             for i, t in enumerate(tokens) if types[i] in (CONTROL, USER_DEFINED)]
    splits = [{"type": "Split", "pattern": {"Regex": p}, "behavior": "Isolated", "invert": False}
              for p in PRE_PATTERNS[pre]]
    spec = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": splits + [
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                    "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": False,
                  "byte_fallback": False, "ignore_merges": False,
                  "vocab": {t: i for i, t in enumerate(tokens)},
                  "merges": list(vocab.get("merges") or [])},
    }
    return TokenizersTokenizer(
        json.dumps(spec, ensure_ascii=False), name=path.stem, source=str(path),
        description=f"GGUF byte-level BPE, split pattern {pre!r} (run by tokenizers)",
    )


def _sentencepiece(path: Path, vocab: dict) -> Tokenizer:
    from sentencepiece import sentencepiece_model_pb2 as pb

    from tokexplorer.core.backends.sentencepiece_family import SentencePieceTokenizer

    tokens = vocab["tokens"]
    scores = vocab.get("scores")
    types = vocab.get("token_type") or [NORMAL] * len(tokens)
    if scores is None or len(scores) != len(tokens) or len(types) != len(tokens):
        raise TokexplorerError(
            f"{path}: a 'llama' vocabulary needs one score and one type per token "
            f"({len(tokens)} tokens, {len(scores or [])} scores, {len(types)} types)"
        )
    proto = pb.ModelProto()
    kinds = {NORMAL: pb.ModelProto.SentencePiece.NORMAL, UNKNOWN: pb.ModelProto.SentencePiece.UNKNOWN,
             CONTROL: pb.ModelProto.SentencePiece.CONTROL,
             USER_DEFINED: pb.ModelProto.SentencePiece.USER_DEFINED,
             UNUSED: pb.ModelProto.SentencePiece.UNUSED, BYTE: pb.ModelProto.SentencePiece.BYTE}
    for piece, score, kind in zip(tokens, scores, types):
        proto.pieces.add(piece=piece, score=float(score), type=kinds.get(int(kind), kinds[NORMAL]))
    proto.trainer_spec.model_type = pb.TrainerSpec.BPE
    proto.trainer_spec.vocab_size = len(tokens)
    proto.trainer_spec.byte_fallback = BYTE in types
    proto.trainer_spec.unk_id = list(types).index(UNKNOWN)
    for name, key in (("bos_id", "bos_token_id"), ("eos_id", "eos_token_id")):
        value = vocab.get(key)
        setattr(proto.trainer_spec, name, int(value) if value is not None else -1)
    proto.trainer_spec.pad_id = -1
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.add_dummy_prefix = bool(vocab.get("add_space_prefix", True))
    proto.normalizer_spec.remove_extra_whitespaces = False
    proto.normalizer_spec.escape_whitespaces = True
    return SentencePieceTokenizer(
        proto.SerializeToString(), name=path.stem, source=str(path),
        description="GGUF SentencePiece-style vocabulary (run by sentencepiece as BPE)",
    )
