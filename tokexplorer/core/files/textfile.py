"""Reading and writing text files exactly, and writing any file atomically.

Text is read as its bytes decoded: UTF-8 (a leading byte-order mark dropped) or UTF-16 with a BOM,
no newline translation, so a CRLF file keeps its CRs. Anything else is refused with the offset of the
first bad byte, unless the caller names an encoding; UTF-16 without a BOM (valid UTF-8 when it
is Latin text, with a NUL in every other byte) is recognised and refused with the encoding to name. Writes go to a temporary file in the same folder
that replaces the target only when complete (`write_atomic`), keeping the file's permissions and
writing through symlinks; files that belong together are replaced together (`write_set`).

`write_atomic` never clobbers what it should not: a read-only file (no write bit, or not writable
by this process) is refused (`ReadOnlyError`), even for root; the new file gets the old one's
owner, group and mode; a file with more than one name (a hard link) or one whose owner or group
this process cannot give a new file (another user's file it may write) is written in place, as
editors do, so every name keeps the new text and the owner stays. In place is not atomic (a kill in
the middle leaves a mix), so it is used only then; the space is reserved first (`posix_fallocate`),
so a full disk fails before a byte changes.

`write_set` keeps a set whole under any kill, SIGKILL included. Its temporary files are complete and
synced first; then a journal naming each temporary file and its target (`.NAME.PID.set`, NAME the
first file's, one copy in each folder of the set) is written and synced: the commit point. The
renames follow, and the journals go last. A process killed before the journal leaves the old set
(and temporary files); killed after it, the journal says how to finish: the next `write_set` to
those names, or `settle(path)` (which readers of a set's file call), renames what is left (rolls
forward) once the writer's process is gone, and only when the journal and its temporary files are
this user's (root does not finish a set another user's files name). Leftovers of a process that is
gone (`.NAME.PID.*.tmp`, `.NAME.PID.old`, journals) are removed at the next write of the same
names; nothing else in the folder is touched.

It runs past 400 lines because reading exactly, writing atomically and writing a set whole share one
set of rules for temporary files, syncs and renames.
"""

from __future__ import annotations

import codecs
import errno
import json
import os
import re
import signal
import stat
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


def read_text_file(path: str | os.PathLike, *, encoding: str | None = None, limit_mb: float | None = None) -> str:
    """The text of a file; a clear TokexplorerError if it is missing, unreadable, not text, or over
    `limit_mb` (default budgets.READ_WHOLE_LIMIT_MB), refused before a byte is read.

    subtle: what reads in blocks never comes here (UTF-8 text: `text_blocks.TextFile`); a file
    read whole is held as bytes and then as a str of up to four bytes a character, so a 10 GB
    sparse file given to `--file` once took the machine's memory."""
    from tokexplorer.core.budgets import read_whole_over_budget
    from tokexplorer.core.files.file_budget import open_regular

    p = Path(path)
    # subtle: a device (/dev/zero, /dev/urandom) never ends and a FIFO blocks: refused unread
    f, size = open_regular(p, what="text file")
    try:
        with f:
            problem = read_whole_over_budget(p, size, limit_mb)
            if problem is not None:
                raise TokexplorerError(problem)
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
        old = target.stat()
        mode = stat.S_IMODE(old.st_mode)
    except FileNotFoundError:
        old, mode = None, 0o666 & ~_umask()
    # (os.urandom, not secrets.token_hex: `secrets` imports hashlib and OpenSSL, tens of ms a command)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")  # see _LEFTOVER
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            mine = os.fstat(f.fileno())
            if old is not None and hasattr(os, "fchown") and (old.st_uid, old.st_gid) != (mine.st_uid, mine.st_gid):
                try:  # the old owner and group (chown first: it clears set-id bits that fchmod restores)
                    os.fchown(f.fileno(), old.st_uid, old.st_gid)
                except PermissionError:  # write_atomic writes such files in place; a set keeps ours
                    pass
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


class ReadOnlyError(TokexplorerError):
    """A file that exists and must not be written: no write permission bit, or not writable here."""

    def __init__(self, path: str):
        self.path = path
        super().__init__(f"cannot write {path}: the file is read-only")


def read_only(path: str | os.PathLike) -> bool:
    """Whether `path` (through a symlink) is an existing file that must not be written: no write
    bit at all (0444: refused even for root, who may write anything), or not writable by us."""
    target = _target(path)
    try:
        st = target.stat()
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and (not st.st_mode & 0o222 or not os.access(target, os.W_OK))


def _may_own_like(st: os.stat_result) -> bool:
    """Whether a new file of this process's can be given `st`'s owner and group (fchown)."""
    if not hasattr(os, "geteuid"):
        return True
    euid = os.geteuid()
    if euid == 0:
        return True
    return st.st_uid == euid and (st.st_gid == os.getegid() or st.st_gid in os.getgroups())


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write bytes so that the file is either the old one or the complete new one.

    Raises TokexplorerError (saying which file and why) when it cannot, ReadOnlyError for a
    read-only file; the file keeps its owner, group and permissions, a symlink keeps pointing at it
    (the target gets the new content), and a new file gets the umask's usual mode. A hard-linked
    file, or one whose owner this process cannot keep on a new file, is written in place (not
    atomic then: see the module's note).
    """
    target = _target(path)
    if read_only(target):
        raise ReadOnlyError(str(target))
    try:
        st = target.stat()
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise TokexplorerError(f"cannot write {target}: {exc.strerror or exc}") from exc
    if st is not None and stat.S_ISREG(st.st_mode) and (st.st_nlink > 1 or not _may_own_like(st)):
        try:
            _write_in_place(target, data, st.st_size)
        except OSError as exc:
            raise TokexplorerError(f"cannot write {target}: {exc.strerror or exc}") from exc
        return
    tmp = None
    try:
        tmp = _write_temp(target, data)
        with _sigint_held():
            os.replace(tmp, target)
    except OSError as exc:
        if tmp is not None:
            _unlink(tmp)
        raise TokexplorerError(f"cannot write {target}: {exc.strerror or exc}") from exc
    except BaseException:
        if tmp is not None:
            _unlink(tmp)
        raise


def _write_in_place(target: Path, data: bytes, old_size: int) -> None:
    """Overwrite the file itself (its inode: every hard link, its owner, mode and ACLs stay)."""
    fd = os.open(target, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))  # no O_TRUNC: nothing lost yet
    try:
        if len(data) > old_size and hasattr(os, "posix_fallocate"):
            try:
                os.posix_fallocate(fd, 0, len(data))  # a full disk fails here, before a byte changes
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                    raise
        with _sigint_held():
            os.lseek(fd, 0, os.SEEK_SET)  # (not pwrite: Windows has hard links but no pwrite)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.ftruncate(fd, len(data))
            os.fsync(fd)
    finally:
        os.close(fd)


def write_set(files: dict[str | os.PathLike, bytes]) -> None:
    """Write several files that belong together (a model and its vocabulary): either all are the
    new ones or, if anything fails (a full disk, Ctrl-C), all are still the old ones; after a kill
    in the middle, the set is finished (all new) by the next write or read (see the module's note).

    Every file is written to a temporary file first; only when all are complete is the journal
    written and are they renamed into place, with Ctrl-C held back meanwhile, and a rename that
    fails puts the old files back.
    """
    targets = [(_target(p), data) for p, data in files.items()]
    for folder in dict.fromkeys(t.parent for t, _ in targets):
        try:
            settle_folder(folder, {t.name for t, _ in targets if t.parent == folder})
        except OSError:
            pass  # a folder that cannot be tidied may still be written: the write says why not
    temps: list[Path] = []
    target = None
    journals: list[Path] = []
    try:
        for target, data in targets:
            temps.append(_write_temp(target, data))
        with _sigint_held():
            if len(targets) > 1:
                target = targets[0][0]
                journals = _write_journal([t for t, _ in targets], temps)
            _rename_all([t for t, _ in targets], temps, journals)
    except OSError as exc:
        for tmp in temps:
            _unlink(tmp)
        kept = " (the old files are kept)" if len(targets) > 1 else ""
        raise TokexplorerError(f"cannot write {target}: {exc.strerror or exc}{kept}") from exc
    except BaseException:
        for tmp in temps:
            _unlink(tmp)
        raise


SET_MAGIC = "tokexplorer-file-set"
# What write_set and write_atomic leave when killed: .NAME.PID.HEX8.tmp, .NAME.PID.old, .NAME.PID.set
_LEFTOVER = re.compile(r"\.(?P<name>.+)\.(?P<pid>\d+)\.(?:[0-9a-f]{8}\.tmp|old|set)")


def _fsync_folder(folder: Path) -> None:
    """Make a rename in `folder` durable (a power cut; a kill needs nothing). Best effort."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_journal(targets: list[Path], temps: list[Path]) -> list[Path]:
    """The commit point of a set: which temporary file becomes which target, synced, in place in
    each folder of the set (a reader of any of its files finds it)."""
    first = targets[0]
    name = f".{first.name}.{os.getpid()}.set"
    folders = list(dict.fromkeys(t.parent.absolute() for t in targets))
    body = json.dumps({"format": SET_MAGIC, "pid": os.getpid(), "folders": [str(f) for f in folders],
                       "files": [[tmp.name, str(target.absolute())] for tmp, target in zip(temps, targets)]})
    journals = []
    try:
        for folder in folders:
            journal = folder / name
            tmp = _write_temp(journal, body.encode("utf-8"))
            try:
                os.replace(tmp, journal)
            except BaseException:
                _unlink(tmp)
                raise
            journals.append(journal)
            _fsync_folder(folder)
    except BaseException:
        for journal in journals:
            _unlink(journal)
        raise
    return journals


def _process_gone(pid: int) -> bool:
    """Whether no process has this id (a reused id counts as alive: its leftovers just wait)."""
    if pid == os.getpid() or os.name == "nt":  # os.kill(pid, 0) would end a process on Windows
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def _mine(path: Path) -> bool:
    """A regular file (not a link) of this process's user."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and (not hasattr(os, "geteuid") or st.st_uid == os.geteuid())


def _read_journal(journal: Path) -> tuple[list[tuple[Path, Path]], list[Path]] | None:
    """A dead writer's journal: its (temporary file, target) pairs, each temporary file beside its
    target and named as that writer names them, and the journal's copies; None for anything else,
    or when the journal or a temporary file is not this user's (left alone)."""
    match = _LEFTOVER.fullmatch(journal.name)
    if match is None or not journal.name.endswith(".set") or not _process_gone(int(match["pid"])):
        return None
    try:
        if not _mine(journal) or os.lstat(journal).st_size > 1 << 20:
            return None
        data = json.loads(journal.read_bytes())
        pairs = [(Path(target).with_name(tmp), Path(target)) for tmp, target in data["files"]]
        copies = [Path(folder) / journal.name for folder in data["folders"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    if data.get("format") != SET_MAGIC or data.get("pid") != int(match["pid"]):
        return None
    for tmp, target in pairs:
        own = _LEFTOVER.fullmatch(tmp.name)
        if own is None or own["name"] != target.name or own["pid"] != match["pid"] or not tmp.name.endswith(".tmp"):
            return None
        if os.path.lexists(tmp) and not _mine(tmp):
            return None
    return pairs, copies


def _finish(journal: Path, pairs: list[tuple[Path, Path]], copies: list[Path]) -> None:
    """Roll a dead writer's set forward: rename what it had not renamed, then drop its leftovers
    and its journal's copies (the one read last: until then any copy can finish the set)."""
    pid = _LEFTOVER.fullmatch(journal.name)["pid"]
    for tmp, target in pairs:
        if os.path.lexists(tmp):
            os.replace(tmp, target)
    for folder in dict.fromkeys(target.parent for _, target in pairs):
        _fsync_folder(folder)
    for _, target in pairs:
        _unlink(target.with_name(f".{target.name}.{pid}.old"))
    for copy in copies:
        if copy != journal and copy.name == journal.name and _mine(copy):
            _unlink(copy)
    _unlink(journal)


def settle_folder(folder: Path, names: set[str] | None = None) -> None:
    """Finish the sets in `folder` whose writer was killed after its commit point; then, for the
    file `names` given, remove what writers that are gone left (temporary files, backups)."""
    folder = folder if str(folder) else Path(".")
    if not folder.is_dir():
        return
    for journal in folder.glob(".*.set"):
        found = _read_journal(journal)
        if found is not None:
            _finish(journal, *found)
    if not names:
        return
    for entry in folder.iterdir():
        match = _LEFTOVER.fullmatch(entry.name)
        if match is None or entry.name.endswith(".set"):
            continue
        name = match["name"]  # a target's name, or a journal's (its own temporary file)
        if (name in names or name.endswith(".set") and any(name.startswith(f".{n}.") for n in names)) \
                and _process_gone(int(match["pid"])):
            _unlink(entry)


def settle(path: str | os.PathLike) -> None:
    """Before reading a file that may belong to a set: finish a set left half-renamed by a killed
    writer in its folder (no error if that cannot be done: the file is read as it is)."""
    try:
        settle_folder(Path(path).parent)
    except OSError:
        pass


def _rename_all(targets: list[Path], temps: list[Path], journals: list[Path] = ()) -> None:
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
            if journals:
                for folder in dict.fromkeys(t.parent for t in targets):
                    _fsync_folder(folder)
            for journal in journals:
                _unlink(journal)  # the set is whole: nothing to finish
        except BaseException:
            for journal in journals:
                _unlink(journal)  # the old set comes back instead: nothing to roll forward
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
