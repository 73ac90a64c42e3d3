"""Files round-trip: minbpe .model/.vocab (both ways with minbpe's format), .tiktoken, SentencePiece."""

from __future__ import annotations

import os

import pytest

from tokexplorer.core.backends.trained_bpe import BPETokenizer
from tokexplorer.core.training.bpe import train
from tokexplorer.core.files.minbpe import (
    model_text,
    parse_minbpe_model,
    save_gpt2,
    save_minbpe,
    save_tiktoken,
    vocab_text,
)
from tokexplorer.core.registry import load_tokenizer
from tokexplorer.core.training.sentencepiece import llama2_options, save_sentencepiece, train_sentencepiece
from tokexplorer.core.tokenizer import TokexplorerError

SAMPLE = "Hello world! Hello there, hello 123 — ünïcödé 👋\n\tTabs and  spaces.\n" * 30


def minbpe_style_load(path) -> tuple[str, dict[str, int], dict[tuple[int, int], int]]:
    """What minbpe's loader does with a .model file (its documented steps, re-stated): check the
    version line, strip the pattern line, read the special count and that many 'token id' lines,
    then number the merges from 256."""
    with open(path, encoding="utf-8") as f:
        assert f.readline().strip() == "minbpe v1"
        pattern = f.readline().strip()
        specials = {}
        for _ in range(int(f.readline().strip())):
            token, idx = f.readline().strip().split()
            specials[token] = int(idx)
        merges = {}
        for idx, line in enumerate(f, 256):
            a, b = map(int, line.split())
            merges[(a, b)] = idx
    return pattern, specials, merges


@pytest.mark.parametrize("pattern", [None, "gpt4", "gpt2"])
def test_minbpe_model_round_trip(tmp_path, pattern):
    tok = train(SAMPLE, 300, pattern=pattern, special_tokens=["<|endoftext|>", "<|fim|>"])
    paths = save_minbpe(tok, tmp_path / "m")
    assert [p.name for p in paths] == ["m.model", "m.vocab"]
    back = load_tokenizer(tmp_path / "m.model")  # recognised from the content
    assert isinstance(back, BPETokenizer)
    assert list(back.merges.items()) == list(tok.merges.items())
    assert back.split_pattern == tok.split_pattern and back.special_tokens == tok.special_tokens
    assert back.encode(SAMPLE).ids == tok.encode(SAMPLE).ids
    # ...and minbpe's own loading steps read the same model.
    pattern_line, specials, merges = minbpe_style_load(paths[0])
    assert (pattern_line or None) == tok.split_pattern
    assert specials == tok.special_tokens and merges == tok.merges


def test_minbpe_written_model_loads(tmp_path):
    """A .model as minbpe's save() writes it (Basic: an empty pattern line), and its .vocab lines."""
    (tmp_path / "toy.model").write_text("minbpe v1\n\n1\n<|endoftext|> 258\n97 97\n256 98\n", "utf-8")
    tok = load_tokenizer(tmp_path / "toy.model")
    assert tok.split_pattern is None and tok.merges == {(97, 97): 256, (256, 98): 257}
    assert tok.encode("aab<|endoftext|>", allowed_special="all").ids == [257, 258]
    lines = vocab_text(tok).splitlines()
    assert lines[10] == "[\\u000a] 10" and lines[97] == "[a] 97"
    assert lines[256:] == ["[a][a] -> [aa] 256", "[aa][b] -> [aab] 257", "[<|endoftext|>] 258"]


def test_vocab_renders_broken_utf8_and_controls():
    tok = BPETokenizer({(0xE2, 0x80): 256, (10, 10): 257}, None)
    lines = vocab_text(tok).splitlines()
    assert lines[256] == "[\ufffd][\ufffd] -> [\ufffd] 256"
    assert lines[257] == "[\\u000a][\\u000a] -> [\\u000a\\u000a] 257"


def test_tiktoken_round_trip(tmp_path):
    tok = train(SAMPLE, 320, pattern="gpt4")
    save_tiktoken(tok, tmp_path / "t.tiktoken")
    back = load_tokenizer(tmp_path / "t.tiktoken")  # a .tiktoken file assumes the GPT-4 pattern
    assert back.mergeable_ranks == tok.mergeable_ranks
    assert back.encode(SAMPLE).ids == tok.encode(SAMPLE).ids


def test_gpt2_files_round_trip(tmp_path):
    tok = train(SAMPLE, 330, pattern="gpt2", special_tokens=["<|endoftext|>"])
    paths = save_gpt2(tok, tmp_path / "gpt2style")
    assert paths[1].read_text("utf-8").splitlines()[0] == "#version: 0.2"
    back = load_tokenizer(paths[0])  # encoder.json, with vocab.bpe beside it
    assert back.mergeable_ranks == tok.mergeable_ranks and back.special_tokens == tok.special_tokens
    assert back.encode(SAMPLE).ids == tok.encode(SAMPLE).ids


def test_sentencepiece_round_trip(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tok = train_sentencepiece(SAMPLE, llama2_options(300))
    assert os.listdir(tmp_path) == []  # training writes nothing to the working directory
    save_sentencepiece(tok, tmp_path / "sp")
    back = load_tokenizer(tmp_path / "sp.model")
    assert back.family == "sentencepiece" and back.pieces == tok.pieces
    assert back.encode(SAMPLE).ids == tok.encode(SAMPLE).ids
    assert (tmp_path / "sp.vocab").read_text("utf-8").splitlines()[0] == "<unk>\t0"


GOOD = "minbpe v1\n\\S+\n1\n<|end|> 258\n97 98\n256 99\n"


@pytest.mark.parametrize("content, message", [
    (GOOD[:-4], "line 6"),  # cut in the middle of the last merge
    (GOOD.replace("1\n<|end|>", "2\n<|end|>"), "line 6 merges"),
    ("minbpe v1\n", "missing"),
    ("minbpe v2\n\n0\n", "unrecognised tokenizer format"),
    (GOOD.replace("256 99", "999 99"), "merges \\(999, 99\\)"),
    (GOOD.replace("<|end|> 258", "<|end|> 200"), "special token"),
    (GOOD.replace("\\S+", "(unclosed"), "invalid split pattern"),
    (GOOD.replace("\n1\n", "\nx\n"), "number of special tokens"),
])
def test_corrupt_model_files_are_clear_errors(tmp_path, content, message):
    path = tmp_path / "bad.model"
    path.write_text(content, "utf-8")
    with pytest.raises(TokexplorerError, match=message):
        load_tokenizer(path)


def test_non_utf8_model_is_an_error():
    with pytest.raises(TokexplorerError, match="not UTF-8"):
        parse_minbpe_model(b"minbpe v1\n\xff\n0\n")


def test_what_minbpe_cannot_store_is_refused_before_writing(tmp_path):
    with pytest.raises(TokexplorerError, match="one line"):
        save_minbpe(BPETokenizer({}, "a\nb"), tmp_path / "x")
    with pytest.raises(TokexplorerError, match="whitespace"):
        save_minbpe(BPETokenizer({}, None, {"<| x |>": 256}), tmp_path / "x")
    assert list(tmp_path.iterdir()) == []
    assert model_text(BPETokenizer({}, None)) == "minbpe v1\n\n0\n"
