"""Recovery files (core/recovery.py): the format keeps the text exactly, a damaged file says so,
and a live instance's file is never taken as an orphan."""

from __future__ import annotations

import os

import pytest

from tokexplorer.core.files import recovery
from tokexplorer.core.files.recovery import Recovered, Session
from tokexplorer.core.tokenizer import TokexplorerError

TEXT = "line one\r\nemoji 👋🏽 𝕏 𠀀\r\n\ttab\u2028sep\u00a0nbsp\r\n"


def test_round_trip_keeps_the_text_and_its_context():
    rec = Recovered(TEXT, path="/tmp/a.txt", newline="\r\n", tokenizer="o200k_base",
                    tokenizer_file="t.tiktoken", document_policy="all", saved_at=12.5, pid=42,
                    extra={"tokenizers": {"t": "t.tiktoken"}})
    assert recovery.load(recovery.dump(rec)) == rec


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
