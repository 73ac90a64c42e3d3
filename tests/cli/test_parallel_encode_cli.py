"""`encode`, `compare`, `split` and `report lengths` on a --file print byte for byte what they
print when the file is read whole and cut into pieces by code points on one thread, for several
tokenizers and files: reads that cut multi-byte characters, many small pieces, special tokens
under each policy, a BOM and CRLFs, bad bytes (refused before anything is printed), UTF-16. And
`encode --ids-only` prints tiktoken's own ids of the whole text, `report lengths` the whole text's
histograms."""

from __future__ import annotations

import codecs
import json

import pytest

from tokexplorer.cli.main import main
from tokexplorer.core.analysis.token_lengths import length_histograms
from tokexplorer.core import patterns, streaming
from tokexplorer.core.files import text_blocks
from tokexplorer.core.files.text_blocks import TextFile
from tokexplorer.core.registry import get_builtin

SPECIALS = "Before <|endoftext|> after\nand <|fim_prefix|>x<|fim_suffix|>\n"


@pytest.fixture(scope="module")
def mixed_text(corpora) -> str:
    """English, code, Japanese, Chinese and the Unicode samples, 4,000 characters of each."""
    files = [corpora / "en" / "tinyshakespeare.txt", corpora / "code" / "cpython311_tokenize.py",
             corpora / "multilingual" / "ja_wagahaiwa_nekodearu.txt", corpora / "multilingual" / "zh_hans_lunyu.txt",
             *sorted((corpora / "unicode").glob("*.txt"))]
    return "\n".join(p.read_text(encoding="utf-8")[:4000] for p in files)


@pytest.fixture
def small(monkeypatch):
    """Pieces of about 500 bytes read 7 bytes at a time: many pieces, characters cut by reads."""
    monkeypatch.setattr(patterns, "PIECE_SIZE", 2000)
    monkeypatch.setattr(text_blocks, "READ", 7)


def _out(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _both(monkeypatch, capsys, argv: list[str]) -> tuple[tuple, tuple]:
    """The command's (code, stdout, stderr) with the file read in blocks on three threads, and
    read whole on one thread."""
    monkeypatch.setattr(streaming, "workers", lambda: 3)
    parallel = _out(capsys, argv)
    with monkeypatch.context() as m:
        m.setattr(streaming, "workers", lambda: 1)
        m.setattr(TextFile, "in_blocks", lambda self: False)
        serial = _out(capsys, argv)
    return parallel, serial


COMMANDS = [
    ["encode", "--ids-only"], ["encode"], ["encode", "--json"],
    ["compare"], ["compare", "--json"], ["report", "lengths"], ["report", "lengths", "--json"],
]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "gpt2", "llama-sp"])
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_file_in_blocks_on_threads_prints_what_it_printed_whole(small, monkeypatch, capsys, tmp_path, mixed_text,
                                                                 name, command):
    path = tmp_path / "mixed.txt"
    path.write_text(mixed_text, encoding="utf-8")
    parallel, serial = _both(monkeypatch, capsys, [*command, "-t", name, "--file", str(path)])
    assert parallel == serial and parallel[0] == 0
    assert len(parallel[1]) > 200


def test_ids_only_prints_tiktokens_ids_of_the_whole_text(small, monkeypatch, capsys, tmp_path, mixed_text):
    path = tmp_path / "mixed.txt"
    path.write_bytes(codecs.BOM_UTF8 + mixed_text.replace("\n", "\r\n").encode("utf-8"))
    monkeypatch.setattr(streaming, "workers", lambda: 2)
    for name in ["cl100k_base", "o200k_base", "gpt2"]:
        enc = get_builtin(name).tiktoken_encoding
        code, out, _ = _out(capsys, ["encode", "--ids-only", "-t", name, "--file", str(path)])
        assert code == 0
        assert out == " ".join(map(str, enc.encode_ordinary(mixed_text.replace("\n", "\r\n")))) + "\n"


@pytest.mark.parametrize("policy", [[], ["--allowed-special", "all"], ["--allowed-special", "none"],
                                    ["--allowed-special", "<|endoftext|>"],
                                    ["--allowed-special", "<|endoftext|>,<|fim_prefix|>,<|fim_suffix|>"]])
@pytest.mark.parametrize("command", [["encode", "--ids-only"], ["encode", "--json"], ["compare"]], ids=" ".join)
def test_special_tokens_under_each_policy(small, monkeypatch, capsys, tmp_path, mixed_text, policy, command):
    path = tmp_path / "specials.txt"
    path.write_text(mixed_text[:3000] + SPECIALS + mixed_text[3000:6000] + SPECIALS, encoding="utf-8")
    parallel, serial = _both(monkeypatch, capsys, [*command, "-t", "cl100k_base", "--file", str(path), *policy])
    assert parallel == serial
    first_refused = {0: "<|endoftext|>", 1: "<|fim_prefix|>"}.get(len(policy[1].split(",")) if policy else 0)
    if policy and policy[1] in ("all", "none"):
        first_refused = None
    assert parallel[0] == (0 if first_refused is None else 1)
    if first_refused is not None:  # nothing printed before the refusal, which names the first one refused
        at = 3000 + SPECIALS.index(first_refused)
        assert parallel[1] == "" and f"special token {first_refused!r} at character {at};" in parallel[2]


@pytest.mark.parametrize("command", [["split"], ["split", "--json"], ["split", "-p", "gpt2"], ["split", "-p", "o200k"],
                                     ["split", "-p", r"\w+|\s"]], ids=" ".join)
def test_split_prints_what_it_printed_whole(small, monkeypatch, capsys, tmp_path, mixed_text, command):
    path = tmp_path / "mixed.txt"
    path.write_text(mixed_text + SPECIALS, encoding="utf-8")
    parallel, serial = _both(monkeypatch, capsys, [*command, "--file", str(path)])
    assert parallel == serial and parallel[0] == 0 and len(parallel[1]) > 1000


@pytest.mark.parametrize("data", [
    "ok text\n".encode("utf-8") * 200 + b"\xff\n" + b"<|endoftext|>",  # a bad byte after many pieces
    b"<|endoftext|> first, then a bad byte\n" * 100 + b"\xe6\x97",  # ends inside a character
])
@pytest.mark.parametrize("command", [["encode", "--ids-only"], ["compare"], ["split"]], ids=" ".join)
def test_a_bad_file_is_refused_before_anything_is_printed(small, monkeypatch, capsys, tmp_path, data, command):
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    parallel, serial = _both(monkeypatch, capsys, [*command, "--file", str(path)])
    assert parallel == serial
    assert parallel[0] == 1 and parallel[1] == "" and "not UTF-8 text" in parallel[2]


def test_utf16_and_named_encodings_are_read_whole(small, monkeypatch, capsys, tmp_path, mixed_text):
    path = tmp_path / "utf16.txt"
    path.write_bytes(mixed_text[:5000].encode("utf-16"))
    parallel, serial = _both(monkeypatch, capsys, ["encode", "--ids-only", "--file", str(path)])
    assert parallel == serial and parallel[0] == 0
    parallel, serial = _both(monkeypatch, capsys, ["encode", "--ids-only", "--file", str(path), "--encoding", "utf-16"])
    assert parallel == serial and parallel[0] == 0


def test_report_lengths_of_a_file_counts_the_whole_texts_tokens(small, monkeypatch, capsys, tmp_path, mixed_text):
    path = tmp_path / "mixed.txt"
    path.write_text(mixed_text + SPECIALS, encoding="utf-8")
    names = ["gpt2", "cl100k_base", "o200k_base", "llama-sp"]
    tokenizers = [a for n in names for a in ("-t", n)]
    code, out, _ = _out(capsys, ["report", "lengths", "--json", "--file", str(path), *tokenizers])
    data = json.loads(out)
    assert code == 0 and data["bytes"] == len((mixed_text + SPECIALS).encode("utf-8"))
    whole = length_histograms(mixed_text + SPECIALS, [get_builtin(n) for n in names])
    assert [entry["counts"] for entry in data["tokenizers"]] == [list(h.counts) for h in whole]
