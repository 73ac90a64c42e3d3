"""The tokenizer fields of a `.gguf` model file's metadata, read within what the file can hold.

A GGUF file starts with its metadata: a header (magic "GGUF", version, tensor count, key count),
then key/value pairs, each a key string, a type and a value; a value is a number, a bool, a string
(a length, then the bytes) or an array (an element type, a count, the elements). The tensors follow
and are never read here: the file is memory-mapped and only the metadata is walked.

subtle: every length and count in the file is a claim, checked against the bytes left before it
is believed (an 84-byte file may say its token array has 2^60 strings: `gguf`'s own reader then
loops for ever); arrays of arrays are walked to a small depth only, and the strings walked in all
are bounded, so any file is read in bounded time. Only the tokenizer fields are kept, each checked
for the type llama.cpp writes (`tokenizer.ggml.pre` a string, `bos_token_id` a whole number
among the token ids, `scores` numbers, ...); anything else is refused with one line naming the
field. Versions 1 to 3, either byte order, are read. (The `gguf` package is not needed for this, and
importing it takes two seconds.)
"""

from __future__ import annotations

import mmap
import os
import struct

from tokexplorer.core.encoding import is_utf8
from tokexplorer.core.files.file_budget import MAX_TOKENS, check_count, check_token_count, open_regular
from tokexplorer.core.tokenizer import TokexplorerError

# GGUF value types -> struct format of a fixed-size value
STRING, ARRAY = 8, 9
FIXED = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
INTEGERS = {0, 1, 2, 3, 4, 5, 10, 11}
NUMBERS = INTEGERS | {6, 12}
TYPE_NAMES = {0: "uint8", 1: "int8", 2: "uint16", 3: "int16", 4: "uint32", 5: "int32", 6: "float32",
              7: "bool", 8: "string", 9: "array", 10: "uint64", 11: "int64", 12: "float64"}
# What each tokenizer field must be: (a scalar's type set, or None) and (an array's element types,
# or None); the key in the result is the name after "tokenizer.ggml.".
FIELDS: dict[str, tuple[set[int] | None, set[int] | None, str]] = {
    "model": ({STRING}, None, "a string"),
    "pre": ({STRING}, None, "a string"),
    "tokens": (None, {STRING}, "an array of strings"),
    "merges": (None, {STRING}, "an array of strings"),
    "scores": (None, NUMBERS, "an array of numbers"),
    "token_type": (None, INTEGERS, "an array of whole numbers"),
    "add_space_prefix": ({7}, None, "a bool"),
    "bos_token_id": (INTEGERS, None, "a whole number"),
    "eos_token_id": (INTEGERS, None, "a whole number"),
}
MAX_DEPTH = 3  # arrays of arrays of arrays, in fields not kept; no tokenizer field nests
MAX_WALKED = 2 * MAX_TOKENS  # strings and arrays walked one by one in the whole file


class _Metadata:
    """A cursor over the metadata of a mapped GGUF file."""

    def __init__(self, buf, source: str):
        self.buf, self.source, self.pos, self.walked = buf, source, 4, 0
        version = struct.unpack_from("<I", buf, 4)[0] if len(buf) >= 8 else 0
        self.order = "<" if version & 0xFFFF else ">"  # subtle: a big-endian file's version reads as n << 16
        self.version = self.unpack("I")
        if self.version not in (1, 2, 3):
            raise TokexplorerError(f"{source}: GGUF version {self.version} is not one tokexplorer reads (1 to 3)")
        self.size_format = "I" if self.version == 1 else "Q"  # lengths and counts

    def fail(self, why: str) -> TokexplorerError:
        return TokexplorerError(f"{self.source}: not a readable GGUF file ({why}); it may be "
                                "truncated, corrupt or crafted")

    def unpack(self, fmt: str):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.buf):
            raise self.fail(f"it ends inside its metadata, at byte {len(self.buf):,}")
        value = struct.unpack_from(self.order + fmt, self.buf, self.pos)[0]
        self.pos += size
        return value

    def count(self, what: str, each: int) -> int:
        n = self.unpack(self.size_format)
        check_count(n, available=len(self.buf) - self.pos, each=each, source=self.source, what=what)
        return n

    def string(self, what: str, keep: bool = True) -> bytes | None:
        n = self.count(f"the string {what}", 1)
        start, self.pos = self.pos, self.pos + n
        return self.buf[start:self.pos] if keep else None

    def text(self, what: str) -> str:
        try:
            return self.string(what).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.fail(f"{what} is not UTF-8 text (byte {exc.start})") from None

    def strings(self, n: int, what: str, keep: bool) -> list[str] | None:
        """An array's `n` strings (kept: decoded; else skipped, None), read in one loop: a
        vocabulary has hundreds of thousands."""
        buf, pos, end = self.buf, self.pos, len(self.buf)
        length_of = struct.Struct(self.order + self.size_format)
        unpack, size = length_of.unpack_from, length_of.size
        kept: list[bytes] = []
        append = kept.append
        # subtle: no check inside the loop (it runs a million times): a length past the end makes
        # the next unpack fail, and the end is checked once after it
        try:
            for _ in range(n):
                start = pos + size
                pos = start + unpack(buf, pos)[0]
                if keep:
                    append(buf[start:pos])
        except struct.error:
            pos = end + 1
        if pos > end:
            raise self.fail(f"a string of {what} runs past the end of the file ({end:,} bytes)")
        self.pos = pos
        if not keep:
            return None
        try:
            return [data.decode("utf-8") for data in kept]
        except UnicodeDecodeError:
            bad = next(i for i, data in enumerate(kept) if not is_utf8(data))
            raise self.fail(f"{what}[{bad}] is not UTF-8 text") from None

    def walk(self, what: str) -> None:
        self.walked += 1
        if self.walked > MAX_WALKED:
            raise self.fail(f"its metadata has over {MAX_WALKED:,} strings and arrays")

    def value(self, kind: int, what: str, depth: int = 0, keep: bool = False):
        """The value of a type (kept: returned; else skipped, None)."""
        if kind in FIXED:
            return self.unpack(FIXED[kind])
        if kind == STRING:
            self.walk(what)
            return self.text(what) if keep else self.string(what, keep=False)
        if kind != ARRAY:
            raise self.fail(f"{what} has the unknown type {kind}")
        element = self.unpack("I")
        if element in FIXED:
            size = struct.calcsize(FIXED[element])
            n = self.count(what, size)
            start, self.pos = self.pos, self.pos + n * size
            if not keep:
                return None
            import numpy as np

            dtype = np.dtype(FIXED[element]).newbyteorder(self.order)
            # subtle: from a copy, so that no array holds the mapping open
            return np.frombuffer(self.buf[start:self.pos], dtype=dtype, count=n).tolist()
        if element == STRING:
            n = self.count(what, struct.calcsize(self.size_format))
            check_token_count(n, source=self.source, what=f"strings in {what}")
            self.walked += n
            if self.walked > MAX_WALKED:
                raise self.fail(f"its metadata has over {MAX_WALKED:,} strings and arrays")
            return self.strings(n, what, keep)
        if element == ARRAY:
            if depth + 1 >= MAX_DEPTH or keep:
                raise self.fail(f"{what} nests arrays {'in a tokenizer field' if keep else 'too deeply'}")
            n = self.count(what, 4 + struct.calcsize(self.size_format))
            for _ in range(n):
                self.walk(what)
                self.value(ARRAY, what, depth + 1)
            return None
        raise self.fail(f"{what} is an array of the unknown type {element}")


def read_tokenizer_metadata(path: str | os.PathLike, check=None) -> dict:
    """The tokenizer fields of a GGUF file (keys as in `FIELDS`), each checked for its type; a
    field of another type, or any damage, is refused with one line (TokexplorerError).

    `check`, when given, is called with the fields read before the arrays other than
    `token_type` (`tokens`, `merges`, `scores`) are read; there each is its count. It may refuse
    the file (raise) without the cost of a vocabulary of millions of strings."""
    source = os.fspath(path)
    f, size = open_regular(path, what="GGUF model file")
    with f:
        if size < 8:
            raise TokexplorerError(f"{source}: not a readable GGUF file (it has {size} bytes)")
        try:
            buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:
            raise TokexplorerError(f"cannot read {source}: {exc}") from None
    try:
        return _read(buf, source, check)
    finally:
        buf.close()


def _read(buf: mmap.mmap, source: str, check=None) -> dict:
    meta = _Metadata(buf, source)
    deferred: list[tuple[str, str, int, int, int]] = []  # arrays: name, key, kind, position, walked
    meta.unpack(meta.size_format)  # the tensor count: tensors are not read
    n_keys = meta.count("the key count", 4 + struct.calcsize(meta.size_format) + 1)
    out: dict = {}
    for _ in range(n_keys):
        key = meta.text("a key")
        kind = meta.unpack("I")
        name = key[len("tokenizer.ggml."):] if key.startswith("tokenizer.ggml.") else None
        if name not in FIELDS:
            meta.value(kind, key)
            continue
        scalar, elements, expected = FIELDS[name]
        element = None
        if kind == ARRAY:
            element = struct.unpack_from(meta.order + "I", buf, meta.pos)[0] if meta.pos + 4 <= len(buf) else None
        if (scalar is None or kind not in scalar) and (elements is None or kind != ARRAY or element not in elements):
            got = f"a {TYPE_NAMES.get(kind, f'value of type {kind}')}"
            if kind == ARRAY:
                got = f"an array of {TYPE_NAMES.get(element, f'type {element}')}s"
            raise TokexplorerError(f"{source}: the field {key} is {got}, not {expected} as in "
                                   "llama.cpp's files; the file is corrupt or crafted")
        if kind == ARRAY and name != "token_type":
            # walked over now (lengths checked), read after `check`
            deferred.append((name, key, kind, meta.pos, meta.walked))
            meta.value(kind, key)
            out[name] = struct.unpack_from(meta.order + meta.size_format, buf, deferred[-1][3] + 4)[0]
            continue
        out[name] = meta.value(kind, key, keep=True)
    if check is not None:
        check(out)
    for name, key, kind, meta.pos, meta.walked in deferred:
        out[name] = meta.value(kind, key, keep=True)
    return out
