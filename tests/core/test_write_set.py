"""Writes that never clobber and sets that stay whole (core/files/textfile.py; issue 32, items 5-6):
a read-only file is refused, owner and mode are kept, a hard-linked file is written in place; a
set of output files killed (SIGKILL) between its renames is finished by the next write or read,
and what a killed writer left is cleaned at the next write of the same names."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from tokexplorer.core.files import textfile
from tokexplorer.core.files.textfile import write_atomic, write_set
from tokexplorer.core.tokenizer import TokexplorerError

# --- write_atomic: read-only, owner and mode, hard links ---------------------------------------


def test_a_read_only_file_is_refused_even_for_root(tmp_path):
    path = tmp_path / "locked.txt"
    path.write_text("old")
    os.chmod(path, 0o444)
    with pytest.raises(TokexplorerError, match="read-only"):
        write_atomic(path, b"new")
    assert path.read_text() == "old" and path.stat().st_mode & 0o777 == 0o444
    assert list(tmp_path.iterdir()) == [path]


def test_a_hard_linked_file_is_written_in_place(tmp_path):
    path, other = tmp_path / "a.txt", tmp_path / "b.txt"
    path.write_text("old text, longer than the new one")
    os.link(path, other)
    inode = path.stat().st_ino
    write_atomic(path, b"new")
    assert other.read_bytes() == path.read_bytes() == b"new"
    assert path.stat().st_ino == inode and path.stat().st_nlink == 2
    write_atomic(path, b"grown " * 1000)  # longer than before: reserved, then written
    assert other.read_bytes() == b"grown " * 1000


def test_a_file_whose_owner_cannot_be_kept_is_written_in_place(tmp_path, monkeypatch):
    path = tmp_path / "theirs.txt"
    path.write_text("old")
    inode = path.stat().st_ino
    monkeypatch.setattr(textfile, "_may_own_like", lambda st: False)  # as for another user's file
    write_atomic(path, b"new")
    assert path.read_bytes() == b"new" and path.stat().st_ino == inode


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
def test_owner_group_and_mode_are_kept_atomically(tmp_path):
    path = tmp_path / "theirs.txt"
    path.write_text("old")
    os.chown(path, 4321, 4322)
    os.chmod(path, 0o640)
    inode = path.stat().st_ino
    write_atomic(path, b"new")
    st = path.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777, path.read_bytes()) == (4321, 4322, 0o640, b"new")
    assert st.st_ino != inode, "a file with one name is still replaced atomically"


# --- write_set: whole under any kill -----------------------------------------------------------

KILLER = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from tokexplorer.core.files import textfile

    folder, after = Path(sys.argv[1]), int(sys.argv[2])
    real_replace, renamed = os.replace, []

    def replace(src, dst):
        real_replace(src, dst)
        if not str(src).endswith(".set.tmp") and not str(dst).endswith(".set"):
            renamed.append(dst)
            if len(renamed) == after:
                os.kill(os.getpid(), signal.SIGKILL)

    os.replace = replace
    names = ["m.model", "m.vocab", "m.tiktoken", "m-gpt2.json"]
    if after == 0:  # killed while the temporary files are written, before any rename
        real_fsync, synced = os.fsync, []

        def fsync(fd):
            synced.append(fd)
            if len(synced) == 2:
                os.kill(os.getpid(), signal.SIGKILL)
            real_fsync(fd)

        os.fsync = fsync
    textfile.write_set({folder / n: f"new {n}".encode() for n in names})
""")
NAMES = ["m.model", "m.vocab", "m.tiktoken", "m-gpt2.json"]


def killed_write(folder, after: int) -> None:
    """A process that writes the set of NAMES over the old one and is SIGKILLed after `after`
    renames (0: before any)."""
    for n in NAMES:
        (folder / n).write_text(f"old {n}")
    result = subprocess.run([sys.executable, "-c", KILLER, str(folder), str(after)], capture_output=True)
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()


def contents(folder) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("after", [1, 2, 3])
def test_a_set_killed_between_renames_is_finished_by_the_next_reader(tmp_path, after):
    killed_write(tmp_path, after)
    names = set(os.listdir(tmp_path))
    assert names > set(NAMES)  # a half-renamed set and its journal are there
    textfile.settle(tmp_path / "m.model")  # what a reader of one of its files does first
    assert contents(tmp_path) == {n: f"new {n}" for n in NAMES}  # whole: all new, nothing else


@pytest.mark.parametrize("after", [0, 2])
def test_leftovers_are_cleaned_and_the_set_whole_at_the_next_write(tmp_path, after):
    killed_write(tmp_path, after)
    if after == 0:  # the old set, and temporary files
        assert {n: t for n, t in contents(tmp_path).items() if n in NAMES} == {n: f"old {n}" for n in NAMES}
        assert any(n.endswith(".tmp") for n in os.listdir(tmp_path))
    (tmp_path / "notes.123.old").write_text("not ours")  # a user's file of a similar name stays
    (tmp_path / ".other.txt.1.abcdef12.tmp").write_text("another program's")
    write_set({tmp_path / "m.model": b"newer", tmp_path / "m.vocab": b"newer vocab"})
    left = contents(tmp_path)
    expected_rest = "new" if after else "old"
    assert left == {"m.model": "newer", "m.vocab": "newer vocab",
                    "m.tiktoken": f"{expected_rest} m.tiktoken", "m-gpt2.json": f"{expected_rest} m-gpt2.json",
                    "notes.123.old": "not ours", ".other.txt.1.abcdef12.tmp": "another program's"}


def test_a_complete_set_leaves_nothing_beside_it(tmp_path):
    write_set({tmp_path / n: b"x" for n in NAMES})
    write_set({tmp_path / n: b"y" for n in NAMES})
    assert contents(tmp_path) == {n: "y" for n in NAMES}


def test_a_live_writers_journal_is_not_touched(tmp_path):
    """A journal whose process still runs (here: this one) is a set being renamed right now."""
    (tmp_path / "m.model").write_text("old")
    tmp = tmp_path / f".m.model.{os.getpid()}.0123abcd.tmp"
    tmp.write_text("new")
    (journal,) = textfile._write_journal([tmp_path / "m.model"], [tmp])
    textfile.settle(tmp_path / "m.model")
    assert (tmp_path / "m.model").read_text() == "old" and tmp.exists() and journal.exists()


def test_loading_a_file_of_a_killed_set_finishes_the_set_first(tmp_path):
    """`-t m.model` after a killed `train -o m`: the reader sees the whole new set."""
    from tokexplorer.core.backends.trained_bpe import BPETokenizer
    from tokexplorer.core.files.minbpe import minbpe_files
    from tokexplorer.core.registry import load_tokenizer_file

    old, new = BPETokenizer({(104, 105): 256}, None), BPETokenizer({(104, 105): 256, (256, 33): 257}, None)
    files = minbpe_files(new, tmp_path / "m")
    for path, data in minbpe_files(old, tmp_path / "m").items():
        path.write_bytes(data)
    script = KILLER.replace('names = ["m.model", "m.vocab", "m.tiktoken", "m-gpt2.json"]\n', "").replace(
        'textfile.write_set({folder / n: f"new {n}".encode() for n in names})',
        f"textfile.write_set({{folder / n: d for n, d in {[(p.name, d) for p, d in files.items()]!r}}})")
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path), "1"], capture_output=True)
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()
    assert (tmp_path / "m.vocab").read_bytes() != files[tmp_path / "m.vocab"]  # half-renamed
    assert len(load_tokenizer_file(tmp_path / "m.model").merges) == 2
    assert {p: p.read_bytes() for p in files} == files and sorted(os.listdir(tmp_path)) == ["m.model", "m.vocab"]


def killed_set_across_folders(tmp_path) -> list[str]:
    """`train --gpt2 -o m` writes m.model beside m-gpt2/encoder.json: killed after its first rename."""
    names = ["m.model", "m-gpt2/encoder.json", "m-gpt2/vocab.bpe"]
    (tmp_path / "m-gpt2").mkdir()
    for n in names:
        (tmp_path / n).write_text(f"old {n}")
    script = KILLER.replace('names = ["m.model", "m.vocab", "m.tiktoken", "m-gpt2.json"]', f"names = {names!r}")
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path), "1"], capture_output=True)
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()
    return names


def test_a_set_across_folders_is_finished_from_either_folder(tmp_path):
    names = killed_set_across_folders(tmp_path)
    assert (tmp_path / "m.model").read_text() == "new m.model"  # renamed first
    assert (tmp_path / "m-gpt2" / "vocab.bpe").read_text() == "old m-gpt2/vocab.bpe"
    textfile.settle(tmp_path / "m-gpt2" / "encoder.json")  # a reader of the other folder's file
    assert {n: (tmp_path / n).read_text() for n in names} == {n: f"new {n}" for n in names}
    assert sorted(os.listdir(tmp_path)) == ["m-gpt2", "m.model"]
    assert sorted(os.listdir(tmp_path / "m-gpt2")) == ["encoder.json", "vocab.bpe"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
def test_a_journal_of_another_user_is_not_followed(tmp_path):
    """Root reading in a folder another user may write to never renames files a journal there names."""
    names = killed_set_across_folders(tmp_path)
    for journal in list(tmp_path.glob(".*.set")) + list((tmp_path / "m-gpt2").glob(".*.set")):
        os.chown(journal, 4321, 4321)
    textfile.settle(tmp_path / "m.model")
    textfile.settle(tmp_path / "m-gpt2" / "vocab.bpe")
    assert (tmp_path / "m-gpt2" / "vocab.bpe").read_text() == "old m-gpt2/vocab.bpe"
