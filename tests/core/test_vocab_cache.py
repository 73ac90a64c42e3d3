"""The built-ins' compact copies (core/files/vocab_cache): the same ranks as the shipped file
parsed, a damaged, foreign or stale copy never used, and the shipped file read and hashed only
when it is not the very file checked before (its stamp)."""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

import tokexplorer
from tokexplorer.core import registry
from tokexplorer.core.backends.tiktoken_family import parse_tiktoken_bpe
from tokexplorer.core.files import vocab_cache
from tokexplorer.core.files.vocab_cache import cached, decode_copy, encode_copy, read_copy
from tokexplorer.core.tokenizer import TokexplorerError


@given(st.dictionaries(st.binary(max_size=12), st.integers(0, 2**32 - 1), max_size=60),
       st.dictionaries(st.text(max_size=5), st.integers(), max_size=3))
def test_a_copy_gives_back_the_ranks_and_extra(ranks, extra):
    assert decode_copy(encode_copy(ranks, extra)) == (ranks, extra)
    assert list(decode_copy(encode_copy(ranks, extra))[0].items()) == list(ranks.items())  # in order


def test_a_damaged_or_truncated_copy_is_refused():
    data = encode_copy({b"a": 0, b"bc": 1, b"\xff": 2}, {"pattern": "p"})
    for bad in (data[:-1], data + b"x", data[:20], b"", b"TXVOCAB2" + data[8:],
                data[:60] + bytes([data[60] ^ 1]) + data[61:]):
        assert decode_copy(bad) is None


class ShippedFile:
    """A stand-in for `registry.DataFile`: a file with the sha256 it must have."""

    def __init__(self, path: Path, sha256: str | None = None):
        self.path = path
        self.sha256 = sha256 or hashlib.sha256(path.read_bytes()).hexdigest()
        self.reads = 0

    def location(self) -> Path:
        return self.path

    def read(self) -> bytes:
        self.reads += 1
        data = self.path.read_bytes()
        if hashlib.sha256(data).hexdigest() != self.sha256:
            raise TokexplorerError(f"{self.path.name} has another sha256: reinstall")
        return data


def shipped(tmp_path: Path, content: bytes = b"x 0\nyz 7\n") -> ShippedFile:
    path = tmp_path / "vocab.txt"
    path.write_bytes(content)
    return ShippedFile(path)


@pytest.fixture(autouse=True)
def settled_at_once(monkeypatch):
    """A file's stamp is kept as soon as it is read (the files here are seconds old, not an
    installed package's days): the test of RACY_SECONDS sets it back."""
    monkeypatch.setattr(vocab_cache, "RACY_SECONDS", 0)


def parse(data: bytes):
    ranks = {line.split()[0]: int(line.split()[1]) for line in data.splitlines()}
    return ranks, {"specials": {"<s>": 8}}


def test_cached_builds_once_then_reads_the_copy_without_reading_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKEXPLORER_CACHE", str(tmp_path / "cache"))
    source = shipped(tmp_path)
    calls = []

    def build(data):
        calls.append(1)
        return parse(data)

    first = cached("toy", [source], build)
    second = cached("toy", [source], build)
    assert first == second == ({b"x": 0, b"yz": 7}, {"specials": {"<s>": 8}})
    assert calls == [1] and source.reads == 1  # the second start read neither the file nor its hash
    (copy,) = (tmp_path / "cache" / "vocab").iterdir()
    assert copy.name == f"toy-{tokexplorer.__version__}-{source.sha256[:16]}.bin"
    # Another expected hash (a changed package) never meets the old copy.
    other = ShippedFile(source.path, "cd" * 32)
    with pytest.raises(TokexplorerError, match="another sha256"):
        cached("toy", [other], build)
    # A damaged copy is rebuilt and written again.
    copy.write_bytes(copy.read_bytes()[:-3])
    assert cached("toy", [source], build)[0] == {b"x": 0, b"yz": 7}
    assert calls == [1, 1] and source.reads == 2
    assert decode_copy(copy.read_bytes()) is not None
    assert cached("toy", [source], build)[0] == {b"x": 0, b"yz": 7}
    assert calls == [1, 1] and source.reads == 2
    assert not [p for p in copy.parent.iterdir() if p.suffix == ".tmp"]


def test_a_changed_shipped_file_is_hashed_again_and_refused(tmp_path, monkeypatch):
    """The copy is used only for the very file that was checked: the same content rewritten is
    read and hashed again (and the copy's stamp renewed); other content is refused, copy or not."""
    monkeypatch.setenv("TOKEXPLORER_CACHE", str(tmp_path / "cache"))
    source = shipped(tmp_path)
    cached("toy", [source], parse)
    assert source.reads == 1
    # Rewritten with the same bytes (a reinstall): a new stamp, so read and hashed once more.
    source.path.write_bytes(source.path.read_bytes())
    past = time.time() - 60
    os.utime(source.path, (past, past))  # even with its old times back (the change time moved)
    assert cached("toy", [source], parse)[0] == {b"x": 0, b"yz": 7}
    assert source.reads == 2
    assert cached("toy", [source], parse)[0] == {b"x": 0, b"yz": 7}
    assert source.reads == 2
    # Tampered with, same size, times set back: the change time and the hash still catch it.
    source.path.write_bytes(b"x 0\nyz 9\n")
    os.utime(source.path, (past, past))
    with pytest.raises(TokexplorerError, match="another sha256"):
        cached("toy", [source], parse)
    # Gone: the file's own error, not the copy.
    source.path.unlink()
    with pytest.raises(OSError):
        cached("toy", [source], parse)


def test_a_file_changed_just_now_is_not_trusted_by_its_stamp(tmp_path, monkeypatch):
    """Within RACY_SECONDS of a change a coarse clock could hide a second write: such a file is
    hashed at every start until it is older."""
    monkeypatch.setenv("TOKEXPLORER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(vocab_cache, "RACY_SECONDS", 2.0)
    source = shipped(tmp_path)
    for reads in (1, 2, 3):
        assert cached("toy", [source], parse)[0] == {b"x": 0, b"yz": 7}
        assert source.reads == reads
    past = time.time_ns() - 10 ** 10
    monkeypatch.setattr(time, "time_ns", lambda: past + 2 * 10 ** 10)  # 10 s after the change
    cached("toy", [source], parse)
    cached("toy", [source], parse)
    assert source.reads == 4


def test_a_copy_with_another_files_stamp_is_not_used(tmp_path, monkeypatch):
    """A copy written for one file (its stamp) and moved over another's name is checked anew."""
    monkeypatch.setenv("TOKEXPLORER_CACHE", str(tmp_path / "cache"))
    source = shipped(tmp_path)
    cached("toy", [source], parse)
    (copy,) = (tmp_path / "cache" / "vocab").iterdir()
    ranks, extra, stamps = read_copy(copy.read_bytes())
    assert stamps == [vocab_cache.stamp(source.path)]
    copy.write_bytes(encode_copy(ranks, extra, [[1, 2, 3, 4, 5]]))
    cached("toy", [source], parse)
    assert source.reads == 2


def test_no_cache_when_turned_off_or_unwritable(tmp_path, monkeypatch):
    source = shipped(tmp_path)
    monkeypatch.setenv("TOKEXPLORER_CACHE", "")
    assert vocab_cache.cache_folder() is None
    assert cached("toy", [source], parse)[0] == {b"x": 0, b"yz": 7}
    assert cached("toy", [source], parse)[0] == {b"x": 0, b"yz": 7}
    assert source.reads == 2  # no copy: the file is read and checked every time
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("TOKEXPLORER_CACHE", str(blocker))  # vocab/ cannot be made under a file
    assert cached("toy", [source], parse)[0] == {b"x": 0, b"yz": 7}


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="XDG_CACHE_HOME is the Linux/BSD rule")
def test_default_folder_is_the_platforms_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("TOKEXPLORER_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert vocab_cache.cache_folder() == tmp_path / "tokexplorer" / "vocab"


@pytest.mark.parametrize("name, data", [("cl100k_base", registry.CL100K), ("qwen3.6", registry.QWEN3_6)])
def test_a_builtin_read_from_its_copy_is_the_shipped_file_parsed(name, data, tmp_path, monkeypatch):
    monkeypatch.setenv("TOKEXPLORER_CACHE", str(tmp_path))
    expected = parse_tiktoken_bpe(data.read())
    built, _ = registry._cached_ranks(name, (data,), lambda d: (parse_tiktoken_bpe(d), {}))
    read, _ = registry._cached_ranks(name, (data,), lambda d: pytest.fail("parsed again"))
    assert built == read == expected
    assert list(read.items())[:3] == list(expected.items())[:3]  # the order kept too


@pytest.mark.parametrize("name", ["llama-sp", "deepseek-v4", "tekken", "gpt2"])
def test_a_builtin_made_from_its_copy_is_the_one_made_from_the_files(name, tmp_path, monkeypatch):
    """The second start's tokenizer (the copy's table and facts; deepseek-v4's tables made when
    first asked for) is the first start's: vocabulary, special tokens, tokens' bytes, merges,
    what it declares, and its encodings."""
    monkeypatch.setenv("TOKEXPLORER_CACHE", str(tmp_path))
    monkeypatch.setattr(registry, "_cache", {})
    first = registry.get_builtin(name)
    monkeypatch.setattr(registry, "_cache", {})
    second = registry.get_builtin(name)
    assert first is not second
    assert second.n_vocab == first.n_vocab and second.special_tokens == first.special_tokens
    assert (second.normalizes, second.split_pattern, second.has_merges) == \
        (first.normalizes, first.split_pattern, first.has_merges)
    ids = list(range(0, first.n_vocab, 997)) + sorted(first.special_tokens.values())[:50]
    assert [second.token_bytes(i) for i in ids] == [first.token_bytes(i) for i in ids]
    text = "Hello wörld 👋 <s>ok</s> <|endoftext|>\n  x"
    for policy in ("none", "all"):
        a, b = first.encode(text, allowed_special=policy), second.encode(text, allowed_special=policy)
        assert b.ids == a.ids and list(b) == list(a)
        assert second.encode_ids(text, allowed_special=policy) == a.ids
    assert type(second.locality()) is type(first.locality())
    if first.has_merges:
        (word,) = first.encode_ids(" tokenizer's")[:1]
        assert second.merge_tree(word) == first.merge_tree(word)


def test_a_checked_tokenizer_json_makes_its_tables_once_from_any_first_use(tmp_path, monkeypatch):
    """deepseek-v4 from its copy: whichever table is asked for first (merges under the merge
    lock included), the file's JSON is parsed once, and threads asking at once share it."""
    import json as json_module
    import threading

    monkeypatch.setenv("TOKEXPLORER_CACHE", str(tmp_path))
    monkeypatch.setattr(registry, "_cache", {})
    registry.get_builtin("deepseek-v4")  # the first start: the copy written
    parses = []
    real_loads = json_module.loads

    def counting_loads(data, *args, **kwargs):
        parses.append(len(data))
        return real_loads(data, *args, **kwargs)

    for first_use in ("_made_by", "token_bytes", "n_vocab"):
        monkeypatch.setattr(registry, "_cache", {})
        tok = registry.get_builtin("deepseek-v4")
        assert "_strings" not in vars(tok)
        monkeypatch.setattr(json_module, "loads", counting_loads)
        parses.clear()
        if first_use == "_made_by":
            threads = [threading.Thread(target=tok._made_by, daemon=True) for _ in range(4)]
            [t.start() for t in threads]
            [t.join(60) for t in threads]
            assert not any(t.is_alive() for t in threads)
        elif first_use == "token_bytes":
            assert tok.token_bytes(33310) == b"hello"
        else:
            assert tok.n_vocab == 129280
        assert len([n for n in parses if n > 1_000_000]) == 1
        monkeypatch.setattr(json_module, "loads", real_loads)
