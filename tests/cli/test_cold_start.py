"""A short `encode --ids-only` (issue 35's cold start): the ids the libraries give, from a process
that imports nothing the command does not use, reads each built-in's compact copy without hashing
the shipped file again, and gives what the long path (pieces, threads, arrays) gives."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tokexplorer.core import registry

from .test_cli import run

# "hello world" as each library's own load of the same file encodes it (the peers of
# `bench --startup`: tiktoken's readers + Encoding, SentencePieceProcessor, tokenizers'
# Tokenizer.from_file, mistral_common's Tekkenizer), checked with those libraries.
HELLO_WORLD = {
    "gpt2": [31373, 995], "cl100k_base": [15339, 1917], "o200k_base": [24912, 2375],
    "llama-sp": [6312, 28709, 1526], "deepseek-v4": [33310, 2058], "qwen2.5": [14990, 1879],
    "qwen3.6": [14556, 1814], "tekken": [29706, 4304],
}
# Modules a short encode of a built-in must not import: numpy (a fifth of a start), the streaming
# and Encoding machinery, dataclasses (it imports inspect), hashlib (no shipped file is hashed
# on a second start), the window.
NOT_IMPORTED = ("numpy", "dataclasses", "inspect", "hashlib", "tokexplorer.core.encoding",
                "tokexplorer.core.streaming", "tokexplorer.core.analysis", "tokexplorer.core.backends.normalization",
                "PySide6")


def test_every_builtin_has_its_golden_ids():
    assert sorted(HELLO_WORLD) == sorted(registry.builtin_names())


def _fresh_encode(name: str) -> tuple[str, list[str]]:
    """`main(encode ...)` in a fresh interpreter (the session's cache folder: TOKEXPLORER_CACHE):
    what it printed and which of NOT_IMPORTED it imported."""
    code = (
        "import sys\nfrom tokexplorer.cli.main import main\n"
        f"code = main(['encode', '-t', {name!r}, '--ids-only', 'hello world'])\n"
        f"bad = sorted(m for m in sys.modules if any(m == n or m.startswith(n + '.') for n in {NOT_IMPORTED!r}))\n"
        "print(code, bad)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    code_and_bad = lines[-1].split(" ", 1)
    assert code_and_bad[0] == "0", proc.stdout
    return lines[-2], eval(code_and_bad[1])  # a list of module names, printed by us


@pytest.mark.parametrize("name", list(HELLO_WORLD))
def test_a_second_start_imports_only_what_it_needs(name):
    """The first start makes the compact copy; the second reads it, and imports none of
    NOT_IMPORTED (hashlib included: the shipped file is known by its stamp)."""
    first, _ = _fresh_encode(name)
    second, imported = _fresh_encode(name)
    assert first == second == " ".join(map(str, HELLO_WORLD[name]))
    assert imported == []


def test_version_builds_no_parser():
    code = ("import sys\nfrom tokexplorer.cli.main import main\nmain(['--version'])\n"
            "print(sorted(m for m in sys.modules if m.startswith(('tokexplorer.core.registry', "
            "'tokexplorer.cli.commands', 'tiktoken', 'numpy'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.splitlines() == ["tokexplorer 0.1.0", "[]"]


TEXTS = ["hello world", "", "Cafe\u0301 \u212b\u1100\u1161 👋🏽 naïve", "a<|endoftext|>b</s>c<｜end▁of▁sentence｜>",
         "  tabs\tand\r\nlines\n\n", "x" * 3000]


@pytest.mark.parametrize("name", list(HELLO_WORLD))
@pytest.mark.parametrize("policy", ["none", "all"])
def test_the_short_path_gives_the_ids_of_the_long_one(capsys, tmp_path, name, policy):
    """A text given as an argument (one `encode_ids` call) and the same text from a file (the
    pieces, threads and numpy formatting of the streaming path) print the same ids, for texts
    that NFC changes and that spell special tokens."""
    for k, text in enumerate(TEXTS):
        path = tmp_path / f"{k}.txt"
        path.write_bytes(text.encode("utf-8"))
        short = run(capsys, "encode", "-t", name, "--ids-only", "--allowed-special", policy, text)[1]
        long = run(capsys, "encode", "-t", name, "--ids-only", "--allowed-special", policy, "--file", str(path))[1]
        assert short == long, (name, text)
        tok = registry.get_builtin(name)
        assert short.split() == list(map(str, tok.encode(text, allowed_special=policy).ids))


def test_the_short_path_refuses_special_tokens_as_the_long_one(capsys):
    code, out, err = run(capsys, "encode", "-t", "cl100k_base", "--ids-only", "a<|endoftext|>")
    assert code == 1 and out == "" and "special token '<|endoftext|>' at character 1" in err
