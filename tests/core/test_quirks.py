"""Each quirk's observation holds for the real vocabularies."""

from __future__ import annotations

import pytest

from tokexplorer.cli.main import main
from tokexplorer.core.analysis.quirks import QUIRKS, quirk
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.tokenizer import DisallowedSpecialError, TokexplorerError


def count(name: str, text: str, allowed_special=None) -> int:
    return len(get_builtin(name).encode(text, allowed_special=allowed_special))


def sample(name: str, label: str) -> str:
    return dict(quirk(name).samples)[label]


def test_long_token_is_one_token_in_gpt4():
    assert get_builtin("cl100k_base").encode(sample("long-token", "identifier")).token_bytes == [b".DefaultCellStyle"]


def test_korean_costs_more_than_english():
    en, ko = sample("non-english", "English"), sample("non-english", "Korean")
    for name in ("gpt2", "cl100k_base"):
        assert count(name, ko) >= 2 * count(name, en)
    assert count("o200k_base", ko) < count("cl100k_base", ko)


def test_digits():
    assert get_builtin("cl100k_base").encode("1234567").token_bytes == [b"123", b"456", b"7"]
    assert [b for b in get_builtin("llama-sp").encode("1234567").token_bytes if b.strip()] == [
        bytes([c]) for c in b"1234567"]


def test_python_indentation_gpt2_vs_gpt4():
    code = sample("python-indentation", "Python")
    assert count("cl100k_base", code) < count("gpt2", code) - 10


def test_endoftext_policy():
    text = sample("endoftext", "prompt")
    with pytest.raises(DisallowedSpecialError):
        get_builtin("gpt2").encode(text)
    assert get_builtin("gpt2").encode(text, allowed_special="all").ids.count(50256) == 1
    assert 50256 not in get_builtin("gpt2").encode(text, allowed_special="none").ids


def test_trailing_space_is_its_own_token():
    assert get_builtin("cl100k_base").encode(sample("trailing-space", "with it")).token_bytes[-1] == b" "


def test_solidgoldmagikarp():
    assert count("gpt2", sample("solidgoldmagikarp", "user name")) == 1
    assert count("cl100k_base", sample("solidgoldmagikarp", "user name")) > 1


def test_case_variants_are_different_tokens():
    tok = get_builtin("cl100k_base")
    encodings = [tuple(tok.encode(text).ids) for _, text in quirk("case").samples]
    assert len(set(encodings)) == len(encodings)


def test_yaml_is_cheaper_than_json():
    for name in ("gpt2", "cl100k_base", "o200k_base", "llama-sp"):
        assert count(name, sample("json-vs-yaml", "YAML")) < count(name, sample("json-vs-yaml", "JSON"))


def test_every_quirk_runs_from_the_command_line(capsys):
    assert main(["quirks"]) == 0
    for q in QUIRKS:
        assert main(["quirks", q.name, "--json"]) == 0
    capsys.readouterr()
    with pytest.raises(TokexplorerError):
        quirk("nope")


def test_spaces_and_punctuation_counts_as_the_observation_says():
    text = sample("spaces-and-punctuation", "text")
    assert (count("gpt2", text), count("cl100k_base", text)) == (6, 4)
    assert "(6 tokens)" in quirk("spaces-and-punctuation").observation


def test_each_quirk_names_its_view_and_tokenizers():
    from tokexplorer.core.registry import builtin_names

    for q in QUIRKS:
        assert q.view in ("editor", "compare"), q.name
        assert set(q.tokenizers) <= set(builtin_names()), q.name
        assert len(q.tokenizers) == 1 if q.view == "editor" else 2 <= len(q.tokenizers) <= 4, q.name
        if len(q.samples) > 1:
            assert q.view == "compare", f"{q.name} compares parts: the compare view counts them"
    assert quirk("python-indentation").tokenizers == ("gpt2", "cl100k_base")
