"""`split --pattern` takes a named pattern, a tokenizer's own pattern, or a regex, and refuses an
unknown name instead of splitting by it as a regex (which matches nothing)."""

from __future__ import annotations

import json

import pytest

from tokexplorer.cli.main import main
from tokexplorer.core.patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, O200K_SPLIT_PATTERN


def split_json(capsys, pattern: str, text: str) -> dict:
    assert main(["split", "--pattern", pattern, "--json", text]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name, pattern", [
    ("gpt2", GPT2_SPLIT_PATTERN), ("GPT4", GPT4_SPLIT_PATTERN), ("o200k", O200K_SPLIT_PATTERN),
    ("cl100k_base", GPT4_SPLIT_PATTERN), ("o200k_base", O200K_SPLIT_PATTERN),
])
def test_named_patterns_and_tokenizer_names(capsys, name, pattern):
    assert split_json(capsys, name, "Hi  there")["pattern"] == pattern


def test_a_regex_is_used_as_given(capsys):
    chunks = split_json(capsys, "[a-z]+", "Hi there")["chunks"]
    assert [c["text"] for c in chunks] == ["i", "there"]


@pytest.mark.parametrize("name", ["gpt-4", "cl100k", "llama"])
def test_an_unknown_name_is_refused(capsys, name):
    code = main(["split", "--pattern", name, "x"])
    err = capsys.readouterr().err
    if name == "cl100k":  # a named pattern after all
        assert code == 0
        return
    assert code == 1 and err.startswith("tokexplorer: error: unknown pattern") and "gpt4" in err


def test_a_tokenizer_without_a_regex_says_so(capsys):
    assert main(["split", "--pattern", "llama-sp", "x"]) == 1
    assert "no regex split pattern" in capsys.readouterr().err
