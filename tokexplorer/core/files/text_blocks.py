"""A UTF-8 text file read a block of bytes at a time, each block cut where every named split
pattern ends a chunk anyway, so a command can encode or split a file of any size with a few blocks
in memory instead of the whole file's bytes and text at once, and decode the blocks in threads.

`TextFile.scan` reads the file once to check it as `textfile.read_text_file` does (the same
refusals and messages: not a regular file, not UTF-8 with the file offset of the first bad byte)
and to find the first place it spells one of some strings; `TextFile.blocks` reads it again, a
block at a time. Only UTF-8 (with or without a byte-order mark) is read in blocks (`in_blocks`): a
file read with a named encoding, or one that starts with a UTF-16 byte-order mark or has a NUL byte
near its start (it may be UTF-16 without a BOM), is for `read` to read whole.

The file is read once per pass, so it must not change while a command reads it. Nothing here knows
tokenizers.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from tokexplorer.core.tokenizer import TokexplorerError

SAMPLE = 1 << 16  # bytes looked at for a BOM or a NUL (textfile.utf16_without_bom's sample)
READ = 1 << 20  # bytes read at a time

_BEFORE = frozenset(range(0x21, 0x7F))  # printable ASCII but the space
_AFTER = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def cut_after(data: bytes, start: int) -> int:
    """The index just past the first newline at or after `start` that a block may end with, or -1.

    subtle: a block ends after a newline that has a printable ASCII character other than a space
    before it and an ASCII letter after it: places where `patterns.piece_spans` may cut (a non-space
    before, a letter after), found in the bytes without decoding them. Every named pattern ends a
    chunk there, and a special token that holds no newline cannot straddle one. (A loop over
    `bytes.find` is three times faster here than a regex search, which has no literal to look for.)

    >>> cut_after(b"a\\n b.\\nc", 0)  # not after the first newline: a space follows it
    6
    """
    end = len(data) - 1
    newline = data.find(b"\n", max(start, 1))
    while 0 <= newline < end:
        if data[newline + 1] in _AFTER and data[newline - 1] in _BEFORE:
            return newline + 1
        newline = data.find(b"\n", newline + 1)
    return -1


@dataclass(frozen=True)
class TextFile:
    """A text file to read whole (`read`) or, when `in_blocks`, in blocks of UTF-8 (`blocks`)."""

    path: str
    encoding: str | None = None  # the --encoding given; None: UTF-8 as `read_text_file` reads it

    def read(self) -> str:
        """The whole text."""
        from tokexplorer.core.files.textfile import read_text_file

        return read_text_file(self.path, encoding=self.encoding)

    def in_blocks(self) -> bool:
        """Whether the file is read in blocks: UTF-8 read as such (no --encoding), no UTF-16 BOM,
        no NUL byte in its first SAMPLE bytes. Refuses a file that is missing or not regular."""
        if self.encoding is not None:
            return False
        with self._open() as f:
            start = self._read(f, SAMPLE)
        return not start.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) and b"\x00" not in start

    def scan(self, strings: list[str]) -> tuple[str, int] | None:
        """Check that every byte is UTF-8 (NotUtf8Error at the first that is not), and find the
        first place the text spells one of `strings`: (the string, its offset in code points), the
        shorter first where two start together; None when none occurs. Only when `in_blocks`.
        """
        from tokexplorer.core.files.textfile import NotUtf8Error

        needles = {s: s.encode("utf-8") for s in strings if s}
        keep = max(map(len, needles.values()), default=1) - 1  # bytes a string may straddle
        found = None
        with self._open() as f:
            more, offset = self._skip_bom(f)  # offset: the file offset of data[0]
            data = tail = b""
            while True:
                final = not more
                data += more
                used = len(data)
                if not data.isascii():  # subtle: a character cut by a read waits for the next
                    try:
                        _, used = codecs.utf_8_decode(data, "strict", final)
                    except UnicodeDecodeError as exc:
                        raise NotUtf8Error(self.path, offset + exc.start, data[exc.start]) from None
                if needles:
                    window = tail + data[:used]
                    hits = [(at, len(b), s) for s, b in needles.items() if (at := window.find(b)) >= 0]
                    if hits:  # the first; the rest of the file is still checked
                        at, _, string = min(hits)
                        found, needles = (string, offset - len(tail) + at), {}
                    tail = window[max(0, len(window) - keep):] if keep else b""
                data = data[used:]
                offset += used
                if final:
                    break
                more = self._read(f, READ)
        if found is None:
            return None
        return found[0], self._chars_before(found[1])

    def _chars_before(self, at: int) -> int:
        """Code points before the file offset `at` (which is past the BOM, at a character)."""
        decoder = codecs.getincrementaldecoder("utf-8")()
        with self._open() as f:
            data, bom = self._skip_bom(f)
            at -= bom
            n = 0
            while at > 0 and data:
                n += len(decoder.decode(data[:at]))
                at -= len(data)
                data = self._read(f, READ)
        return n

    def blocks(self, size: int) -> Iterator[bytes]:
        """The file's UTF-8 (without its BOM), a block of at least `size` bytes at a time (the
        last one shorter), each ending at a place where `patterns.piece_spans` may cut the text; a
        text without such places comes as one block. Only when `in_blocks`, after `scan`.
        """
        with self._open() as f:
            data, _ = self._skip_bom(f)
            scanned = 0  # no cut in data[:scanned]
            while True:
                more = self._read(f, READ)
                data += more
                start = 0
                while len(data) - start > size:
                    cut = cut_after(data, max(start + size, scanned))
                    if cut < 0:
                        break
                    yield data[start:cut]
                    start = cut
                data = data[start:]
                scanned = max(0, len(data) - 1)  # a newline at the end waits for the byte after it
                if not more:
                    break
            yield data

    def _open(self) -> BinaryIO:
        from tokexplorer.core.files.file_budget import open_regular

        f, _ = open_regular(self.path, what="text file")
        return f

    def _skip_bom(self, f: BinaryIO) -> tuple[bytes, int]:
        """The first READ bytes after the BOM, and the BOM's length."""
        data = self._read(f, READ)
        bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
        return data[bom:], bom

    def _read(self, f: BinaryIO, n: int) -> bytes:
        try:
            return f.read(n)
        except OSError as exc:
            raise TokexplorerError(f"cannot read {self.path}: {exc.strerror or exc}") from None

