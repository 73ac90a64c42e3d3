"""A compact copy of a built-in vocabulary in the user's cache folder, so that every start after
the first skips parsing the shipped file (base64 lines, JSON) and reads flat arrays instead.

The shipped file is still read and its sha256 checked on every load (`DataFile.read`: a few
milliseconds); the copy is named by that hash, so a changed package never meets an old copy. The
copy carries the sha256 of its own payload, checked before use: a damaged or foreign copy is
ignored and written again. It holds no code and is never unpickled: a header, the token bytes
end offsets and ranks as little-endian uint32 arrays, a small JSON object for what else the
loader needs (a split pattern, special tokens), and the token bytes end to end.

Where: `TOKEXPLORER_CACHE` if set (empty: no cache at all), else the platform's cache folder
(`%LOCALAPPDATA%` on Windows, `~/Library/Caches` on macOS, `$XDG_CACHE_HOME` or `~/.cache`
elsewhere) under `tokexplorer/vocab`. A copy that cannot be written (read-only home, full disk) is
skipped silently: the cache only ever saves time. Copies are written atomically (a temporary file
renamed over), so two processes building the same copy at once both end with a whole one.

It does not decide what is cached: `core.registry` wraps each built-in's parse with `cached`.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
from pathlib import Path
from typing import Callable

import numpy as np

MAGIC = b"TXVOCAB1"
# magic, token count, payload length, sha256 of the payload
_HEADER = struct.Struct("<8sQQ32s")
Ranks = dict[bytes, int]


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


def encode_copy(ranks: Ranks, extra: dict) -> bytes:
    """The bytes of a compact copy of `ranks` (token bytes -> rank) and `extra` (JSON-able).

    >>> decode_copy(encode_copy({b"a": 0, b"bc": 5}, {"pattern": "x"}))
    ({b'a': 0, b'bc': 5}, {'pattern': 'x'})
    """
    tokens = list(ranks)
    ends = np.cumsum(np.fromiter(map(len, tokens), dtype=np.uint64, count=len(tokens)))
    if (len(tokens) and int(ends[-1]) >= 1 << 32) or max(ranks.values(), default=0) >= 1 << 32:
        raise ValueError("a vocabulary too big for the compact copy")
    extra_json = json.dumps(extra, ensure_ascii=False).encode("utf-8")
    payload = b"".join([
        struct.pack("<Q", len(extra_json)),
        ends.astype("<u4").tobytes(),
        np.fromiter(ranks.values(), dtype="<u4", count=len(tokens)).tobytes(),
        extra_json,
        *tokens,
    ])
    return _HEADER.pack(MAGIC, len(tokens), len(payload), hashlib.sha256(payload).digest()) + payload


def decode_copy(data: bytes) -> tuple[Ranks, dict] | None:
    """The ranks and extra of a compact copy; None if it is not a whole, undamaged one."""
    if len(data) < _HEADER.size:
        return None
    magic, n, length, digest = _HEADER.unpack_from(data)
    payload = memoryview(data)[_HEADER.size:]
    if magic != MAGIC or len(payload) != length or hashlib.sha256(payload).digest() != digest:
        return None
    (extra_length,) = struct.unpack_from("<Q", payload)
    at = 8
    ends = np.frombuffer(payload, dtype="<u4", count=n, offset=at).tolist()
    ranks = np.frombuffer(payload, dtype="<u4", count=n, offset=at + 4 * n).tolist()
    at += 8 * n
    extra = json.loads(bytes(payload[at:at + extra_length]))
    blob = bytes(payload[at + extra_length:])
    if (ends[-1] if n else 0) != len(blob):
        return None
    starts = [0] + ends[:-1]
    return dict(zip([blob[a:b] for a, b in zip(starts, ends)], ranks)), extra


def cached(name: str, source_digest: str, build: Callable[[], tuple[Ranks, dict]]) -> tuple[Ranks, dict]:
    """`build()`'s ranks and extra, read from the compact copy named by `name` and the shipped
    files' `source_digest` when there is a good one, else built and the copy written."""
    folder = cache_folder()
    path = folder / f"{name}-{source_digest[:32]}.bin" if folder is not None else None
    if path is not None:
        try:
            found = decode_copy(path.read_bytes())
        except (OSError, ValueError):  # missing, unreadable, or JSON that does not parse
            found = None
        if found is not None:
            return found
    ranks, extra = build()
    if path is not None:
        _write(path, ranks, extra)
    return ranks, extra


def _write(path: Path, ranks: Ranks, extra: dict) -> None:
    try:
        data = encode_copy(ranks, extra)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except (OSError, ValueError):
        try:
            temporary.unlink()
        except (OSError, UnboundLocalError):
            pass
