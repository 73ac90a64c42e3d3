"""Texts of any size, a piece at a time: the pieces give exactly the whole text's tokens, spans,
counts and chunks (checked with a small piece size on the shared corpora, and on a file read in
blocks on threads for a trained BPE, a tokenizer with added special tokens and o200k_base),
tokenizers that cannot stream encode whole and refuse a text over the budget, the commands print
the same as before, and the threads' map keeps order."""

from __future__ import annotations

import json
import threading

import pytest

from tokexplorer.cli.main import main
from tokexplorer.core import patterns
from tokexplorer.core.patterns import NAMED_PATTERNS, split
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.files import text_blocks
from tokexplorer.core.files.text_blocks import TextFile
from tokexplorer.core.streaming import count, encode_pieces, map_ids, ordered_map, split_pieces, streams
from tokexplorer.core.tokenizer import DisallowedSpecialError, TokexplorerError
from tokexplorer.core.training.bpe import train


@pytest.fixture
def small_pieces(monkeypatch):
    monkeypatch.setattr(patterns, "PIECE_SIZE", 2000)


@pytest.fixture(scope="module")
def corpus_text(corpora) -> str:
    files = [corpora / "en" / "tinyshakespeare.txt", *sorted((corpora / "code").glob("*"))[:3],
             *sorted((corpora / "unicode").glob("*.txt"))]
    return "\n".join(p.read_text(encoding="utf-8", errors="replace")[:20_000] for p in files if p.is_file())


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_pieces_give_the_whole_texts_tokens(small_pieces, corpus_text, name):
    tok = get_builtin(name)
    assert streams(tok)
    whole = tok.encode(corpus_text, allowed_special="none")
    pieces = list(encode_pieces(tok, corpus_text, allowed_special="none"))
    assert len(pieces) > 10
    ids, starts, ends = [], [], []
    for p in pieces:
        ids += p.encoding.ids
        starts += (p.encoding.starts + p.offset).tolist()
        ends += (p.encoding.ends + p.offset).tolist()
    assert ids == whole.ids
    assert starts == whole.starts.tolist() and ends == whole.ends.tolist()
    assert count(tok, corpus_text, allowed_special="none") == whole.stats()


def test_a_refused_special_token_is_found_in_the_whole_text(small_pieces, corpus_text):
    text = corpus_text + "\nthe end <|endoftext|>"
    with pytest.raises(DisallowedSpecialError) as info:
        next(encode_pieces(get_builtin("cl100k_base"), text))
    assert info.value.position == len(corpus_text) + len("\nthe end ")
    ids = [i for p in encode_pieces(get_builtin("cl100k_base"), text, allowed_special="all") for i in p.encoding.ids]
    assert ids[-1] == 100257


def test_tokenizers_that_cannot_stream_encode_whole_within_a_budget(small_pieces, corpus_text):
    tok = get_builtin("llama-sp")
    assert not streams(tok)
    assert len(list(encode_pieces(tok, corpus_text))) == 1
    with pytest.raises(TokexplorerError, match="--max-mb 1 to go on"):
        count(tok, corpus_text, limit_mb=0.1)
    assert count(tok, corpus_text, limit_mb=1)["tokens"] == len(tok.encode(corpus_text))


@pytest.mark.parametrize("pattern", [NAMED_PATTERNS["gpt2"], NAMED_PATTERNS["o200k"], r"\w+|\W"])
def test_split_pieces_equal_the_whole_split(small_pieces, corpus_text, pattern):
    assert [(p.offset + a, p.offset + b) for p in split_pieces(corpus_text, pattern) for a, b in p.spans] == \
        split(corpus_text, pattern)


@pytest.mark.slow
def test_commands_print_the_whole_texts_tokens_in_pieces(small_pieces, corpus_text, tmp_path, capsys):
    path = tmp_path / "corpus.txt"
    path.write_text(corpus_text, encoding="utf-8")
    tok = get_builtin("cl100k_base")
    whole = tok.encode(corpus_text, allowed_special="none")
    assert main(["encode", "-t", "cl100k_base", "--file", str(path), "--json", "--allowed-special", "none"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ids"] == whole.ids and data["stats"] == whole.stats()
    assert [(t["index"], t["start"], t["end"]) for t in data["tokens"]] == \
        list(zip(range(len(whole)), whole.starts.tolist(), whole.ends.tolist()))
    assert main(["encode", "-t", "cl100k_base", "--file", str(path), "--ids-only", "--allowed-special", "none"]) == 0
    assert capsys.readouterr().out == " ".join(map(str, whole.ids)) + "\n"
    assert main(["encode", "-t", "cl100k_base", "--file", str(path), "--allowed-special", "none"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 + len(whole) and lines[-1].split()[:2] == [str(len(whole) - 1), str(whole.ids[-1])]
    assert main(["split", "--file", str(path), "--json"]) == 0
    chunks = json.loads(capsys.readouterr().out)["chunks"]
    assert [(c["start"], c["end"]) for c in chunks] == split(corpus_text, NAMED_PATTERNS["gpt4"])
    assert main(["compare", "-t", "llama-sp", "--file", str(path), "--max-mb", "0.1"]) == 1
    assert "--max-mb" in capsys.readouterr().err


def test_ordered_map_works_at_once_and_gives_results_in_order():
    second_done = threading.Event()

    def work(i):
        if i == 0:  # the first waits for the second: only threads at once can finish it
            assert second_done.wait(10)
        if i == 1:
            second_done.set()
        return i * i

    assert list(ordered_map(work, range(20), threads=2)) == [i * i for i in range(20)]
    assert list(ordered_map(lambda i: i + 1, range(5), threads=1)) == [1, 2, 3, 4, 5]


def test_ordered_map_passes_a_failure_on_in_order():
    def work(i):
        if i == 3:
            raise ValueError("piece 3")
        return i

    got = []
    with pytest.raises(ValueError, match="piece 3"):
        for x in ordered_map(work, range(10), threads=2):
            got.append(x)
    assert got == [0, 1, 2]


def _tokenizers_that_stream():
    trained = train("hello world, hello there! 日本語のテキスト\n" * 20, 300, pattern="gpt4",
                    special_tokens=["<|endoftext|>"], name="trained")
    chat = get_builtin("cl100k_base").with_special_tokens({"<|im_start|>": None, "<|im_end|>": None})
    return [trained, chat, get_builtin("o200k_base")]


@pytest.mark.parametrize("policy", ["all", "none"])
def test_a_file_in_pieces_on_threads_gives_the_whole_texts_ids(small_pieces, corpus_text, tmp_path, monkeypatch,
                                                               policy):
    monkeypatch.setattr(text_blocks, "READ", 5)
    text = corpus_text[:30_000] + "\n<|endoftext|> and <|im_start|>user\nhi<|im_end|>\n" + corpus_text[30_000:60_000]
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8")
    for tok in _tokenizers_that_stream():
        assert streams(tok)
        whole = tok.encode(text, allowed_special=policy)
        got = list(map_ids(tok, TextFile(str(path)), lambda ids, piece: (ids.tolist(), piece), allowed_special=policy,
                           threads=3))
        assert len(got) > 20
        assert [i for ids, _ in got for i in ids] == whole.ids
        assert "".join(piece for _, piece in got) == text
        assert count(tok, TextFile(str(path)), allowed_special=policy, threads=3) == whole.stats()
