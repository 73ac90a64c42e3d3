"""A compact copy of a built-in vocabulary in the user's cache folder, so that every start after
the first skips both parsing the shipped file (base64 lines, JSON) and hashing it.

The shipped file is read and its sha256 checked against the one tokexplorer expects the first time
(`DataFile.read`), and again whenever the file is not the one that was checked. "The one that was
checked" is its stamp: device, inode, size, modification and change times (nanoseconds), taken
before and after the read that hashed it and kept in the copy. A file cannot get other content and
keep that stamp: the kernel sets the change time on every write and on every change of the other
times (it cannot be set back), and a reinstalled package is new files (new inodes). A stamp is not
kept when the file changed within the last `RACY_SECONDS` (a file system with coarse times could
take a write in the same tick), nor when it moved during the read; that file is hashed at every
start until it is older. (On Windows st_ctime is the creation time: there a rewrite of the same
size with its modification time set back would go unseen; a reinstall or an ordinary edit is
seen.) The copy is named by the expected hashes and tokexplorer's version, so a changed package
never meets an old copy, nor a new release a copy whose extra an older loader wrote. (Within a
version, a change to what a loader keeps in its extra needs a new MAGIC, as a change of layout does.)

The copy carries the CRC-32 of its own payload, checked at every read (1 ms for 4 MB): a damaged,
truncated or foreign copy is ignored and written again. A checksum, not a cryptographic hash: it
guards against damage, and no hash would guard against someone who can write the user's cache
(they could write a matching hash as well); the shipped files' sha256 is what ties a copy to the
vocabulary tokexplorer expects. (hashlib is not even imported on such a start: 4 ms.)

It holds no code and is never unpickled: a header, the shipped files' stamps as little-endian
uint64s, a small JSON object for what else the loader needs (a split pattern, special tokens), the
token bytes' end offsets and ranks as little-endian uint32 arrays (the ranks left out when they are
0, 1, 2... in order, as shipped vocabularies have them), and the token bytes end to end. Reading it
needs no numpy, and no json when there is nothing else.

Where: `TOKEXPLORER_CACHE` if set (empty: no cache at all), else the platform's cache folder
(`%LOCALAPPDATA%` on Windows, `~/Library/Caches` on macOS, `$XDG_CACHE_HOME` or `~/.cache`
elsewhere) under `tokexplorer/vocab`. A copy that cannot be written (read-only home, full disk) is
skipped silently: the cache only ever saves time. Copies are written atomically (a temporary file
renamed over), so two processes building the same copy at once both end with a whole one.

It does not decide what is cached: `core.registry` wraps each built-in's parse with `cached`.
"""

from __future__ import annotations

import os
import struct
import sys
import time
import zlib
from pathlib import Path
from typing import Callable, Protocol, Sequence

MAGIC = b"TXVOCAB3"
# magic, token count, payload length, CRC-32 of the payload
_HEADER = struct.Struct("<8sQQI")
# before the arrays: whether the ranks are 0..n-1 in order, how many stamps, the extra JSON's length
_META = struct.Struct("<QQQ")
NO_STAMP = [0] * 5  # a stamp not kept (`_settled_stamp`)
Ranks = dict[bytes, int]
Stamp = list[int]  # st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns
RACY_SECONDS = 2.0  # a file changed this recently is hashed again at the next start


class Source(Protocol):
    """A shipped file with the sha256 it must have (`registry.DataFile`)."""

    sha256: str

    def location(self) -> Path: ...

    def read(self) -> bytes:
        """The content, checked against `sha256` (a TokexplorerError if missing or changed)."""
        ...


def cache_folder() -> Path | None:
    """The folder of the compact copies, or None when caching is turned off."""
    chosen = os.environ.get("TOKEXPLORER_CACHE")
    if chosen is not None:
        return Path(chosen) / "vocab" if chosen else None
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "tokexplorer" / "vocab"


def _uint32(values: Sequence[int]) -> bytes:
    return struct.pack(f"<{len(values)}I", *values)


def _read_uint32(data: memoryview) -> tuple[int, ...]:
    return struct.unpack(f"<{len(data) // 4}I", data)


def encode_copy(ranks: Ranks, extra: dict, stamps: Sequence[Stamp | None] = ()) -> bytes:
    """The bytes of a compact copy of `ranks` (token bytes -> rank) and `extra` (JSON-able), with
    the stamps of the shipped files it was made from.

    >>> decode_copy(encode_copy({b"a": 0, b"bc": 5}, {"pattern": "x"}))
    ({b'a': 0, b'bc': 5}, {'pattern': 'x'})
    """
    tokens = list(ranks)
    ends, end = [], 0
    for token in tokens:
        end += len(token)
        ends.append(end)
    if end >= 1 << 32 or max(ranks.values(), default=0) >= 1 << 32:
        raise ValueError("a vocabulary too big for the compact copy")
    ordered = all(r == i for i, r in enumerate(ranks.values()))
    extra_json = b"{}"
    if extra:
        import json

        extra_json = json.dumps(extra, ensure_ascii=False).encode("utf-8")
    stamp_words = [word for st in stamps for word in (st or NO_STAMP)]
    payload = b"".join([_META.pack(ordered, len(stamps), len(extra_json)), struct.pack(f"<{len(stamp_words)}Q", *stamp_words),
                        extra_json, _uint32(ends), b"" if ordered else _uint32(list(ranks.values())), *tokens])
    return _HEADER.pack(MAGIC, len(tokens), len(payload), zlib.crc32(payload)) + payload


def read_copy(data: bytes) -> tuple[Ranks, dict, list[Stamp | None]] | None:
    """The ranks, extra and stamps of a compact copy; None if it is not a whole, undamaged one."""
    if len(data) < _HEADER.size:
        return None
    magic, n, length, checksum = _HEADER.unpack_from(data)
    payload = memoryview(data)[_HEADER.size:]
    if magic != MAGIC or len(payload) != length or zlib.crc32(payload) != checksum:
        return None
    if len(payload) < _META.size:
        return None
    ordered, n_stamps, extra_length = _META.unpack_from(payload)
    at = _META.size + 40 * n_stamps
    words = struct.unpack_from(f"<{5 * n_stamps}Q", payload, _META.size)
    stamps = [list(words[k:k + 5]) for k in range(0, len(words), 5)]
    extra = {}
    if bytes(payload[at:at + extra_length]) != b"{}":
        import json  # (only for a vocabulary with more than its tokens: a pattern, specials)

        extra = json.loads(bytes(payload[at:at + extra_length]))
    at += extra_length
    ends = _read_uint32(payload[at:at + 4 * n])
    at += 4 * n
    ranks: Sequence[int] = range(n)
    if not ordered:
        ranks = _read_uint32(payload[at:at + 4 * n])
        at += 4 * n
    blob = bytes(payload[at:])
    if (ends[-1] if n else 0) != len(blob) or len(ends) != n or len(ranks) != n:
        return None
    starts = (0, *ends[:-1])
    return dict(zip([blob[a:b] for a, b in zip(starts, ends)], ranks)), extra, [None if st == NO_STAMP else st for st in stamps]


def decode_copy(data: bytes) -> tuple[Ranks, dict] | None:
    """The ranks and extra of a compact copy; None if it is not a whole, undamaged one."""
    found = read_copy(data)
    return None if found is None else found[:2]


def stamp(path: Path) -> Stamp:
    """What identifies a file's content without reading it (see the module's docstring)."""
    st = os.stat(path)
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _settled_stamp(before: Stamp, path: Path) -> Stamp | None:
    """`before` if the file is the same after its read and older than RACY_SECONDS, else None."""
    try:
        after = stamp(path)
    except OSError:
        return None
    if after != before or time.time_ns() - max(before[3], before[4]) < RACY_SECONDS * 1e9:
        return None
    return before


def cached(name: str, sources: Sequence[Source], build: Callable[..., tuple[Ranks, dict]]) -> tuple[Ranks, dict]:
    """`build(*contents)`'s ranks and extra for the shipped files `sources`: read from the compact
    copy named by `name` and the files' expected hashes when the copy is good and was made from
    these very files (their stamps); otherwise each file is read and its hash checked
    (`Source.read`), and the copy written (its ranks reused when only the stamps were stale)."""
    folder = cache_folder()
    from tokexplorer import __version__

    hashes = "-".join(s.sha256[:16] for s in sources)
    path = folder / f"{name}-{__version__}-{hashes}.bin" if folder is not None else None
    try:
        stamps: list[Stamp | None] = [stamp(s.location()) for s in sources]
    except (OSError, ImportError, AttributeError, TypeError, StopIteration):  # missing: read() says so
        stamps = [None] * len(sources)
    found = None
    if path is not None:
        try:
            found = read_copy(path.read_bytes())
        except (OSError, ValueError, struct.error):  # missing, unreadable, or JSON that does not parse
            found = None
        if found is not None and None not in stamps and found[2] == stamps:
            return found[0], found[1]
    contents = [s.read() for s in sources]  # raises if a file is missing or not the expected one
    ranks, extra = found[:2] if found is not None else build(*contents)
    if path is not None:
        settled = [None if before is None else _settled_stamp(before, s.location())
                   for before, s in zip(stamps, sources)]
        _write(path, ranks, extra, settled)
    return ranks, extra


def _write(path: Path, ranks: Ranks, extra: dict, stamps: Sequence[Stamp | None]) -> None:
    try:
        data = encode_copy(ranks, extra, stamps)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except (OSError, ValueError):
        try:
            temporary.unlink()
        except (OSError, UnboundLocalError):
            pass
