"""Recovery files (core/recovery.py): the format keeps the text exactly, a damaged file says so,
and a live instance's file is never taken as an orphan."""

from __future__ import annotations

import json
import os

import pytest

from tokexplorer.core.files import recovery
from tokexplorer.core.files.recovery import Recovered, Session
from tokexplorer.core.tokenizer import TokexplorerError

TEXT = "line one\r\nemoji 👋🏽 𝕏 𠀀\r\n\ttab\u2028sep\u00a0nbsp\r\n"


def test_round_trip_keeps_the_text_and_its_context():
    rec = Recovered(TEXT, path="/tmp/a.txt", disk=(1_764_000_000_123_456_789, 4096, 2**40 + 7, 2049),
                    newline="\r\n", tokenizer="o200k_base", tokenizer_file="t.tiktoken", document_policy="all", saved_at=12.5, pid=42,
                    extra={"tokenizers": {"t": "t.tiktoken"}})
    assert recovery.load(recovery.dump(rec)) == rec


@pytest.mark.parametrize("disk", ["missing", None, "12", [1, 2, 3], [1, 2, 3, "4"], [1, 2, 3, True], {"a": 1}])
def test_a_disk_record_that_is_absent_or_damaged_reads_as_none(disk):
    """A file from before the record, or with a damaged one: no record (Save then asks)."""
    data = recovery.dump(Recovered(TEXT, path="/tmp/a.txt", disk=(1, 2, 3, 4)))
    head, _, body = data.partition(b"\n")
    header = json.loads(head)
    if disk == "missing":
        del header["disk"]
    else:
        header["disk"] = disk
    rec = recovery.load(json.dumps(header).encode() + b"\n" + body)
    assert rec.disk is None and rec.text == TEXT and "disk" not in rec.extra


@pytest.mark.parametrize("damage", ["cut", "header", "empty", "not-utf8"])
def test_a_damaged_file_is_an_error_that_says_what(damage):
    data = recovery.dump(Recovered(TEXT))
    data = {"cut": data[:-3], "header": b"{nope\n" + data, "empty": b"",
            "not-utf8": data[:data.index(b"\n") + 1] + b"\xff" * len(TEXT.encode())}[damage]
    with pytest.raises(TokexplorerError, match="cut short|not a tokexplorer recovery|not UTF-8"):
        recovery.load(data, source="r.recovery")


def test_a_running_sessions_file_is_not_an_orphan(tmp_path):
    mine = Session.claim(tmp_path)
    mine.write(Recovered("unsaved"))
    # subtle: flock belongs to the open file, so another open in this process stands for another process
    assert recovery.orphans(tmp_path) == []
    mine.release(remove=False)  # as a crash would: the lock goes, the files stay
    found = recovery.orphans(tmp_path)
    assert [o.recovery_path for o in found] == [mine.recovery_path]
    assert recovery.orphans(tmp_path) == [], "a second instance must not offer what the first is offering"
    found[0].release(remove=False)
    assert len(recovery.orphans(tmp_path)) == 1


def test_adopt_moves_the_text_and_drops_the_orphan(tmp_path):
    crashed = Session.claim(tmp_path)
    crashed.write(Recovered(TEXT))
    crashed.release(remove=False)
    (orphan,) = recovery.orphans(tmp_path)
    mine = Session.claim(tmp_path)
    mine.adopt(orphan)
    assert recovery.load(mine.recovery_path.read_bytes()).text == TEXT
    assert sorted(p.name for p in tmp_path.iterdir()) == [mine.lock_path.name, mine.recovery_path.name]
    mine.release(remove=True)
    assert list(tmp_path.iterdir()) == []


def test_stale_lock_files_without_text_are_cleaned(tmp_path):
    crashed = Session.claim(tmp_path)
    crashed.release(remove=False)
    live = Session.claim(tmp_path)
    assert recovery.orphans(tmp_path, own=live.id) == []
    assert [p.name for p in tmp_path.iterdir()] == [live.lock_path.name]
    assert live.lock_path.read_text() == f"{os.getpid()}\n"


# --- private to this user, whatever the umask; never through a planted link (issue 32, items 3-4) ---


def mode(path) -> int:
    return os.lstat(path).st_mode & 0o777


def test_the_folder_and_the_files_are_private_whatever_the_umask(tmp_path, umask_022):
    folder = tmp_path / "settings" / "recovery"
    session = Session.claim(folder)
    session.write(Recovered("a private text"))
    assert (mode(folder), mode(session.recovery_path), mode(session.lock_path)) == (0o700, 0o600, 0o600)
    session.release(remove=False)
    (orphan,) = recovery.orphans(folder)
    mine = Session.claim(folder)
    mine.adopt(orphan)  # an adopted text stays private too
    assert mode(mine.recovery_path) == 0o600
    mine.release(remove=True)


def test_an_existing_open_folder_is_made_private(tmp_path, umask_022):
    folder = tmp_path / "recovery"
    folder.mkdir(mode=0o755)
    Session.claim(folder).release(remove=True)
    assert mode(folder) == 0o700


def test_a_recovery_folder_that_is_a_link_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, tmp_path / "recovery")
    with pytest.raises(OSError):
        Session.claim(tmp_path / "recovery")
    assert list(elsewhere.iterdir()) == []


def test_a_planted_recovery_link_is_refused_never_read_or_adopted(tmp_path):
    folder = tmp_path / "recovery"
    crashed = Session.claim(folder)
    crashed.release(remove=False)  # a lock whose process is gone
    secret = tmp_path / "secret.txt"
    secret.write_bytes(recovery.dump(Recovered("someone else's file")))
    os.symlink(secret, crashed.recovery_path)
    (orphan,) = recovery.orphans(folder)
    with pytest.raises(TokexplorerError, match="symbolic link"):
        orphan.read()
    mine = Session.claim(folder)
    with pytest.raises(TokexplorerError, match="symbolic link"):
        mine.adopt(orphan)
    assert not mine.recovery_path.exists()
    orphan.release(remove=False)
    mine.release(remove=True)


def test_a_write_replaces_a_planted_link_instead_of_writing_through_it(tmp_path):
    folder = tmp_path / "recovery"
    mine = Session.claim(folder)
    target = tmp_path / "victim.txt"
    target.write_text("keep me")
    os.symlink(target, mine.recovery_path)
    mine.write(Recovered("unsaved"))
    assert target.read_text() == "keep me"
    assert not mine.recovery_path.is_symlink() and recovery.load(mine.read()).text == "unsaved"
    mine.release(remove=True)


def test_a_planted_lock_link_creates_nothing_at_its_target(tmp_path):
    folder = tmp_path / "recovery"
    Session.claim(folder).release(remove=True)
    target = tmp_path / "created-by-the-link"
    os.symlink(target, folder / "x.lock")
    (folder / f"x{recovery.SUFFIX}").write_bytes(recovery.dump(Recovered("t")))
    with pytest.raises(OSError):
        recovery.Lock.acquire(folder, "x")
    assert recovery.orphans(folder) == []
    assert not target.exists() and not os.path.exists(target)


def test_a_recovery_file_of_another_kind_is_not_read(tmp_path):
    folder = tmp_path / "recovery"
    crashed = Session.claim(folder)
    crashed.release(remove=False)
    os.mkfifo(crashed.recovery_path)  # would block a plain open for reading
    (orphan,) = recovery.orphans(folder)
    with pytest.raises(TokexplorerError, match="not a regular file"):
        orphan.read()
    orphan.release(remove=False)


def test_a_write_a_kill_interrupted_leaves_nothing_once_the_text_is_dealt_with(tmp_path):
    folder = tmp_path / "recovery"
    crashed = Session.claim(folder)
    crashed.write(Recovered("text"))
    (folder / f".{crashed.id}{recovery.SUFFIX}.0123abcd.tmp").write_bytes(b"half a write")
    crashed.release(remove=False)
    (orphan,) = recovery.orphans(folder)
    orphan.release(remove=True)  # discarded (or adopted)
    assert list(folder.iterdir()) == []
