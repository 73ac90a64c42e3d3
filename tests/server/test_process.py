"""The server as a process, as the window starts it: with the `spawn` start method (the same on
Linux, macOS and Windows), answering over its pipe, and ending when asked or when its window's
end of the pipe closes."""

from __future__ import annotations

import itertools
import queue
import time

import numpy as np
import pytest

from tokexplorer.core.registry import get_builtin
from tokexplorer.server import protocol as p
from tokexplorer.server.client import ServerProcess


@pytest.fixture
def server():
    answers: queue.Queue = queue.Queue()
    lost: list[str] = []
    process = ServerProcess(answers.put, lost.append)
    yield process, answers, lost
    process.close()


def test_the_server_is_spawned_and_answers(server):
    process, answers, lost = server
    assert process._process._popen.method == "spawn"  # not forked from the window
    process.send(p.Call(1, p.Ping()))
    facts = answers.get(timeout=60).value
    assert facts.pid == process.pid and facts.pid is not None
    text = "hello world 👋"
    process.send(p.Call(2, p.Tokenize(7, 1, "o200k_base", "refuse", p.TextDelta(text, None, 0, 15))))
    answer = answers.get(timeout=60)
    assert answer.rid == 2 and isinstance(answer.value, p.TokensChanged)
    assert answer.value.new.ids.tolist() == get_builtin("o200k_base").encode(text).ids
    process.send(p.Call(3, p.MergeTreeOf("nope", 1)))
    error = answers.get(timeout=60)
    assert isinstance(error, p.Error) and "no tokenizer named 'nope'" in error.message
    assert not lost


def test_a_request_superseded_before_the_server_reached_it_is_not_answered(server):
    process, answers, _ = server
    text = "x" * 200_000
    process.send(p.Call(1, p.Tokenize(1, 1, "cl100k_base", "refuse", p.TextDelta(text, None, 0, len(text)))))
    for gen in range(2, 40):
        process.send(p.Call(gen, p.Tokenize(1, gen, "cl100k_base", "refuse",
                                            p.TextDelta(None, [(0, 0, "y")], gen, len(text) + gen - 1))))
    got = []
    while not got or got[-1].value.generation != 39:
        got.append(answers.get(timeout=60))
    assert len(got) < 39  # some were folded into later ones
    assert got[-1].value.new.ids.tolist()[:1] == get_builtin("cl100k_base").encode("y" * 38 + text).ids[:1]


def test_a_server_that_dies_is_reported_once(server):
    process, answers, lost = server
    process.kill()
    deadline = time.monotonic() + 10
    while not lost and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send(p.Call(1, p.Ping()))  # the sending side finds the pipe broken as well
    time.sleep(0.5)  # time for a second report, if one were made
    assert len(lost) == 1 and "stopped" in lost[0]
    assert not process.alive


WINDOW = """
import os, sys, queue
from tokexplorer.server.client import ServerProcess
from tokexplorer.server import protocol as p

if __name__ == "__main__":
    answers = queue.Queue()
    server = ServerProcess(answers.put, print)
    server.send(p.Call(1, p.Ping()))
    print(answers.get(timeout=60).value.pid, flush=True)
    os._exit(0)  # the window's process ends without a word
"""


def test_the_server_ends_when_its_window_goes(tmp_path):
    import os
    import subprocess
    import sys
    import time

    script = tmp_path / "window.py"
    script.write_text(WINDOW)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    pid = int(out.stdout.split()[0])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise AssertionError(f"the server {pid} outlived its window")


def test_a_books_tokens_arrive_whole_as_raw_frames(server, corpora):
    """Over BULK_TOKENS tokens an answer's columns travel as raw frames after it (not pickled):
    they arrive equal to a fresh encode, shared columns still shared, views still views."""
    from tokexplorer.core.positions import utf16_len
    from tokexplorer.server.columns import BULK_TOKENS

    process, answers, _ = server
    book = (corpora / "en/tinyshakespeare.txt").read_text("utf-8")
    for gen, text in enumerate([book, book + "naïve 👋\r\nend"], 1):
        process.send(p.Call(gen, p.Tokenize(1, gen, "cl100k_base", "refuse",
                                            p.TextDelta(text, None, 0, utf16_len(text)))))
        new = answers.get(timeout=60).value.new
        fresh = get_builtin("cl100k_base").encode(text, allowed_special="none")
        assert len(new) >= BULK_TOKENS and new.ids.tolist() == fresh.ids
        lengths = [len(b) for b in fresh.token_bytes]
        assert new.blob == b"".join(fresh.token_bytes) and new.offsets.tolist() == [0, *itertools.accumulate(lengths)]
        assert new.starts.tolist() == fresh.starts.tolist() and new.byte_ends.tolist() == fresh.byte_ends.tolist()
        assert (new.starts16 is new.starts) == text.isascii() and (new.byte_starts is new.starts) == text.isascii()
        # (the byte spans tile the text and are the tokens' bytes: views of the offsets, sent once)
        assert new.byte_starts.base is new.offsets and new.byte_ends.base is new.offsets


def test_a_server_started_early_is_the_one_the_window_takes():
    """The window starts the server before it imports Qt (`launch.start_early`); the first
    ServerProcess talks to that process, once, and the next one starts its own."""
    from tokexplorer.server import launch

    launch.start_early()
    early_pid = launch._early[1].pid
    answers: queue.Queue = queue.Queue()
    first = ServerProcess(answers.put, print)
    try:
        assert first.pid == early_pid and launch.take_early() is None
        first.send(p.Call(1, p.Ping()))
        assert answers.get(timeout=60).value.pid == early_pid
        second = ServerProcess(answers.put, print)
        try:
            assert second.pid not in (None, early_pid)
        finally:
            second.close()
    finally:
        first.close()


def test_the_chunks_of_an_edited_text_are_explained_as_a_fresh_texts(server, corpora):
    """`ChunksOf` after edits (the server starts from its last explanation of the document) gives
    what explaining the edited text afresh gives."""
    from tokexplorer.core.analysis.pattern_parts import explain_chunks
    from tokexplorer.core.positions import utf16_len

    process, answers, _ = server
    tok = get_builtin("o200k_base")
    text = (corpora / "en" / "tinyshakespeare.txt").read_text("utf-8")[:40_000]
    rid = itertools.count(1)

    def ask(request):
        process.send(p.Call(next(rid), request))
        return answers.get(timeout=60).value

    edits = [None, (20_000, 3, "  naïve 👋🏽\n"), (100, 0, "'LL 12345 "), (39_990, 10, "")]
    for generation, edit in enumerate(edits, start=1):
        if edit is None:
            delta = p.TextDelta(text, None, generation, utf16_len(text))
        else:
            at, removed, inserted = edit
            delta = p.TextDelta(None, [(utf16_len(text[:at]), utf16_len(text[at:at + removed]), inserted)],
                                generation, 0)
            text = text[:at] + inserted + text[at + removed:]
            delta = delta._replace(length16=utf16_len(text))
        assert isinstance(ask(p.Tokenize(1, generation, "o200k_base", "none", delta)), p.TokensChanged)
        spans = ask(p.ChunksOf(1, generation))
        starts, ends = tok.encode(text, allowed_special="none").chunk_arrays()
        assert spans.starts.tolist() == starts.tolist() and spans.ends.tolist() == ends.tolist()
        assert spans.alternatives.tolist() == explain_chunks(text, tok.split_pattern, starts, ends).alternatives.tolist()


def test_a_books_chunk_spans_arrive_as_raw_frames(server, corpora):
    """A book's chunk spans (over BULK_TOKENS chunks) travel as raw frames after the answer, not
    pickled: they arrive equal to the chunks of a fresh encode, the comparison's flags too."""
    from tokexplorer.core.analysis.pattern_parts import compare_splits, comparable
    from tokexplorer.core.positions import utf16_len
    from tokexplorer.server.columns import BULK_TOKENS

    process, answers, _ = server
    text = (corpora / "en/tinyshakespeare.txt").read_text("utf-8") + " naïve 👋"
    process.send(p.Call(1, p.Tokenize(1, 1, "o200k_base", "none", p.TextDelta(text, None, 0, utf16_len(text)))))
    assert isinstance(answers.get(timeout=60).value, p.TokensChanged)
    process.send(p.Call(2, p.ChunksOf(1, 1, "cl100k")))
    spans = answers.get(timeout=60).value
    starts, ends = get_builtin("o200k_base").encode(text, allowed_special="none").chunk_arrays()
    assert len(starts) >= BULK_TOKENS
    assert np.array_equal(spans.starts, starts) and np.array_equal(spans.ends, ends)
    assert spans.alternatives.dtype == np.int64 and len(spans.alternatives) == len(starts)
    assert spans.differs.dtype == bool
    assert np.array_equal(spans.differs, compare_splits(text, starts, ends, comparable("cl100k")))
