"""SentencePiece training: the lecture's Llama 2 toy model, byte fallback on and off, bad options."""

from __future__ import annotations

import os

import pytest

from tokexplorer.core.training.sentencepiece import LLAMA2_OPTIONS, llama2_options, train_sentencepiece
from tokexplorer.core.tokenizer import TokexplorerError

TOY = ("SentencePiece is an unsupervised text tokenizer and detokenizer mainly for Neural Network-based "
       "text generation systems where the vocabulary size is predetermined prior to the neural model "
       "training. SentencePiece implements subword units (e.g., byte-pair-encoding (BPE) [Sennrich et "
       "al.]) and unigram language model [Kudo.]) with the extension of direct training from raw "
       "sentences. SentencePiece allows us to make a purely end-to-end system that does not depend on "
       "language-specific pre/postprocessing.")


def test_lecture_toy_model_with_llama2_options(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    seen = []
    tok = train_sentencepiece(TOY, llama2_options(400), progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (1, 1) and os.listdir(tmp_path) == []
    pieces = tok.pieces
    # The lecture's listing: <unk>, <s>, </s>, the 256 byte pieces, then the merges, then characters.
    assert pieces[:4] == ["<unk>", "<s>", "</s>", "<0x00>"] and pieces[258] == "<0xFF>"
    assert pieces[259:262] == ["en", "▁t", "ce"]
    assert tok.options["byte_fallback"] and tok.options["split_digits"]
    assert tok.options["name"] == "identity"  # the normaliser spec's rule name
    # Byte fallback: Korean was never seen, so it becomes UTF-8 byte pieces, not <unk>.
    enc = tok.encode("hello 안녕하세요")
    assert 0 not in enc.ids and any(f for f in enc.byte_fallback_mask)
    assert tok.decode(enc.ids) == "hello 안녕하세요"


def test_without_byte_fallback_unseen_text_is_unk():
    tok = train_sentencepiece(TOY, llama2_options(300, byte_fallback=False))
    assert not any(p.startswith("<0x") for p in tok.pieces)
    assert 0 in tok.encode("안녕").ids  # <unk>


def test_unigram():
    tok = train_sentencepiece(TOY, llama2_options(100, "unigram", byte_fallback=False))
    assert tok.options["model_type"] == "unigram" and tok.n_vocab == 100


def test_every_option_is_visible_and_editable():
    opts = llama2_options(400, max_sentencepiece_length=8)
    assert set(LLAMA2_OPTIONS) <= set(opts) and opts["max_sentencepiece_length"] == 8
    assert opts["unk_id"] == 0 and opts["bos_id"] == 1 and opts["eos_id"] == 2 and opts["pad_id"] == -1


@pytest.mark.parametrize("text, options, message", [
    ("", llama2_options(300), "empty"),
    (TOY, llama2_options(100_000), "too high"),
    (TOY, {**llama2_options(300), "bogus_option": 1}, "bogus_option"),
    (TOY, {**llama2_options(300), "model_prefix": "x"}, "model_prefix"),
])
def test_bad_input(text, options, message):
    with pytest.raises(TokexplorerError, match=message):
        train_sentencepiece(text, options)
    with pytest.raises(TokexplorerError, match="model type"):
        llama2_options(300, "word")


def test_count_sample_is_bounded_and_counts_whole_lines_piece_by_piece(corpora, monkeypatch):
    from tokexplorer.core.training import sentencepiece as sentencepiece_training
    from tokexplorer.core.training.sentencepiece import count_sample

    text = (corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:40_000]
    tok = train_sentencepiece(text, llama2_options(400))
    monkeypatch.setattr(sentencepiece_training, "SAMPLE_PIECE", 2_000)
    counted, tokens = count_sample(tok, text, limit=10_000)
    sample = text[:counted]  # ASCII: bytes are characters
    assert 9_000 < counted <= 10_000 and sample.endswith("\n")
    pieces, rest = [], sample
    while rest:  # whole lines, at most 2,000 bytes a piece
        cut = rest.rfind("\n", 0, 2_000) + 1
        pieces.append(rest[:cut])
        rest = rest[cut:]
    assert tokens == sum(len(tok.encode_ids(p)) for p in pieces)
    assert count_sample(tok, text[:500], limit=10_000) == (500, len(tok.encode_ids(text[:500])))
