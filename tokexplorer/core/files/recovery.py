"""Recovery files: unsaved text kept on disk so that a crash does not lose it.

A running instance `claim`s a `Session` in the recovery folder: `<id>.lock`, locked with an
advisory lock for as long as the process lives (the kernel drops the lock when the process dies,
even by SIGKILL, so a pid that is reused later cannot pass for the owner), and `<id>.recovery`, the
latest copy of its unsaved text. `orphans` finds the recovery files whose owner is gone and locks
each one it returns, so two instances starting at once never offer the same text; an instance
still running keeps its lock and its file.

A recovery file is one JSON header line (where the text came from and what that file was on disk
when the text was last read from it or saved to it, its line ending, tokenizer and policy, when it
was written, its length) and then the text's UTF-8 bytes exactly as saved (CRLF kept). No Qt here:
the window's side is gui/autosave.py.

The unsaved text may be a private file's, so everything here is this user's alone, whatever the
umask: the folder 0700 (`private_folder`; a folder that is a symlink or another user's is refused),
each recovery file 0600. Nothing is ever followed through a symbolic link: recovery files and locks
are opened with O_NOFOLLOW (a link planted in the folder is refused, never read, written through or
created at its target), a recovery file is written to a new temporary file (O_EXCL) that then
replaces the name (a link at the name is replaced, not followed), and a recovery file that is not a
regular file of this user's is not read.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from tokexplorer.core.tokenizer import TokexplorerError

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None
    import msvcrt

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # 0 on Windows, which has no symlinks a user can plant
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO planted under the name must not block the open
MAX_BYTES = 1 << 31  # a recovery file larger than the window could ever hold is not read

MAGIC = "tokexplorer-recovery"
VERSION = 1
SUFFIX = ".recovery"


@dataclass(frozen=True)
class Recovered:
    """An unsaved text and what the window needs to show it as it was."""

    text: str  # as it would be saved: the file's own line endings
    path: str | None = None  # the file it was opened from or saved to; None: untitled
    # that file on disk when the text was last read or saved: (mtime in ns, size, inode, device);
    # a Save after the restore asks first if the file differs from it (changed while we were down)
    disk: tuple[int, int, int, int] | None = None
    newline: str = "\n"  # the line ending typed Enter writes
    tokenizer: str = ""  # the picker's name
    tokenizer_file: str | None = None  # the tokenizer's file, when it is not a built-in
    document_policy: str | None = None  # the document's own special-token policy, if it had one
    saved_at: float = 0.0  # time.time() of the write
    pid: int = 0  # the process that wrote it
    extra: dict = field(default_factory=dict)  # keys a newer version wrote, kept as they are


def dump(rec: Recovered) -> bytes:
    """A recovery file's bytes.

    >>> data = dump(Recovered("a\\r\\n😀", path="x.txt", newline="\\r\\n", saved_at=1.0))
    >>> load(data).text == "a\\r\\n😀", data.count(b"\\n")
    (True, 2)
    """
    body = rec.text.encode("utf-8", "surrogatepass")
    header = {"format": MAGIC, "version": VERSION, "bytes": len(body), "path": rec.path,
              "disk": list(rec.disk) if rec.disk is not None else None,
              "newline": rec.newline, "tokenizer": rec.tokenizer, "tokenizer_file": rec.tokenizer_file,
              "document_policy": rec.document_policy, "saved_at": rec.saved_at, "pid": rec.pid, **rec.extra}
    return json.dumps(header, ensure_ascii=True).encode("ascii") + b"\n" + body


def load(data: bytes, *, source: str = "the recovery file") -> Recovered:
    """Parse `dump`'s bytes; TokexplorerError says what is wrong with a damaged file."""
    head, sep, body = data.partition(b"\n")
    try:
        header = json.loads(head.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        header = None
    if not sep or not isinstance(header, dict) or header.get("format") != MAGIC:
        raise TokexplorerError(f"{source} is not a tokexplorer recovery file")
    if not isinstance(header.get("bytes"), int) or header["bytes"] != len(body):
        raise TokexplorerError(f"{source} is cut short: {len(body):,} of {header.get('bytes')} bytes of text")
    try:
        text = body.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise TokexplorerError(f"{source}: the text is not UTF-8 (byte offset {exc.start})") from None
    known = {"format", "version", "bytes", "path", "disk", "newline", "tokenizer", "tokenizer_file",
             "document_policy", "saved_at", "pid"}
    newline = header.get("newline")
    return Recovered(text=text, path=_str_or_none(header.get("path")), disk=_disk_or_none(header.get("disk")),
                     newline=newline if newline in ("\n", "\r\n", "\r") else "\n",
                     tokenizer=str(header.get("tokenizer") or ""),
                     tokenizer_file=_str_or_none(header.get("tokenizer_file")),
                     document_policy=_str_or_none(header.get("document_policy")),
                     saved_at=float(header.get("saved_at") or 0.0), pid=int(header.get("pid") or 0),
                     extra={k: v for k, v in header.items() if k not in known})


def _str_or_none(value) -> str | None:
    return str(value) if value is not None else None


def _disk_or_none(value) -> tuple[int, int, int, int] | None:
    """A recorded (mtime in ns, size, inode, device), or None for anything else (not recorded, or
    damaged: then the file counts as changed, and Save asks)."""
    if (isinstance(value, list) and len(value) == 4
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        return tuple(value)
    return None


def _own_uid() -> int | None:
    return os.getuid() if hasattr(os, "getuid") else None


def private_folder(folder: str | os.PathLike) -> Path:
    """Create `folder` if needed (its parents too) and make it this user's alone: mode 0700 whatever
    the umask. OSError when it is a symlink, not a folder, or another user's."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = os.lstat(folder)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise OSError(errno.ENOTDIR, "not a folder of its own (a symbolic link or a file)", str(folder))
    uid = _own_uid()
    if uid is not None and st.st_uid != uid:
        raise OSError(errno.EPERM, "the folder belongs to another user", str(folder))
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(folder, 0o700)
    return folder


def write_private(path: Path, data: bytes) -> None:
    """Replace the file `path` with `data`, mode 0600, atomically and never through a link: a new
    temporary file (O_EXCL, O_NOFOLLOW) beside it, synced, then renamed over the name."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | _CLOEXEC, 0o600)
    try:
        try:
            if hasattr(os, "fchmod"):
                os.fchmod(fd, 0o600)  # exactly 0600: a umask of 0277 must not make it 0400
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_private(path: Path) -> bytes:
    """A recovery file's bytes; TokexplorerError when it is a symbolic link (not followed), not a
    regular file, another user's, or too large."""
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW | _NONBLOCK | _CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP or path.is_symlink():
            raise TokexplorerError(f"{path} is a symbolic link; recovery files are never followed "
                                   "through links") from None
        raise
    try:
        st = os.fstat(fd)
        uid = _own_uid()
        if not stat.S_ISREG(st.st_mode):
            raise TokexplorerError(f"{path} is not a regular file")
        if uid is not None and st.st_uid != uid:
            raise TokexplorerError(f"{path} belongs to another user")
        if st.st_size > MAX_BYTES:
            raise TokexplorerError(f"{path} is too large for a recovery file ({st.st_size:,} bytes)")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(MAX_BYTES + 1)
    finally:
        os.close(fd)


def _try_lock(fd: int) -> bool:
    """Lock an open file for this process; False when another process holds it."""
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except OSError:
        return False
    return True


class Lock:
    """`<id>.lock` in a folder, held by this process until `release`."""

    def __init__(self, folder: Path, ident: str, fd: int):
        self.folder, self.id, self._fd = folder, ident, fd

    @property
    def recovery_path(self) -> Path:
        return self.folder / f"{self.id}{SUFFIX}"

    @property
    def lock_path(self) -> Path:
        return self.folder / f"{self.id}.lock"

    @classmethod
    def acquire(cls, folder: Path, ident: str) -> Lock | None:
        """The lock on `ident`, or None when a live process holds it."""
        path = folder / f"{ident}.lock"
        # A symlink planted as the lock is refused (ELOOP), never followed to create its target.
        fd = os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o600)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, "not a regular file", str(path))
            # subtle: a lock file removed (by its releasing owner) between our open and our lock
            # is not the one at the path any more; holding it would guard nothing.
            if _try_lock(fd) and os.path.samestat(st, os.lstat(path)):
                return cls(folder, ident, fd)
        except FileNotFoundError:
            pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        return None

    def read(self) -> bytes:
        """The recovery file's bytes (`read_private`: never through a link)."""
        return read_private(self.recovery_path)

    def release(self, *, remove: bool) -> None:
        """Let go of the lock; with `remove`, delete the recovery file and the lock file first.

        subtle: the files go while the lock is still held, so a process that locks the old lock
        file afterwards finds no recovery file beside it and skips it.
        """
        if self._fd < 0:
            return
        if remove:
            # the temporary files of writes a kill interrupted (write_private) go too
            leftovers = list(self.folder.glob(f".{self.id}{SUFFIX}.*.tmp"))
            for p in (*leftovers, self.recovery_path, self.lock_path):
                try:
                    p.unlink()
                except FileNotFoundError:
                    pass
        os.close(self._fd)
        self._fd = -1


class Session(Lock):
    """This process's own recovery file."""

    @classmethod
    def claim(cls, folder: str | os.PathLike) -> Session:
        """A new session in `folder` (created if needed, made 0700); OSError when it cannot be
        written or is not a private folder of this user's."""
        folder = private_folder(folder)
        while True:
            lock = cls.acquire(folder, f"{os.getpid()}-{secrets.token_hex(4)}")
            if lock is not None:
                os.write(lock._fd, f"{os.getpid()}\n".encode())
                return lock

    def write(self, rec: Recovered) -> None:
        """Replace this session's recovery file with `rec` (atomically, mode 0600, never through a link)."""
        write_private(self.recovery_path, dump(rec))

    def clear(self) -> None:
        """No unsaved text any more: remove the recovery file, keep the session."""
        try:
            self.recovery_path.unlink()
        except FileNotFoundError:
            pass

    def adopt(self, orphan: Lock, data: bytes | None = None) -> None:
        """Take an orphan's recovery file (`data`, its bytes as read, or read now) as this session's
        own, and drop the orphan. The bytes are written anew rather than the file moved, so what
        this session keeps is always a private regular file of its own."""
        write_private(self.recovery_path, orphan.read() if data is None else data)
        orphan.release(remove=True)


def orphans(folder: str | os.PathLike, *, own: str | None = None) -> list[Lock]:
    """Locks on the recovery files in `folder` whose process is gone, newest first. The caller
    holds each lock until it `release`s it (restored, discarded, or kept for the next start)."""
    folder = Path(folder)
    found: list[tuple[float, Lock]] = []
    for path in folder.glob(f"*{SUFFIX}"):
        ident = path.name[:-len(SUFFIX)]
        if ident == own:
            continue
        try:
            lock = Lock.acquire(folder, ident)
        except OSError:
            continue
        if lock is None:
            continue  # its process is running
        try:
            mtime = lock.recovery_path.lstat().st_mtime  # a link too: refused when read, and said
        except FileNotFoundError:  # adopted or cleared meanwhile by its owner
            lock.release(remove=False)
            continue
        found.append((mtime, lock))
    for path in folder.glob("*.lock"):  # left by a crash before anything was unsaved
        ident = path.name[:-len(".lock")]
        if ident != own and not os.path.lexists(folder / f"{ident}{SUFFIX}"):
            try:
                stale = Lock.acquire(folder, ident)
            except OSError:
                continue
            if stale is not None and not os.path.lexists(stale.recovery_path):
                stale.release(remove=True)
            elif stale is not None:
                stale.release(remove=False)
    return [lock for _, lock in sorted(found, key=lambda item: -item[0])]


def tokenizer_file(tok) -> tuple[str, bytes] | None:
    """A file's (suffix, bytes) that hold a tokenizer kept only in memory (one trained in the window),
    readable by registry.load_tokenizer; None when no format here keeps it whole.

    >>> from tokexplorer.core.backends.trained_bpe import BPETokenizer
    >>> tokenizer_file(BPETokenizer({(104, 105): 256}, None, {}))
    ('.model', b'minbpe v1\\n\\n0\\n104 105\\n')
    """
    from tokexplorer.core.files.minbpe import model_text

    whole = tok.save_formats[0] if tok.save_formats else None  # the format that keeps it whole
    if whole == "minbpe":
        try:
            return ".model", model_text(tok).encode("utf-8")
        except TokexplorerError:  # a pattern or special token minbpe's file cannot hold
            return None
    if whole == "sentencepiece":
        return ".model", tok.model_proto  # the model as trained
    return None


def describe_time(saved_at: float, now: float | None = None) -> str:
    """When a recovery file was written, for the question.

    >>> describe_time(0.0, 30.0)
    '30 seconds ago'
    """
    now = time.time() if now is None else now
    age = max(0.0, now - saved_at)
    if age < 90:
        return f"{age:.0f} seconds ago"
    if age < 90 * 60:
        return f"{age / 60:.0f} minutes ago"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(saved_at))
