"""Writing files: permissions kept, symlinks written through, new files with the umask's mode,
and files that belong together replaced together or not at all (a full disk, Ctrl-C)."""

from __future__ import annotations

import errno
import os
import re
import stat
import subprocess

import pytest

from tokexplorer.core.files import textfile
from tokexplorer.core.backends.trained_bpe import BPETokenizer
from tokexplorer.core.files.minbpe import save_gpt2, save_minbpe
from tokexplorer.core.files.textfile import write_atomic, write_set
from tokexplorer.core.tokenizer import TokexplorerError


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("old_mode", [0o644, 0o755, 0o600, 0o664])
def test_saving_keeps_the_files_permissions(tmp_path, old_mode):
    target = tmp_path / "notes.txt"
    target.write_bytes(b"old")
    target.chmod(old_mode)
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new" and mode(target) == old_mode


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_new_files_get_the_umasks_mode(tmp_path, umask):
    old = os.umask(umask)
    try:
        write_atomic(tmp_path / "a.txt", b"x")
        save_minbpe(BPETokenizer({(104, 105): 256}, None), tmp_path / "m")
        save_gpt2(BPETokenizer({(104, 105): 256}, None), tmp_path / "g")
    finally:
        os.umask(old)
    for p in [tmp_path / "a.txt", tmp_path / "m.model", tmp_path / "m.vocab",
              tmp_path / "g" / "encoder.json", tmp_path / "g" / "vocab.bpe"]:
        assert mode(p) == 0o666 & ~umask, p


def test_saving_writes_through_a_symlink(tmp_path):
    real = tmp_path / "real" / "notes.txt"
    real.parent.mkdir()
    real.write_bytes(b"old")
    real.chmod(0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    chain = tmp_path / "chain.txt"
    chain.symlink_to(link)
    write_atomic(chain, b"new")
    assert link.is_symlink() and chain.is_symlink()
    assert real.read_bytes() == b"new" and mode(real) == 0o640
    assert sorted(p.name for p in real.parent.iterdir()) == ["notes.txt"]


def full_disk_after(monkeypatch, n_ok: int) -> None:
    """fsync fails with ENOSPC after n_ok files, as a full disk does when the data is flushed."""
    calls = [0]
    real = os.fsync

    def fsync(fd):
        calls[0] += 1
        if calls[0] > n_ok:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd)

    monkeypatch.setattr(textfile.os, "fsync", fsync)


def test_a_full_disk_keeps_the_old_set(tmp_path, monkeypatch):
    files = {tmp_path / "m.model": b"old model", tmp_path / "m.vocab": b"old vocab"}
    write_set(files)
    full_disk_after(monkeypatch, 1)  # the new .model fits, the .vocab does not
    with pytest.raises(TokexplorerError, match=r"m\.vocab: No space left on device \(the old files are kept\)"):
        write_set({p: b"new" for p in files})
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {"m.model": b"old model", "m.vocab": b"old vocab"}


def test_a_failed_rename_puts_the_old_files_back(tmp_path, monkeypatch):
    files = {tmp_path / "a": b"old a", tmp_path / "b": b"old b", tmp_path / "c": b"old c"}
    write_set(files)
    real, calls = os.replace, [0]

    def replace(src, dst):
        calls[0] += 1
        if calls[0] == 3:  # a and b are in place when c fails
            raise OSError(errno.EIO, "I/O error")
        real(src, dst)

    monkeypatch.setattr(textfile.os, "replace", replace)
    with pytest.raises(TokexplorerError, match="I/O error"):
        write_set({p: b"new" for p in files})
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {"a": b"old a", "b": b"old b", "c": b"old c"}


def test_a_failed_gpt2_folder_is_not_left_behind(tmp_path, monkeypatch):
    full_disk_after(monkeypatch, 1)
    with pytest.raises(TokexplorerError, match="No space left"):
        save_gpt2(BPETokenizer({(104, 105): 256}, None), tmp_path / "g")
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def tiny_tmpfs(tmp_path):
    """A 64 KB file system, where the kernel can mount one (root); a real full disk."""
    where = tmp_path / "tiny"
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    yield where
    subprocess.run(["umount", str(where)], check=True)


def test_a_really_full_disk_keeps_the_old_set(tiny_tmpfs):
    small = {tiny_tmpfs / "m.model": b"m" * 1000, tiny_tmpfs / "m.vocab": b"v" * 1000}
    write_set(small)
    with pytest.raises(TokexplorerError, match="No space left on device"):
        write_set({tiny_tmpfs / "m.model": b"M" * 1000, tiny_tmpfs / "m.vocab": b"V" * 200_000})
    assert {p.name: p.read_bytes() for p in tiny_tmpfs.iterdir()} == {p.name: d for p, d in small.items()}


@pytest.mark.parametrize("ranks, specials, message", [
    ({b"a": 0, b"b": 1, b"c": 1}, {}, "rank 1 is given to both b'b' and b'c'"),
    ({b"a": -1, b"b": 0}, {}, "rank -1 is out of range"),
    ({b"a": 0, b"b": 1 << 31}, {}, "rank 2147483648 is out of range"),
    ({b"a": 0, b"b": 1 << 70}, {}, f"rank {1 << 70} is out of range"),
    ({b"a": 0, b"b": 1}, {"<x>": 1}, "special token '<x>' has id 1, which is already a token's rank"),
    ({b"a": 0, b"b": 1}, {"<x>": 2, "<y>": 2}, "special token '<y>' has id 2, which is already"),
    ({b"a": 0, b"b": 1}, {"<x>": -2}, "special token '<x>' has id -2; ids are whole numbers"),
    ({b"a": 0, b"b": 1}, {"<x>": 1 << 40}, "special token '<x>' has id 1,099,511,627,776, far beyond"),
])
def test_tiktoken_ranks_that_its_core_would_panic_on_are_refused(ranks, specials, message):
    from tokexplorer.core.backends.tiktoken_family import check_ranks
    from tokexplorer.core.tokenizer import TokexplorerError

    with pytest.raises(TokexplorerError, match=re.escape(f"x.tiktoken: {message}")):
        check_ranks(ranks, specials, source="x.tiktoken")
    check_ranks({b"a": 0, b"b": 1}, {"<x>": 2, "<y>": 5}, source="x.tiktoken")  # a good one passes


def test_a_split_pattern_tiktoken_refuses_is_a_clear_error_as_it_loads():
    from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer

    ranks = {bytes([b]): b for b in range(256)}
    with pytest.raises(TokexplorerError, match="bad.tiktoken: tiktoken cannot use this tokenizer"):
        TiktokenTokenizer.from_ranks("bad", ranks, r"(\w+", source="bad.tiktoken")  # unbalanced


def test_a_file_tokenizers_refuses_is_a_clear_error(tmp_path):
    from tokexplorer.core.backends.hf_tokenizers import load_tokenizer_json

    path = tmp_path / "tokenizer.json"
    path.write_text('{"version": "1.0", "added_tokens": [], "normalizer": null, "pre_tokenizer": null,'
                    ' "model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}}')
    with pytest.raises(TokexplorerError, match=re.escape(f"{path}: tokenizers cannot load it")):
        load_tokenizer_json(path, path.read_bytes())
