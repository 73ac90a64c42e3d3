"""Reading and writing text files exactly, and writing any file atomically.

Text is read as its bytes decoded: UTF-8 (a leading byte-order mark dropped) or UTF-16 with a BOM,
no newline translation, so a CRLF file keeps its CRs. Anything else is refused with the offset of the
first bad byte, unless the caller names an encoding; UTF-16 without a BOM (valid UTF-8 when it
is Latin text, with a NUL in every other byte) is recognised and refused with the encoding to name. Writes go to a temporary file in the same folder
that replaces the target only when complete (`write_atomic`), keeping the file's permissions and
writing through symlinks; files that belong together are replaced together (`write_set`).
"""

from __future__ import annotations

import codecs
import os
import signal
import stat
import tempfile
import threading
from pathlib import Path

from tokexplorer.core.tokenizer import TokexplorerError

class NotUtf8Error(TokexplorerError):
    """A file's bytes are not UTF-8; `offset` is the first bad byte."""

    def __init__(self, path: str, offset: int, byte: int):
        self.path, self.offset, self.byte = path, offset, byte
        super().__init__(
            f"{path}: not UTF-8 text (byte 0x{byte:02X} at offset {offset}); "
            "if it is in another encoding, name it with --encoding (e.g. --encoding latin-1)"
        )


class Utf16WithoutBomError(NotUtf8Error):
    """The bytes look like UTF-16 without a byte-order mark (every other byte NUL); `encoding` is
    the one that decodes them."""

    def __init__(self, path: str, encoding: str):
        self.path, self.offset, self.byte, self.encoding = path, 0, 0, encoding
        TokexplorerError.__init__(
            self, f"{path}: looks like {encoding.upper()} text without a byte-order mark (every "
            f"other byte is NUL), not UTF-8; open it with --encoding {encoding}"
        )


def utf16_without_bom(data: bytes) -> str | None:
    """"utf-16-le" or "utf-16-be" when the bytes look like UTF-16 without a BOM, else None.

    Text in a Latin script has a NUL in every other byte in UTF-16, and almost never in UTF-8.

    >>> utf16_without_bom("hello".encode("utf-16-le")), utf16_without_bom(b"hello")
    ('utf-16-le', None)
    """
    sample = data[:1 << 16]
    if len(data) % 2 or len(sample) < 2 or b"\x00" not in sample:
        return None
    half = len(sample) // 2
    odd, even = sample[1::2].count(0), sample[0::2].count(0)
    for encoding, nul, other in (("utf-16-le", odd, even), ("utf-16-be", even, odd)):
        if nul >= 0.3 * half and other <= 0.02 * half:
            try:
                data.decode(encoding)
            except UnicodeDecodeError:
                return None
            return encoding
    return None


def decode_text(data: bytes, *, source: str = "the text", encoding: str | None = None) -> str:
    """Decode bytes as the file reader does.

    >>> decode_text(b"\\xef\\xbb\\xbfhi\\r\\n")
    'hi\\r\\n'
    """
    if encoding is not None:
        try:
            text_encoding = codecs.lookup(encoding)._is_text_encoding
        except LookupError:
            raise TokexplorerError(f"unknown encoding {encoding!r}") from None
        if not text_encoding:  # rot13, base64, zlib...: codecs, but not from bytes to text
            raise TokexplorerError(f"{encoding!r} is not a text encoding; name one such as latin-1 or utf-16")
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
    if not bom:
        utf16 = utf16_without_bom(data)
        if utf16 is not None:
            raise Utf16WithoutBomError(source, utf16)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotUtf8Error(source, exc.start + bom, data[exc.start]) from None


def read_text_file(path: str | os.PathLike, *, encoding: str | None = None) -> str:
    """The text of a file; a clear TokexplorerError if it is missing, unreadable or not text."""
    from tokexplorer.core.files.file_budget import open_regular

    p = Path(path)
    # subtle: a device (/dev/zero, /dev/urandom) never ends and a FIFO blocks: refused unread
    f, _ = open_regular(p, what="text file")
    try:
        with f:
            data = f.read()
    except OSError as exc:
        raise TokexplorerError(f"cannot read {p}: {exc.strerror or exc}") from None
    return decode_text(data, source=str(p), encoding=encoding)


def _umask() -> int:
    """The process's umask, read without changing it where the system allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    # subtle: elsewhere the only way to read it is to set it; other threads rarely create files.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _target(path: str | os.PathLike) -> Path:
    """Where a write should land: through a symlink to its target (which may not exist yet)."""
    p = Path(path)
    return Path(os.path.realpath(p)) if p.is_symlink() else p


def _write_temp(target: Path, data: bytes) -> Path:
    """A complete, synced temporary file beside `target`, with the mode `target` should have:
    the old file's mode if there is one, else what the umask gives a new file (not mkstemp's 0600).
    """
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        _unlink(Path(tmp))
        raise
    return Path(tmp)


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write bytes so that the file is either the old one or the complete new one.

    Raises TokexplorerError (saying which file and why) when it cannot; the file keeps its
    permissions, a symlink keeps pointing at it (the target gets the new
    content), and a new file gets the umask's usual mode.
    """
    write_set({path: data})


def write_set(files: dict[str | os.PathLike, bytes]) -> None:
    """Write several files that belong together (a model and its vocabulary): either all are the
    new ones or, if anything fails (a full disk, Ctrl-C), all are still the old ones.

    Every file is written to a temporary file first; only when all are complete are they renamed
    into place, with Ctrl-C held back meanwhile, and a rename that fails puts the old files back.
    """
    targets = [(_target(p), data) for p, data in files.items()]
    temps: list[Path] = []
    target = None
    try:
        for target, data in targets:
            temps.append(_write_temp(target, data))
        with _sigint_held():
            _rename_all([t for t, _ in targets], temps)
    except OSError as exc:
        for tmp in temps:
            _unlink(tmp)
        kept = " (the old files are kept)" if len(targets) > 1 else ""
        raise TokexplorerError(f"cannot write {target}: {exc.strerror or exc}{kept}") from exc
    except BaseException:
        for tmp in temps:
            _unlink(tmp)
        raise


def _rename_all(targets: list[Path], temps: list[Path]) -> None:
    backups: list[tuple[Path, Path | None]] = []  # (target, hard link to its old file or None)
    try:
        for target in targets:
            backup = None
            if target.exists():
                backup = target.with_name(f".{target.name}.{os.getpid()}.old")
                try:
                    os.link(target, backup)
                except OSError:  # a file system without hard links: no way back for this one
                    backup = None
            backups.append((target, backup))
        done = 0
        try:
            for tmp, target in zip(temps, targets):
                os.replace(tmp, target)
                done += 1
        except BaseException:
            for target, backup in backups[:done]:
                if backup is not None:
                    os.replace(backup, target)
                else:
                    _unlink(target)
            raise
    finally:
        for tmp in temps:
            _unlink(tmp)
        for _, backup in backups:
            if backup is not None:
                _unlink(backup)


class _sigint_held:
    """Hold Ctrl-C back (in the main thread) until the block ends, then deliver it."""

    def __enter__(self) -> None:
        self.held = threading.current_thread() is threading.main_thread() and hasattr(signal, "pthread_sigmask")
        if self.held:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})

    def __exit__(self, *exc) -> None:
        if self.held:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
