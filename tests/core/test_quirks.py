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


def test_each_quirk_says_what_to_try_next():
    from tokexplorer.core.analysis.quirks import description

    for q in QUIRKS:
        assert q.try_next.strip() and q.try_next not in q.observation, q.name
        assert description(q) == f"{q.observation} Try next: {q.try_next}"
    assert {"reverse", "trailing-space", "digits"} <= {q.name for q in QUIRKS}


def test_reversing_a_string_the_model_sees_one_token_then_nine():
    """The lecture: ChatGPT could not reverse '.DefaultCellStyle' (one GPT-4 token), and could once
    it had written the letters with spaces between them."""
    tok = get_builtin("cl100k_base")
    word, backwards, spelled = (sample("reverse", label) for label in ("word", "reversed", "spelled out"))
    assert backwards == word[::-1] and spelled.replace(" ", "") == word
    assert tok.encode(word).ids == [98518]
    assert [b.decode() for b in tok.encode(backwards).token_bytes] == ["ely", "t", "Sl", "le", "Ctl", "ua", "fe",
                                                                      "D", "."]
    for name in ("gpt2", "cl100k_base"):
        pieces = get_builtin(name).encode(spelled).token_bytes
        assert [b.strip() for b in pieces] == [bytes([c]) for c in word.encode()]  # a token per letter
    assert "one token, its reversal nine" in quirk("reverse").observation and "(17)" in quirk("reverse").observation


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_trailing_whitespace_warning_the_space_is_alone_where_training_glued_it(name):
    tok = get_builtin(name)
    ending = tok.encode(sample("trailing-space", "with it")).ids
    trained = tok.encode(sample("trailing-space", "as in training"))
    assert ending[-1] == 220 and tok.token_bytes(220) == b" "
    assert trained.ids[:6] == ending[:6]  # "Here is a tag line:" alike, then the space goes with the word
    assert trained.token_bytes[6] == b" Just" and 220 not in trained.ids
    if name == "cl100k_base":
        assert trained.ids[6] == 4702
    assert "id 220" in quirk("trailing-space").observation and "id 4702" in quirk("trailing-space").observation


def test_digits_gpt2_merges_any_run_cl100k_cuts_three_from_the_left():
    gpt2, cl100k = get_builtin("gpt2"), get_builtin("cl100k_base")

    def cuts(tok, text):
        return [b.decode() for b in tok.encode(text).token_bytes]

    number, years = sample("digits", "long number"), sample("digits", "years")
    assert cuts(gpt2, number) == ["123", "45", "678", "90"]
    assert cuts(cl100k, number) == ["123", "456", "789", "0"]
    assert cuts(gpt2, years)[:4] == ["20", "24", " +", " 1999"]
    assert cuts(cl100k, years) == ["202", "4", " +", " ", "199", "9", " =", " ", "402", "3"]
    for piece in cuts(cl100k, number) + cuts(cl100k, years):  # never a space glued to a digit
        assert not (any(c.isdigit() for c in piece) and not piece.isdigit()), piece
        assert len(piece) <= 3 or not piece.isdigit()
    observation = quirk("digits").observation
    assert "123|45|678|90" in observation and "123|456|789|0" in observation and "202|4" in observation
