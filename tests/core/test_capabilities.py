"""What each tokenizer declares it can do (`core.tokenizer.Tokenizer`) is what it really does.

Each declaration is checked against the tokenizer's own behaviour, not against a table: the split
pattern against the Encoding's chunks, `normalizes` against what a decode gives back, `merge_tree`
against the token's bytes, `locality()` against the full encode it describes, `library_encoder`
against our ids, `save_formats` against what the writers produce. The expected kinds per built-in
are listed once (`EXPECTED`), for the reader and so a backend that stops declaring one is caught.
"""

from __future__ import annotations

import unicodedata

import pytest

from tokexplorer.core.analysis.merge_tree import MergeNode
from tokexplorer.core.backends.trained_bpe import BPETokenizer
from tokexplorer.core.files.trained import FORMAT_FILTERS, save_formats, save_trained
from tokexplorer.core.incremental.encoder import IncrementalEncoder
from tokexplorer.core.patterns import GPT4_SPLIT_PATTERN, split
from tokexplorer.core.registry import builtin_names, get_builtin
from tokexplorer.core.tokenizer import (PipelineSplits, RegexChunks, SentencePieceModel, Tokenizer,
                                        TokexplorerError)

TEXT = "Hello world, it's 2024!\n  naïve café e\u0301 中文 👋 x"

# name -> (locality kind, normalises, incremental, library)
EXPECTED = {
    "gpt2": (RegexChunks, None, True, "tiktoken"),
    "cl100k_base": (RegexChunks, None, True, "tiktoken"),
    "o200k_base": (RegexChunks, None, True, "tiktoken"),
    "llama-sp": (SentencePieceModel, None, True, "sentencepiece"),
    "deepseek-v4": (PipelineSplits, None, True, "tokenizers"),
    "qwen2.5": (RegexChunks, "NFC", True, "tiktoken"),
    "qwen3.6": (RegexChunks, "NFC", True, "tiktoken"),
    "tekken": (RegexChunks, None, True, "tiktoken"),
}


@pytest.fixture(scope="module", params=builtin_names())
def tok(request) -> Tokenizer:
    return get_builtin(request.param)


@pytest.fixture(scope="module")
def trained() -> BPETokenizer:
    from tokexplorer.core.training.bpe import train

    return train("hello world, hello there; the world says hello " * 20, 300, pattern=GPT4_SPLIT_PATTERN,
                 special_tokens=["<|endoftext|>"])


def test_every_builtin_is_listed_here():
    assert sorted(EXPECTED) == sorted(builtin_names())


def test_the_protocol_is_satisfied(tok, trained):
    for t in (tok, trained):
        assert isinstance(t, Tokenizer)
        for name in ("split_pattern", "normalizes", "has_merges", "chat_template", "bos_token", "eos_token",
                     "save_formats"):
            getattr(t, name)  # declared, not left to a getattr default


def test_the_declared_kinds_of_each_builtin(tok):
    kind, normalizes, incremental, library = EXPECTED[tok.name]
    assert isinstance(tok.locality(), kind)
    assert tok.normalizes == normalizes
    assert IncrementalEncoder(tok).is_incremental == incremental
    assert tok.library_encoder()[1] == library
    assert tok.has_merges
    assert tok.chat_template is None and tok.save_formats == (() if library != "sentencepiece" else ("sentencepiece",))


def test_a_split_pattern_is_the_split_of_the_encoding(tok):
    """A declared pattern is the pre-split: the Encoding's chunks are its matches. Without one,
    the chunks come from the library's own pipeline, or there are none (SentencePiece)."""
    enc = tok.encode(TEXT)
    if tok.split_pattern is not None:
        assert enc.chunks == split(TEXT, tok.split_pattern)
    else:
        assert isinstance(tok.locality(), (PipelineSplits, SentencePieceModel))
        assert (enc.chunks is None) == isinstance(tok.locality(), SentencePieceModel)


def test_normalizes_says_whether_the_text_comes_back(tok):
    """A tokenizer that declares no normalisation gives back the text as it was (a decomposed
    é included); one that declares NFC gives back its NFC form."""
    ids = tok.encode(TEXT).ids
    if tok.normalizes is None:
        assert tok.decode(ids) == TEXT
    else:
        assert tok.normalizes == "NFC" and tok.decode(ids) == unicodedata.normalize("NFC", TEXT)


def test_a_merge_tree_rebuilds_its_token(tok):
    enc = tok.encode(TEXT)
    token_id = max(enc.ids, key=lambda i: len(tok.token_bytes(i)))  # the longest: several merges
    tree = tok.merge_tree(token_id)

    def check(node: MergeNode) -> None:
        if not node.is_leaf:
            assert node.left.bytes + node.right.bytes == node.bytes
            check(node.left)
            check(node.right)

    assert tree.id == token_id and tree.bytes == tok.token_bytes(token_id) and not tree.is_leaf
    check(tree)


def test_locality_describes_the_full_encode(tok):
    """The pieces a tokenizer says its encode works in, encoded as it says, are its encode."""
    loc = tok.locality()
    text = "Hello world, it's 2024!\n  naive cafe 中文 x"  # NFC already: Qwen's NFC is then the identity
    ids = tok.encode(text).ids
    if isinstance(loc, RegexChunks):
        chunks = [text[a:b] for a, b in split(text, loc.pattern)]
        assert [i for chunk_ids in loc.encode_chunks(chunks) for i in chunk_ids] == ids
        assert b"".join(loc.tokens_bytes(ids)) == text.encode("utf-8")
        if loc.byte_lengths is not None:
            assert [int(loc.byte_lengths[i]) for i in ids] == [len(b) for b in loc.tokens_bytes(ids)]
    elif isinstance(loc, PipelineSplits):
        words = [text[a:b] for a, b in tok.encode(text).chunks]
        assert [i for word_ids in loc.encode_words(words, set()) for i in word_ids] == ids
        assert set(loc.added_tokens) >= set(tok.special_tokens)
    else:
        import sentencepiece as spm

        sp = spm.SentencePieceProcessor()
        sp.LoadFromSerializedProto(loc.model_proto)
        assert sp.encode(text) == ids


def test_the_library_encoder_is_the_same_encode(tok):
    encode, _ = tok.library_encoder()
    text = "Hello world, it's 2024!\n  x"
    assert list(encode(text)) == tok.encode_ids(text, allowed_special="none")


def test_a_trained_bpe_declares_its_own(trained, tmp_path):
    assert trained.split_pattern == GPT4_SPLIT_PATTERN and trained.normalizes is None
    assert trained.library_encoder() is None  # our own encoder: no library to compare with
    loc = trained.locality()
    assert isinstance(loc, RegexChunks) and loc.pattern == GPT4_SPLIT_PATTERN
    assert IncrementalEncoder(trained).is_incremental
    merged = max(trained.merges.values())
    assert trained.merge_tree(merged).bytes == trained.vocab[merged]
    assert BPETokenizer({(104, 105): 256}, None).locality() is None  # Basic: no split, no rule
    assert list(save_formats(trained.save_formats)) == ["minbpe", "tiktoken", "gpt2"]
    for fmt in trained.save_formats:
        assert save_trained(trained, tmp_path / f"tok-{fmt}", fmt)
    assert set(FORMAT_FILTERS) >= set(trained.save_formats)


def test_a_sentencepiece_model_saves_as_itself(tmp_path):
    tok = get_builtin("llama-sp")
    written = save_trained(tok, tmp_path / "llama.model", tok.save_formats[0])
    assert (tmp_path / "llama.model") in written and (tmp_path / "llama.model").read_bytes() == tok.model_proto


def test_special_tokens_have_no_merge_tree(tok):
    from tokexplorer.core.analysis.merge_tree import merge_tree

    special = next(iter(tok.special_tokens.values()), None)
    if special is not None:
        with pytest.raises(TokexplorerError, match="special"):
            merge_tree(tok, special)


def test_a_normalising_sentencepiece_model_says_so():
    """A model trained with NFKC and whitespace folding declares it, changes the text as it says,
    and gets no incremental rule; the same corpus with identity normalisation declares none."""
    from tokexplorer.core.training.sentencepiece import llama2_options, train_sentencepiece

    corpus = "hello world\nhello there ｱｲｳ ①\n" * 20
    folding = train_sentencepiece(corpus, llama2_options(280, normalization_rule_name="nfkc",
                                                          remove_extra_whitespaces=True))
    assert folding.normalizes == "nfkc, extra whitespace removed"
    assert folding.decode(folding.encode("ｱ  ①").ids) == "ア 1"
    assert not IncrementalEncoder(folding).is_incremental
    plain = train_sentencepiece(corpus, llama2_options(280))
    assert plain.normalizes is None and plain.decode(plain.encode("ｱ  ①").ids) == "ｱ  ①"
    assert IncrementalEncoder(plain).is_incremental
