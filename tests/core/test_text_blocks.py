"""A text file read in blocks gives exactly the text `read_text_file` gives, with the same refusals:
reads that cut a character in two, a BOM, a bad byte (its file offset), a file ending inside a
character; UTF-16 and named encodings are left to the whole read. Every block ends where
`piece_spans` may cut, and `scan` finds the first special token wherever the reads fall."""

from __future__ import annotations

import codecs

import pytest

from tokexplorer.core import patterns
from tokexplorer.core.files import text_blocks
from tokexplorer.core.files.text_blocks import TextFile
from tokexplorer.core.files.textfile import NotUtf8Error, read_text_file

MIXED = ("Hello there, world.\nAnd then 日本語のテキスト、吾輩は猫である。\nEmoji 👋🏽 and 🇺🇳 flags\n"
         "def f(x):\n    return x  # code\nÀ bientôt\n<|endoftext|>Next\nZ\n") * 40


@pytest.fixture
def tiny_reads(monkeypatch):
    """Reads of 7 bytes: most multi-byte characters are cut by one."""
    monkeypatch.setattr(text_blocks, "READ", 7)


def _write(tmp_path, data: bytes):
    path = tmp_path / "t.txt"
    path.write_bytes(data)
    return TextFile(str(path))


@pytest.mark.parametrize("size", [1, 50, 300, 10_000])
def test_blocks_join_to_the_whole_text_and_end_where_piece_spans_may_cut(tmp_path, tiny_reads, size):
    f = _write(tmp_path, codecs.BOM_UTF8 + MIXED.encode("utf-8"))
    assert f.in_blocks()
    f.scan([])
    blocks = [b.decode("utf-8") for b in f.blocks(size)]
    assert "".join(blocks) == read_text_file(f.path) == MIXED
    if size < 1000:
        assert len(blocks) > 10
    offset = 0
    for block in blocks[:-1]:
        offset += len(block)
        # piece_spans cuts the whole text here when asked for pieces that end at this point
        assert MIXED[offset - 1] == "\n" and not MIXED[offset - 2].isspace() and MIXED[offset].isalpha()
        assert patterns.piece_spans(MIXED, offset - 2, size=1)[0] == (offset - 2, offset)


def test_a_text_without_a_place_to_cut_is_one_block(tmp_path, tiny_reads):
    f = _write(tmp_path, ("猫" * 500 + "\n 1").encode("utf-8"))
    assert [b.decode() for b in f.blocks(10)] == ["猫" * 500 + "\n 1"]


UTF8 = MIXED.encode("utf-8")
INSIDE = UTF8.index("日".encode("utf-8"), 1000) + 1  # a byte inside a character


@pytest.mark.parametrize("data", [
    UTF8[:1000] + b"\xff" + b"more\n",  # a bad byte
    UTF8[:INSIDE] + b"x",  # a character cut short
    UTF8[:INSIDE],  # the file ends inside a character
    codecs.BOM_UTF8 + b"abc\xc3(",
    b"\xed\xa0\x80 a surrogate's UTF-8",
])
def test_bad_bytes_are_refused_as_the_whole_read_refuses_them(tmp_path, tiny_reads, data):
    f = _write(tmp_path, data)
    with pytest.raises(NotUtf8Error) as whole:
        read_text_file(f.path)
    assert f.in_blocks()
    with pytest.raises(NotUtf8Error) as blocks:
        f.scan(["<|endoftext|>"])
    assert str(blocks.value) == str(whole.value) and blocks.value.offset == whole.value.offset


@pytest.mark.parametrize("data, encoding", [
    (MIXED.encode("utf-16"), None),  # a UTF-16 BOM
    (MIXED.encode("utf-16-le"), None),  # UTF-16 without one: NULs near the start
    (MIXED.encode("utf-8"), "utf-8"),  # a named encoding
])
def test_other_encodings_are_read_whole(tmp_path, data, encoding):
    path = tmp_path / "t.txt"
    path.write_bytes(data)
    assert not TextFile(str(path), encoding).in_blocks()


def test_scan_finds_the_first_special_token_wherever_the_reads_fall(tmp_path, tiny_reads):
    text = "ab 猫\n" * 30 + "x<|endoftext|>y<|fim_prefix|>"
    f = _write(tmp_path, codecs.BOM_UTF8 + text.encode("utf-8"))
    assert f.scan(["<|fim_prefix|>", "<|endoftext|>"]) == ("<|endoftext|>", text.index("<|endoftext|>"))
    assert f.scan(["<|fim_prefix|>"]) == ("<|fim_prefix|>", text.index("<|fim_prefix|>"))
    assert f.scan(["<|fim_middle|>"]) is None
    # two that start at the same place: the shorter, as resolve_special reports it
    assert f.scan(["<|endoftext|>y", "<|endoftext|>"]) == ("<|endoftext|>", text.index("<|endoftext|>"))


def test_a_missing_file_is_refused_in_one_line(tmp_path):
    with pytest.raises(Exception, match="no such file"):
        TextFile(str(tmp_path / "missing.txt")).in_blocks()
