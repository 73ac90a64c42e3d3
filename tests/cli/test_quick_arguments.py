"""A plain `encode` command line read without argparse (`commands.encoding.quick_arguments`): the
same arguments argparse gives for every form it takes, argparse itself for every other form, a
whole `python -m tokexplorer encode` process that imports no parser at all, and that ends without
the interpreter's teardown (`cli.main._exit_without_teardown`)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest

from tokexplorer.cli.commands.encoding import quick_arguments
from tokexplorer.cli.main import build_parser, main


def _argparse(argv: list[str]) -> dict:
    return vars(build_parser("encode").parse_args(["encode", *argv]))


PARTS = [["-t", "gpt2"], ["--tokenizer", "llama-sp"], ["--ids-only"], ["--json"], ["--allowed-special", "all"],
         ["hello world"]]
# Every subset of PARTS in its order and reversed, every order of four of them, and a few more:
# repeated options (the last one counts), an empty text, an empty name, a text that is a command's
# name or holds '=', spaces and non-ASCII characters.
TAKEN = [sum(order, []) for k in range(len(PARTS) + 1) for combo in itertools.combinations(PARTS, k)
         for order in ([combo, combo[::-1]] if k > 1 else [combo])] + [
    sum(order, []) for order in itertools.permutations([PARTS[0], PARTS[2], PARTS[4], PARTS[5]])] + [
    ["-t", "gpt2", "-t", "o200k_base", "x"], ["--ids-only", "--ids-only", ""], ["-t", "", "x"],
    ["encode"], ["a=b c"], ["--allowed-special", "<|endoftext|>,<|fim_prefix|>", "x<|endoftext|>"],
    ["--allowed-special", "", "x"], ["-t", "a b", "--json"], ["日本語 👋"],
]
# Forms left to argparse: its help, options the quick reading does not take, abbreviations,
# '--', NAME glued to -t, texts and values that start with '-', a second text, a missing value.
LEFT = [["-h"], ["--help"], ["--file", "x.txt"], ["-f", "x.txt"], ["--ids"], ["--json", "--", "x"],
        ["-tgpt2", "x"], ["--tokenizer=gpt2", "x"], ["-"], ["-5"], ["- x"], ["a", "b"], ["-t"],
        ["-t", "-x"], ["--allowed-special"], ["--max-mb", "3", "x"], ["--add-special", "<a>", "x"],
        ["--encoding", "latin-1", "x"], ["x", "--ids-only", "y"], ["-t", "--ids-only"]]


@pytest.mark.parametrize("argv", TAKEN, ids=lambda argv: " ".join(argv) or "(nothing)")
def test_the_quick_reading_gives_what_argparse_gives(argv):
    quick = quick_arguments(argv)
    assert quick is not None
    assert vars(quick) == _argparse(argv)


@pytest.mark.parametrize("argv", LEFT, ids=" ".join)
def test_other_forms_are_left_to_argparse(argv):
    assert quick_arguments(argv) is None


def test_argparse_still_answers_what_the_quick_reading_leaves(capsys):
    """Help and usage errors are argparse's, word for word (exit 0 and 2)."""
    with pytest.raises(SystemExit) as exit_help:
        main(["encode", "--help"])
    help_text = capsys.readouterr().out
    assert exit_help.value.code == 0 and help_text.startswith("usage: tokexplorer encode [-h] [-t NAME]")
    with pytest.raises(SystemExit) as exit_error:
        main(["encode", "a", "b"])
    assert exit_error.value.code == 2
    assert capsys.readouterr().err.endswith("tokexplorer: error: unrecognized arguments: b\n")
    with pytest.raises(SystemExit):
        main(["encode", "-t"])
    assert capsys.readouterr().err.endswith("tokexplorer encode: error: argument -t/--tokenizer: expected one argument\n")


# A short encode needs no parser: argparse (with gettext and locale), the parser module, the other
# commands' modules and the Ctrl-C guard's `signal` are a tenth of its start.
NOT_IMPORTED = ("argparse", "gettext", "locale", "signal", "tokexplorer.cli.parser", "tokexplorer.cli.commands.training",
                "tokexplorer.cli.commands.listing", "tokexplorer.core.budgets", "tokexplorer.gui")


def test_a_short_encode_process_imports_no_parser():
    """`python -m tokexplorer encode -t llama-sp --ids-only TEXT` as a whole process (run as
    runpy runs it, then its modules listed)."""
    code = ("import json, runpy, sys\n"
            "sys.argv = ['tokexplorer', 'encode', '-t', 'llama-sp', '--ids-only', 'hello world']\n"
            "try:\n    runpy.run_module('tokexplorer', run_name='__main__')\n"
            "except SystemExit as exc:\n    status = exc.code\n"
            "print(json.dumps([status, sorted(sys.modules)]))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    ids, result = proc.stdout.splitlines()
    status, modules = json.loads(result)
    assert ids == "6312 28709 1526" and status == 0
    assert [m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_IMPORTED)] == []


# A plain encode run as the program, with a witness of the interpreter's teardown (an object whose
# __del__ speaks when the main module is cleared) and an exit handler registered the way a
# library registers one as it loads (after the command line is read).
PROGRAM = """
import atexit, runpy, sys

class Witness:
    def __del__(self):
        print("teardown", file=sys.stderr)

witness = Witness()
import tokexplorer.cli.commands.encoding as encoding
load = encoding.load_tokenizer

def load_and_register(name):
    atexit.register(print, "exit handler", file=sys.stderr)
    return load(name)

encoding.load_tokenizer = load_and_register
sys.argv = ["tokexplorer", *sys.argv[1:]]
runpy.run_module("tokexplorer", run_name="__main__")
"""


@pytest.mark.parametrize("name, status, out, err", [
    ("gpt2", 0, "31373 995\n", "exit handler\n"),
    ("no-such-tokenizer", 1, "", "tokexplorer: error: unknown tokenizer 'no-such-tokenizer'"),
])
def test_a_short_encode_process_ends_without_the_teardown(tmp_path, name, status, out, err):
    """Its output and status as before, the libraries' exit handlers run, and no teardown (which
    freed the vocabulary after the ids were out: up to a fifth of the command)."""
    script = tmp_path / "program.py"
    script.write_text(PROGRAM, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script), "encode", "-t", name, "--ids-only", "hello world"],
                          capture_output=True, text=True, timeout=300)
    assert (proc.returncode, proc.stdout) == (status, out)
    assert proc.stderr.startswith(err) and proc.stderr.endswith("exit handler\n")
    assert "teardown" not in proc.stderr


def test_main_called_from_python_leaves_the_interpreter_alone(capsys):
    """main(argv) from a caller that goes on (tests, the window's crash child) registers nothing."""
    import atexit

    before = atexit._ncallbacks()
    assert main(["encode", "-t", "gpt2", "--ids-only", "hello world"]) == 0
    assert capsys.readouterr().out == "31373 995\n"
    assert atexit._ncallbacks() == before
