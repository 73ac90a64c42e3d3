"""A sweep counts its evaluation text without holding the text's tokens: BPE with no pattern in
pieces cut where no merge joins two bytes (`BPETokenizer.basic_pieces`), a file a block at a time,
and the corpus's own counts read off the training run. Each against the whole text's count: the
slow reference encoder on hypothesis texts and merges, the whole-text encoder on the corpora."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokexplorer.core.analysis import sweep as sweep_module
from tokexplorer.core.analysis.sweep import count_tokens, sweep, text_size
from tokexplorer.core.backends import trained_bpe
from tokexplorer.core.backends.trained_bpe import BPETokenizer
from tokexplorer.core.files.text_blocks import TextFile
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.training.bpe import train

from .. import reference_bpe as ref

ALPHABET = ["a", "b", "ab", " ", "\n", "é", "😀", "中"]
CORPUS_FILES = ["en/tinyshakespeare.txt", "multilingual/ja_wagahaiwa_nekodearu.txt", "unicode/emoji-test.txt",
                "code/pokemon.json", "unicode/blns.txt"]


@st.composite
def merges_over(draw, data: bytes) -> dict[tuple[int, int], int]:
    """Merges of ids made from the bytes of `data`: any pairs, not only those a trainer would learn."""
    ids = sorted(set(data)) or [97]
    merges: dict[tuple[int, int], int] = {}
    for _ in range(draw(st.integers(0, 12))):
        pair = (draw(st.sampled_from(ids)), draw(st.sampled_from(ids)))
        if pair not in merges:
            merges[pair] = 256 + len(merges)
            ids.append(merges[pair])
    return merges


@settings(max_examples=300, deadline=None)
@given(st.data(), st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=120).map("".join),
       st.sampled_from([1, 2, 5, 64]), st.booleans())
def test_pieces_encode_as_the_whole_text(data, text, size, trained):
    """Under random merges, or merges learned from another text: the pieces are the text, none
    shorter than `size` but the last, and their ids are the slow reference's on the whole text,
    however the blocks are cut."""
    raw = text.encode("utf-8")
    if trained:
        other = data.draw(st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=60).map("".join))
        merges = ref.train(other, 256 + data.draw(st.integers(1, 20)))
    else:
        merges = data.draw(merges_over(raw))
    tok = BPETokenizer(merges, None)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=5)))
    blocks = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)])]
    pieces = list(tok.basic_pieces(blocks, size=size))
    assert b"".join(pieces) == raw
    assert all(len(piece) >= size for piece in pieces[:-1])
    assert [i for piece in pieces for i in tok.encode_chunk(piece)] == ref.encode_chunk(raw, merges)
    assert tok.encode_ids(text) == ref.encode_chunk(raw, merges)


@pytest.mark.parametrize("rel", CORPUS_FILES)
def test_counting_in_pieces_gives_the_whole_count_on_the_corpora(corpora, monkeypatch, tmp_path, rel):
    """Learned on a file's first 50,000 characters at 1,024, counted on the next 100,000, as a
    text and as a file: the count of the whole text's encoding, from many pieces."""
    text = (corpora / rel).read_text("utf-8")
    tok = train(text[:50_000], 1024, pattern=None)
    held = text[50_000:150_000] or text  # (blns.txt is 30 KB: its own text)
    whole = len(tok.encode_chunk(held.encode("utf-8")))
    path = tmp_path / "held.txt"
    path.write_text(held, "utf-8")
    monkeypatch.setattr(trained_bpe, "BASIC_PIECE", 4096)
    monkeypatch.setattr(sweep_module, "FILE_BLOCK", 10_000)
    pieces = list(tok.basic_pieces([held.encode("utf-8")]))
    assert len(pieces) > len(held.encode("utf-8")) // 8192
    assert count_tokens(tok, held) == whole
    # a file: its bytes a block at a time, not the text's blocks (a Japanese file has no place
    # where they may end, and would come whole) nor the text read whole
    monkeypatch.setattr(TextFile, "read", lambda self: pytest.fail("read whole"))
    monkeypatch.setattr(TextFile, "blocks", lambda self, size: pytest.fail("read in the text's blocks"))
    assert count_tokens(tok, TextFile(str(path))) == whole


def test_counting_merges_a_piece_at_a_time(corpora, monkeypatch):
    """The Python encoder never gets more than about a piece (it holds up to 200 bytes a byte):
    the emoji test file (600 KB) at 2,000 merges."""
    text = (corpora / "unicode/emoji-test.txt").read_text("utf-8")
    tok = train(text[:100_000], 2256, pattern=None)
    held = text
    sizes = []
    encode_chunk = tok.encode_chunk
    monkeypatch.setattr(tok, "encode_chunk", lambda data: sizes.append(len(data)) or encode_chunk(data))
    n = count_tokens(tok, held)
    assert max(sizes) < 2 * trained_bpe.BASIC_PIECE and len(sizes) > 8
    tok._cache.clear()
    assert n == len(encode_chunk(held.encode("utf-8")))


def test_a_stretch_with_no_place_to_cut_is_refused_past_its_budget():
    tok = BPETokenizer({(97, 97): 256, (256, 256): 257}, None, name="mine")
    text = "a" * 300_000  # every place between two a's may be joined
    assert len(list(tok.basic_pieces([text.encode()]))) == 1
    with pytest.raises(TokexplorerError) as error:
        count_tokens(tok, text, limit_mb=0.2)
    message = str(error.value)
    assert "mine has no split pattern" in message and "--max-mb 1 to go on" in message and "\n" not in message
    assert count_tokens(tok, text, limit_mb=0.5) == 75_000
    assert count_tokens(tok, "b" + text[:100], limit_mb=0.2) == 26


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(ALPHABET + ["the", " cat", "\n\n", "12", "!!"]), min_size=1, max_size=200).map("".join),
       st.sampled_from([None, "gpt4", r"\w+|[^\w]+"]))
def test_the_corpus_counted_by_its_own_training(text, pattern):
    """With no evaluation text, each size's count is the training text's length after its merges:
    what counting the text with the first merges gives."""
    sizes = [256, 258, 263, 300]
    got = sweep(text, sizes, pattern=pattern)
    counted = sweep(text, sizes, pattern=pattern, eval_text=text)
    assert got.table() == counted.table()
    merges = list(train(text, 300, pattern=pattern).merges)
    for point in got.points:
        used = merges[:point.vocab_size - 256]
        tok = BPETokenizer({pair: 256 + i for i, pair in enumerate(used)}, got.pattern)
        assert point.tokens == count_tokens(tok, text)


def test_a_files_size_is_counted_a_block_at_a_time(tmp_path, monkeypatch):
    path = tmp_path / "t.txt"
    text = "héllo 😀\n" * 5000
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    monkeypatch.setattr(sweep_module, "FILE_BLOCK", 100)
    monkeypatch.setattr(TextFile, "read", lambda self: pytest.fail("read whole"))
    assert text_size(TextFile(str(path))) == text_size(text) == (len(text), len(text.encode("utf-8")))
