"""Reading and writing text files exactly, and writing any file atomically.

Text is read as its bytes decoded: UTF-8 (a leading byte-order mark dropped) or UTF-16 with a BOM,
no newline translation, so a CRLF file keeps its CRs. Anything else is refused with the offset of the
first bad byte, unless the caller names an encoding. Writes go to a temporary file in the same folder
that replaces the target only when complete.
"""

from __future__ import annotations

import codecs
import os
import tempfile
from pathlib import Path

from .tokenizer import TokexplorerError

class NotUtf8Error(TokexplorerError):
    """A file's bytes are not UTF-8; `offset` is the first bad byte."""

    def __init__(self, path: str, offset: int, byte: int):
        self.path, self.offset, self.byte = path, offset, byte
        super().__init__(
            f"{path}: not UTF-8 text (byte 0x{byte:02X} at offset {offset}); "
            "if it is in another encoding, name it with --encoding (e.g. --encoding latin-1)"
        )


def decode_text(data: bytes, *, source: str = "the text", encoding: str | None = None) -> str:
    """Decode bytes as the file reader does.

    >>> decode_text(b"\\xef\\xbb\\xbfhi\\r\\n")
    'hi\\r\\n'
    """
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise TokexplorerError(f"unknown encoding {encoding!r}") from None
        try:
            return data.decode(encoding)
        except UnicodeDecodeError as exc:
            raise TokexplorerError(
                f"{source}: not valid {encoding} (byte 0x{data[exc.start]:02X} at offset {exc.start})"
            ) from None
    bom = 0  # subtle: report offsets in the file, BOM included
    if data.startswith(codecs.BOM_UTF8):
        bom = len(codecs.BOM_UTF8)
        data = data[bom:]
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise TokexplorerError(
                f"{source}: starts like UTF-16 but byte offset {exc.start} is not valid UTF-16"
            ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotUtf8Error(source, exc.start + bom, data[exc.start]) from None


def read_text_file(path: str | os.PathLike, *, encoding: str | None = None) -> str:
    """The text of a file; a clear TokexplorerError if it is missing, unreadable or not text."""
    p = Path(path)
    if p.is_dir():
        raise TokexplorerError(f"{p} is a folder, not a text file")
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise TokexplorerError(f"no such file: {p}") from None
    except OSError as exc:
        raise TokexplorerError(f"cannot read {p}: {exc.strerror or exc}") from None
    return decode_text(data, source=str(p), encoding=encoding)


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write bytes so that the file is either the old one or the complete new one."""
    p = Path(path)
    directory = p.parent if str(p.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
