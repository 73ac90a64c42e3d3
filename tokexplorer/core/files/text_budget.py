"""How big a text the window opens, and what it offers instead of a bigger one.

The window holds a text several times over (Qt's UTF-16 copy and its line structures, the worker's
copy, the encoding's per-token arrays, the colours, the views' own): about 50 times the file's size
at its peak while it opens and tokenizes (measured with cl100k_base on tinyshakespeare repeated:
10 MB -> 0.65 GB, 30 MB -> 1.6 GB peak RSS). A 200 MB file would need some 10 GB, so above
`WINDOW_TEXT_LIMIT_MB` the window refuses it with a message that says why and how to go on: open
its first part as an untitled sample (Save then asks for a new file, so the big file is never
overwritten by its beginning), or use the command line, which streams (`tokexplorer encode
--ids-only`, `compare`, `split`).

Nothing here touches widgets; `main_window` shows the refusal and opens the sample.
"""

from __future__ import annotations

import codecs
from pathlib import Path

from tokexplorer.core.files.textfile import decode_text
from tokexplorer.core.tokenizer import TokexplorerError

# File size. The line fitted to the measurements above (0.19 GB + 47 MB per MB) puts the peak at
# the limit near 3.2 GB; 64 MB is also the command line's limit for a text encoded whole
# (core.streaming), and above the 50 MB text `bench --gui --huge-mb 50` opens.
WINDOW_TEXT_LIMIT_MB = 64
READ_BLOCK = 1 << 20  # bytes read per progress report


class TextTooBig(TokexplorerError):
    """A file over the window's budget; `path` and `size` (bytes) say which and how big, and
    `encoding` (None: detected) how to read its beginning instead."""

    def __init__(self, path: Path, size: int, limit_mb: float, encoding: str | None = None):
        self.path, self.size, self.limit_mb, self.encoding = Path(path), size, limit_mb, encoding
        super().__init__(
            f"{self.path.name} is {size / 1e6:,.0f} MB, over the {limit_mb:g} MB the window opens "
            f"(it would need about {50 * size / 1e9:,.0f} GB of memory); open its first "
            f"{limit_mb:g} MB as an untitled sample, or use the command line, which streams it: "
            f"tokexplorer encode --file '{self.path}' --ids-only")


def check_size(path: Path, size: int, limit_mb: float | None = None, *,
               encoding: str | None = None) -> None:
    """Raise TextTooBig when a file of `size` bytes is over the window's budget (`encoding`: the
    one it is being opened with, for its sample).

    >>> check_size(Path("small.txt"), 1_000)
    >>> check_size(Path("big.txt"), 200_000_000)
    Traceback (most recent call last):
    ...
    tokexplorer.core.files.text_budget.TextTooBig: big.txt is 200 MB, over the 64 MB the window opens (it would need about 10 GB of memory); open its first 64 MB as an untitled sample, or use the command line, which streams it: tokexplorer encode --file 'big.txt' --ids-only
    """
    limit_mb = WINDOW_TEXT_LIMIT_MB if limit_mb is None else limit_mb
    if size > limit_mb * 1e6:
        raise TextTooBig(path, size, limit_mb, encoding)


def read_sample(path: Path, encoding: str | None, progress, limit_mb: float | None = None) -> str:
    """The beginning of a file, at most `limit_mb` MB of it, decoded as the file reader decodes
    the whole file and cut after its last line break. Reads only that much.

    Raises what `decode_text` raises (NotUtf8Error leads to the window's encoding dialog).
    """
    limit = int((WINDOW_TEXT_LIMIT_MB if limit_mb is None else limit_mb) * 1e6)
    parts, done = [], 0
    try:
        with open(path, "rb") as f:
            while done < limit and (block := f.read(min(READ_BLOCK, limit - done))):
                parts.append(block)
                done += len(block)
                progress(done, limit)
    except OSError as exc:
        raise TokexplorerError(f"cannot read {path}: {exc.strerror or exc}") from None
    data = b"".join(parts)
    if encoding is not None:
        # subtle: any encoding may cut a character in two at the limit; the incremental
        # decoder keeps such a tail back instead of failing on it.
        try:
            text = codecs.getincrementaldecoder(encoding)().decode(data, final=False)
        except LookupError:
            raise TokexplorerError(f"unknown encoding {encoding!r}") from None
        except UnicodeDecodeError as exc:
            raise TokexplorerError(f"{path}: not valid {encoding} (byte 0x{data[exc.start]:02X} at "
                                   f"offset {exc.start})") from None
        cut = text.rfind("\n")
        return text[:cut + 1] if cut >= 0 else text
    # UTF-8 (the byte "\n" is never part of another character) or UTF-16, whose "\n" is
    # b"\n\x00" (little-endian) or b"\x00\n": cut after the whole character.
    cut = data.rfind(b"\n") + 1
    if cut % 2 and data[cut:cut + 1] == b"\x00":
        cut += 1
    return decode_text(data[:cut] if cut else data, source=str(path))


def sample_describe(path: Path, text: str) -> str:
    """The note shown over a sample.

    >>> sample_describe(Path("big.txt"), "x" * 63_999_990)
    'its first 64.0 million characters, as an untitled text (Save asks for a new file)'
    """
    return f"its first {len(text) / 1e6:.1f} million characters, as an untitled text (Save asks for a new file)"
