"""The built-ins' compact copies (core/files/vocab_cache): the same ranks as the shipped file
parsed, and a damaged, foreign or stale copy never used."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, strategies as st

from tokexplorer.core import registry
from tokexplorer.core.backends.tiktoken_family import parse_tiktoken_bpe
from tokexplorer.core.files import vocab_cache
from tokexplorer.core.files.vocab_cache import cached, decode_copy, encode_copy


@given(st.dictionaries(st.binary(max_size=12), st.integers(0, 2**32 - 1), max_size=60),
       st.dictionaries(st.text(max_size=5), st.integers(), max_size=3))
def test_a_copy_gives_back_the_ranks_and_extra(ranks, extra):
    assert decode_copy(encode_copy(ranks, extra)) == (ranks, extra)


def test_a_damaged_or_truncated_copy_is_refused():
    data = encode_copy({b"a": 0, b"bc": 1, b"\xff": 2}, {"pattern": "p"})
    for bad in (data[:-1], data + b"x", data[:20], b"", b"TXVOCAB2" + data[8:],
                data[:60] + bytes([data[60] ^ 1]) + data[61:]):
        assert decode_copy(bad) is None


def test_cached_builds_once_then_reads_the_copy(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKEXPLORER_CACHE", str(tmp_path))
    calls = []

    def build():
        calls.append(1)
        return {b"x": 0, b"yz": 7}, {"specials": {"<s>": 8}}

    first = cached("toy", "ab" * 32, build)
    second = cached("toy", "ab" * 32, build)
    assert first == second == ({b"x": 0, b"yz": 7}, {"specials": {"<s>": 8}})
    assert calls == [1]
    (copy,) = (tmp_path / "vocab").iterdir()
    assert copy.name == "toy-" + "ab" * 16 + ".bin"
    # Another source digest (a changed package) never meets the old copy.
    cached("toy", "cd" * 32, build)
    assert calls == [1, 1]
    # A damaged copy is rebuilt and written again.
    copy.write_bytes(copy.read_bytes()[:-3])
    assert cached("toy", "ab" * 32, build)[0] == {b"x": 0, b"yz": 7}
    assert calls == [1, 1, 1]
    assert decode_copy(copy.read_bytes()) is not None
    assert not [p for p in (tmp_path / "vocab").iterdir() if p.suffix == ".tmp"]


def test_no_cache_when_turned_off_or_unwritable(tmp_path, monkeypatch):
    build = lambda: ({b"x": 0}, {})  # noqa: E731
    monkeypatch.setenv("TOKEXPLORER_CACHE", "")
    assert vocab_cache.cache_folder() is None
    assert cached("toy", "ab" * 32, build) == ({b"x": 0}, {})
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("TOKEXPLORER_CACHE", str(blocker))  # vocab/ cannot be made under a file
    assert cached("toy", "ab" * 32, build) == ({b"x": 0}, {})


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
