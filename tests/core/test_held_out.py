"""The held-out split found on a file's bytes (core/training/held_out.py) is `split_held_out`'s on
its text, and a sweep over it (`sweep --held-out`, which no longer holds the text whole) gives the
table the whole-text sweep gives."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokexplorer.cli.main import main
from tokexplorer.core.analysis.sweep import split_held_out, sweep
from tokexplorer.core.files.textfile import read_text_file
from tokexplorer.core.registry import load_tokenizer
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.training import held_out
from tokexplorer.core.training.counting import open_corpus
from tokexplorer.core.training.held_out import held_out_cut

PIECES = ["a", "bc", " ", "  ", "\n", "\r\n", "é", "😀", "中文", "\t", "\u3000", "x" * 30]


def expected_cut(text: str, fraction: float) -> int | str:
    try:
        return len(split_held_out(text, fraction)[0].encode("utf-8"))
    except TokexplorerError as exc:
        return str(exc)


def cut_of(data: bytes, fraction: float) -> int | str:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "corpus.txt"
        path.write_bytes(data)
        try:
            return held_out_cut(open_corpus([str(path)]), fraction)
        except TokexplorerError as exc:
            return str(exc)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=400).map("".join),
       st.sampled_from([0.01, 0.1, 0.25, 0.5, 0.9, 0.999]), st.booleans(), st.sampled_from([7, 1 << 22]))
def test_the_cut_on_bytes_is_the_cut_on_the_text(text, fraction, bom, block):
    """Emoji, CJK, CRLF, white space only on one side, a byte-order mark; blocks of 7 bytes (cut
    inside characters) as well as the real size."""
    held_out.BLOCK, saved = block, held_out.BLOCK
    try:
        got = cut_of(b"\xef\xbb\xbf" * bom + text.encode("utf-8"), fraction)
    finally:
        held_out.BLOCK = saved
    assert got == expected_cut(text, fraction)


def test_long_lines_and_a_corpus_file_cut_where_the_text_cuts(corpora):
    for rel in ["en/tinyshakespeare.txt", "multilingual/ja_wagahaiwa_nekodearu.txt", "unicode/blns.txt"]:
        data = (corpora / rel).read_bytes()
        text = read_text_file(corpora / rel)
        for fraction in (0.1, 0.37):
            assert cut_of(data, fraction) == expected_cut(text, fraction), rel
    one_line = "word " * 50_000  # no newline near the cut: it stays where the fraction puts it
    assert cut_of(one_line.encode(), 0.1) == expected_cut(one_line, 0.1) == 225_000


def test_invalid_utf8_is_left_to_the_reader():
    assert cut_of(b"abc\ndef\n\xff\n" * 10, 0.2) is None


@pytest.mark.parametrize("pattern", ["gpt4", "none", r"\w+|\s+|[^\w\s]+"])
def test_sweep_held_out_gives_the_whole_text_table(tmp_path, capsys, corpora, monkeypatch, pattern):
    """`sweep --held-out` over a file (the training part counted from the file, or read as bytes;
    a custom pattern reads the text whole as before) prints the table of the whole-text sweep."""
    from tokexplorer.cli.commands import training

    read = []  # the corpus read whole as one text
    monkeypatch.setattr(training, "_read_corpora", lambda *a, _read=training._read_corpora: read.append(a) or _read(*a))
    path = tmp_path / "corpus.txt"
    path.write_bytes((corpora / "en/taylorswift.txt").read_bytes()
                     + (corpora / "multilingual/ja_wagahaiwa_nekodearu.txt").read_bytes()[:60_000])
    code = main(["sweep", str(path), "--vocab-sizes", "256,300,400", "--held-out", "0.15", "-p", pattern,
                 "-t", "gpt2", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert bool(read) == (pattern not in ("gpt4", "none"))
    train, evaluation = split_held_out(read_text_file(path), 0.15)
    want = sweep(train, [256, 300, 400], pattern=None if pattern == "none" else pattern, eval_text=evaluation,
                 eval_source="held-out 15%", references=[load_tokenizer("gpt2")])
    assert json.loads(out) == json.loads(json.dumps(want.to_dict()))


@pytest.mark.parametrize("held_out", [0.1, None])
@pytest.mark.parametrize("pattern", ["gpt4", None])
def test_the_windows_sweep_of_a_file_does_not_read_it_whole(tmp_path, corpora, monkeypatch, pattern, held_out):
    """The window's sweep child (core/training/child.py) counts a file from its bytes too, with a
    held-out part split on them or none: the same result as the whole-text sweep, the file never
    read as one text."""
    import gc

    from tokexplorer.core.files import textfile
    from tokexplorer.core.training import child
    from tokexplorer.core.training.runner import SweepRequest

    path = tmp_path / "corpus.txt"
    path.write_text(read_text_file(corpora / "multilingual/ja_wagahaiwa_nekodearu.txt")[:30_000], "utf-8")
    train, evaluation = split_held_out(read_text_file(path), held_out) if held_out else (read_text_file(path), None)
    want = sweep(train, [256, 300], pattern=pattern, eval_text=evaluation,
                 eval_source="held-out 10%" if held_out else "the corpus")

    def read_whole(*args, **kwargs):
        raise AssertionError("the corpus was read whole")

    monkeypatch.setattr(textfile, "read_text_file", read_whole)
    sent = []

    class Conn:
        send = staticmethod(sent.append)

    try:
        child._sweep(SweepRequest((256, 300), pattern, held_out, path=str(path)), Conn())
    finally:
        gc.enable()  # (the child turns it off for good)
    assert sent[-1] == ("sweep_done", want)
    assert ("curve", len(train.encode("utf-8"))) in sent
