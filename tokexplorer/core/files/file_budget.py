"""What reading a tokenizer file may cost: budgets read from the file's size before parsing it, and
checked while parsing, so that a small crafted file cannot claim gigabytes or hours.

A tokenizer file states ids, counts and lengths, and a loader that believes them allocates what
they claim: a `.tiktoken` rank of 2^30 makes a table of a billion entries, a GGUF array that says
it has 2^60 strings is read for ever. The rules here bound each claim by what the file can hold:

- only regular files are read (a device, a FIFO or a socket is refused before any byte is read:
  `/dev/zero` never ends, a FIFO blocks until someone writes), and a tokenizer file read whole may
  not exceed `MAX_TOKENIZER_FILE_BYTES` (the biggest in use are about 35 MB);
- a count of entries may not exceed what the bytes left can hold (each entry takes at least some
  bytes), nor `MAX_TOKENS`; an id may not exceed the number of entries read plus `MAX_ID_GAP`
  (tables are indexed by id, so an id is memory);
- a JSON file's parse is estimated from its punctuation before it is parsed (each container, string
  and element becomes a Python object of tens of bytes) and refused over `JSON_PEAK_BYTES`; JSON
  nested deeper than Python's parser goes is refused with a message, not a RecursionError;
- tokens a file makes rather than lists (minbpe's merges: a merge of a token with itself doubles
  it) are bounded in length (`MAX_TOKEN_BYTES`) and in total (`MAX_VOCAB_BYTES`).

None of these is tuned to a file: they are facts of the formats (no vocabulary in use has a million
tokens; none has a token of 64 KB) with headroom.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from typing import BinaryIO

from tokexplorer.core.tokenizer import MAX_SPECIAL_GAP, TokexplorerError

# Tokenizer files read whole (all but GGUF, whose tensors are never read): the largest in use are a
# few tens of MB (a 262k-token tokenizer.json with its merges is about 35 MB).
MAX_TOKENIZER_FILE_BYTES = 256_000_000
# Tokens in one vocabulary: the largest in use have about 262k; eight times that.
MAX_TOKENS = 1 << 21
# How far beyond the entries a file lists an id may go (special tokens after a gap, padded
# vocabularies): tables indexed by id cost about 40 bytes an id, so 40 MB at most.
MAX_ID_GAP = MAX_SPECIAL_GAP
# A token made by merges (minbpe's .model lists merges, not tokens): the longest tokens in use are
# a few hundred bytes; a token of more than 64 KB is a crafted merge list (each merge of a token
# with itself doubles it).
MAX_TOKEN_BYTES = 1 << 16
# All tokens of such a vocabulary together: a million merges of 64 bytes each.
MAX_VOCAB_BYTES = 1 << 26
# A JSON tokenizer file's parse, estimated before parsing (see `json_peak_estimate`).
JSON_PEAK_BYTES = 768_000_000

_KINDS = [(stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket")]


def open_regular(path: str | os.PathLike, *, what: str = "file") -> tuple[BinaryIO, int]:
    """An open binary file and its size; anything but a regular file (a folder, a device such as
    /dev/zero, a FIFO, a socket) is refused before a byte is read.

    subtle: opened without blocking, so a FIFO with no writer does not hang the open, and checked
    on the open descriptor (what is read is what was checked).
    """
    p = os.fspath(path)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise TokexplorerError(f"no such file: {p}") from None
    except IsADirectoryError:
        raise TokexplorerError(f"{p} is a folder, not a {what}") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise TokexplorerError(f"cannot read {p}: too many levels of symbolic links (a symbolic "
                                   "link that leads back to itself)") from None
        try:
            mode = os.stat(p).st_mode  # a socket cannot be opened at all (ENXIO): say what it is
        except OSError:
            mode = stat.S_IFREG
        if not stat.S_ISREG(mode):
            raise _not_regular(p, mode, what) from None
        raise TokexplorerError(f"cannot read {p}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _not_regular(p, info.st_mode, what)
        os.set_blocking(fd, True)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return f, info.st_size


def _not_regular(p: str, mode: int, what: str) -> TokexplorerError:
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    if kind == "a folder":
        return TokexplorerError(f"{p} is a folder, not a {what}")
    return TokexplorerError(f"{p} is {kind}, not a regular file; give a {what} saved on disk")


def check_regular(path: str | os.PathLike, *, what: str = "file") -> int:
    """The size of a regular file; anything else refused as `open_regular` does."""
    f, size = open_regular(path, what=what)
    f.close()
    return size


def read_limited(path: str | os.PathLike, *, limit: int = MAX_TOKENIZER_FILE_BYTES,
                 what: str = "tokenizer file") -> bytes:
    """A regular file's bytes, refused before reading when over `limit` bytes."""
    f, size = open_regular(path, what=what)
    with f:
        if size > limit:
            raise TokexplorerError(
                f"{os.fspath(path)} is {size / 1e6:,.0f} MB, over the {limit / 1e6:,.0f} MB a {what} "
                "may have (the largest in use are a few tens of MB); it is not a tokenizer file")
        try:
            data = f.read(limit + 1)  # a file that grew since it was measured stops here
        except OSError as exc:
            raise TokexplorerError(f"cannot read {os.fspath(path)}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise TokexplorerError(f"{os.fspath(path)} grew past {limit / 1e6:,.0f} MB while it was read")
    return data


def json_peak_estimate(data: bytes | str) -> int:
    """About the bytes Python's JSON parser takes for `data`, from its punctuation: each array or
    object is a container of at least 64 bytes, each string (two quotes) an object of about 64,
    each further element (a comma) a pointer and often a number of 32; plus the decoded text.

    >>> json_peak_estimate(b"[" + b"[]," * 999 + b"[]]") > 1000 * 64
    True
    """
    import numpy as np

    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    # subtle: numpy compares a block at a time (four bytes.count take 1.4 s on 100 MB; a bincount
    # would widen every byte to eight).
    counts = dict.fromkeys(b'[{",', 0)
    for start in range(0, len(raw), 1 << 24):
        block = np.frombuffer(raw, dtype=np.uint8, count=min(1 << 24, len(raw) - start), offset=start)
        for char in counts:
            counts[char] += int(np.count_nonzero(block == char))
    containers = counts[ord("[")] + counts[ord("{")]
    strings, elements = counts[ord('"')] // 2, counts[ord(",")]
    return 72 * containers + 64 * strings + 40 * elements + 2 * len(raw)


# No JSON text of this many bytes can be estimated over the budget (at most 74 a byte: "[[[["),
# so smaller files are parsed without counting.
_JSON_ALWAYS_WITHIN = JSON_PEAK_BYTES // 74


def parse_json(data: bytes | str, *, source: str, kind: str = "JSON file"):
    """`json.loads` within the budget: refused before parsing when its estimated peak is over
    `JSON_PEAK_BYTES`; nesting too deep for the parser, invalid JSON and bad UTF-8 refused in one
    line (TokexplorerError)."""
    estimate = json_peak_estimate(data) if len(data) > _JSON_ALWAYS_WITHIN else 0
    if estimate > JSON_PEAK_BYTES:
        raise TokexplorerError(
            f"{source}: this {kind} would take about {estimate / 1e9:,.1f} GB to read (it is "
            f"{len(data) / 1e6:,.1f} MB of mostly brackets, quotes and commas), over the "
            f"{JSON_PEAK_BYTES / 1e6:,.0f} MB budget of a tokenizer file; it is not a tokenizer file")
    try:
        return json.loads(data)
    except RecursionError:
        raise TokexplorerError(
            f"{source}: not a valid {kind}: its JSON is nested too deeply (hundreds of levels; "
            "tokenizer files nest a few)") from None
    except UnicodeDecodeError as exc:
        raise TokexplorerError(f"{source}: not a valid {kind} (not UTF-8 text at byte {exc.start})") from None
    except ValueError as exc:
        raise TokexplorerError(
            f"{source}: not a valid {kind} (JSON error: {exc}); the file may be truncated") from None


def check_count(count: int, *, available: int, each: int, source: str, what: str) -> None:
    """Refuse a count of entries the bytes left (`available`, each entry `each` bytes at least)
    cannot hold, or over `MAX_TOKENS`.

    >>> check_count(1 << 60, available=100, each=8, source="x.gguf", what="tokenizer.ggml.tokens")
    Traceback (most recent call last):
    ...
    tokexplorer.core.tokenizer.TokexplorerError: x.gguf: tokenizer.ggml.tokens claims 1,152,921,504,606,846,976 entries, but the 100 bytes left in the file hold at most 12; the file is corrupt or crafted
    """
    if count > available // max(each, 1):
        raise TokexplorerError(
            f"{source}: {what} claims {count:,} entries, but the {available:,} bytes left in the file "
            f"hold at most {available // max(each, 1):,}; the file is corrupt or crafted")


def check_token_count(count: int, *, source: str, what: str = "tokens") -> None:
    """Refuse a vocabulary of more than `MAX_TOKENS` entries."""
    if count > MAX_TOKENS:
        raise TokexplorerError(
            f"{source}: {count:,} {what}, over the {MAX_TOKENS:,} a vocabulary may have here (the "
            "largest in use have about 262,000); the file is corrupt or not a tokenizer")


def id_limit(n_entries: int) -> int:
    """The largest id a vocabulary of `n_entries` listed entries may use: its entries and a gap of
    `MAX_ID_GAP` (special tokens placed after a gap, padded vocabularies).

    >>> id_limit(256)
    1048832
    """
    return n_entries + MAX_ID_GAP


def check_id(token_id: int, n_entries: int, *, source: str, what: str) -> None:
    """Refuse an id beyond `id_limit(n_entries)` (a table indexed by id would be that long)."""
    if token_id > id_limit(n_entries):
        raise TokexplorerError(
            f"{source}: {what} has id {token_id:,}, but the file lists {n_entries:,} entries; ids "
            f"may run to {id_limit(n_entries):,} (the entries and a gap of {MAX_ID_GAP:,}); the "
            "file is corrupt or crafted")


def check_made_tokens(lengths: list[int], total: int, *, source: str, where: str) -> None:
    """Refuse tokens made by merges once the last is over `MAX_TOKEN_BYTES` or all together are over
    `MAX_VOCAB_BYTES` (`lengths[-1]`: the newest token's length; `total`: all so far)."""
    if lengths and lengths[-1] > MAX_TOKEN_BYTES:
        raise TokexplorerError(
            f"{source}: {where} makes a token of {lengths[-1]:,} bytes, over the {MAX_TOKEN_BYTES:,} a "
            "token may have here (tokens in use have at most a few hundred); the merges are "
            "corrupt or crafted")
    if total > MAX_VOCAB_BYTES:
        raise TokexplorerError(
            f"{source}: by {where} the tokens the merges make add up to {total:,} bytes, over the "
            f"{MAX_VOCAB_BYTES:,} a vocabulary may have here; the merges are corrupt or crafted")

