"""The analyses behind the plots (sweep, compression over merges, token lengths, tokens per
language) against straightforward recomputation: the slow reference trainer and encoder, and the
tokenizers' own encodings of the files read from disk."""

from __future__ import annotations

import collections

import pytest

from tokexplorer.core.analysis.languages import read_parallel_texts, tokens_per_language, udhr_folder
from tokexplorer.core.patterns import GPT4_SPLIT_PATTERN
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.analysis.sweep import (
    CompressionCurve,
    compression_curve,
    parse_vocab_sizes,
    split_held_out,
    sweep,
)
from tokexplorer.core.tables import csv_text
from tokexplorer.core.analysis.token_lengths import histogram_table, length_histogram, length_histograms
from tokexplorer.core.tokenizer import TokexplorerError

from .. import reference_bpe as ref

BUILTINS = ["gpt2", "cl100k_base", "o200k_base", "llama-sp"]


@pytest.fixture(scope="module")
def shakespeare(corpora) -> str:
    return (corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:30_000]


@pytest.mark.parametrize("pattern", [None, GPT4_SPLIT_PATTERN], ids=["basic", "gpt4"])
def test_compression_curve_is_the_reference_encoding_after_each_merge(shakespeare, pattern):
    text = shakespeare[:6000]
    curve = compression_curve(text, 300, pattern=pattern)
    merges = ref.train(text, 300, pattern)
    assert len(curve.tokens) == len(merges) + 1 == 45
    for k in (0, 1, 7, 20, 44):
        first_k = dict(list(merges.items())[:k])
        n = len(ref.encode(text, first_k, pattern))
        assert curve.tokens[k] == n
        if k:
            assert curve.bytes_per_token[k - 1] == len(text.encode("utf-8")) / n


def test_curve_grows_one_merge_at_a_time():
    curve = CompressionCurve(100)
    assert [curve.add(m) for m in (10, 10, 30)] == [100 / 90, 100 / 80, 100 / 50]
    assert curve.merges == [1, 2, 3] and curve.table()[1:] == [[1, 257, 90, 1.111111], [2, 258, 80, 1.25],
                                                               [3, 259, 50, 2.0]]


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "trained"])
def test_counting_in_pieces_gives_the_whole_texts_count(corpora, monkeypatch, name):
    from tokexplorer.core.analysis import sweep as sweep_module
    from tokexplorer.core.training.bpe import train

    text = "".join((corpora / rel).read_text("utf-8")[:20_000] for rel in [
        "en/tinyshakespeare.txt", "multilingual/zh_hans_lunyu.txt", "code/pokemon.json"]) + "<|endoftext|>"
    tok = train(text, 400, pattern="gpt4") if name == "trained" else get_builtin(name)
    whole = len(tok.encode(text, allowed_special="none").ids)
    monkeypatch.setattr(sweep_module, "COUNT_PIECE", 500)
    assert len(sweep_module.piece_spans(text, size=500)) > 30
    assert sweep_module.count_tokens(tok, text) == whole


def test_sweep_counts_the_held_out_text_at_each_size_and_the_references(shakespeare):
    train_text, held = split_held_out(shakespeare, 0.2)
    refs = [get_builtin(n) for n in BUILTINS]
    s = sweep(train_text, [256, 300, 420], pattern="gpt4", eval_text=held, references=refs)
    merges = ref.train(train_text, 420, GPT4_SPLIT_PATTERN)
    for point in s.points:
        first = dict(list(merges.items())[: point.vocab_size - 256])
        assert point.tokens == len(ref.encode(held, first, GPT4_SPLIT_PATTERN)), point
        assert point.reached
    assert s.points[0].tokens == len(held.encode("utf-8"))
    assert [(r.name, r.n_vocab, r.tokens) for r in s.references] == [
        (t.name, t.n_vocab, len(t.encode(held, allowed_special="none").ids)) for t in refs]
    assert s.eval_bytes == len(held.encode("utf-8")) and s.train_bytes == len(train_text.encode("utf-8"))
    assert s.curve.tokens[-1] == len(ref.encode(train_text, merges, GPT4_SPLIT_PATTERN))
    rows = s.table()
    assert rows[0] == ["tokenizer", "vocab_size", "tokens", "bytes_per_token"]
    assert rows[2] == ["trained BPE", 300, s.points[1].tokens, round(s.eval_bytes / s.points[1].tokens, 6)]
    assert rows[-1][:3] == ["llama-sp", 32000, s.references[-1].tokens]


def test_sweep_reports_progress_and_can_be_stopped(shakespeare):
    seen = []

    def progress(done, total):
        seen.append((done, total))
        if done == 30:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sweep(shakespeare[:5000], [256, 400], progress=progress)
    assert seen[-1] == (30, 144 + 2)


def test_sweep_shows_its_curve_after_each_merge(shakespeare):
    seen = []
    s = sweep(shakespeare[:3000], [256, 270], on_merge=lambda curve: seen.append(curve.snapshot()))
    assert [len(c.tokens) for c in seen] == list(range(2, 16))
    assert seen[-1].tokens == s.curve.tokens and seen[4].tokens == s.curve.tokens[:6]


def test_sweep_that_runs_out_of_pairs_says_so():
    s = sweep("abab", [256, 258, 300], pattern=None)
    assert [(p.vocab_size, p.tokens, p.reached) for p in s.points] == [(256, 4, True), (258, 1, True),
                                                                      (300, 1, False)]
    assert s.merges_learned == 2


def test_split_held_out_keeps_every_character_and_cuts_at_a_line():
    text = "".join(f"line {i}\n" for i in range(100))
    train_text, held = split_held_out(text, 0.1)
    assert train_text + held == text and train_text.endswith("\n") and 0.08 < len(held) / len(text) < 0.12
    with pytest.raises(TokexplorerError, match="between 0 and 1"):
        split_held_out(text, 1.5)
    with pytest.raises(TokexplorerError, match="too short"):
        split_held_out("x", 0.5)


@pytest.mark.parametrize("value, message", [("", "at least one"), ("a,b", "integers"), ("100,512", "too small")])
def test_bad_vocab_sizes_are_one_clear_error(value, message):
    with pytest.raises(TokexplorerError, match=message):
        parse_vocab_sizes(value)


@pytest.mark.parametrize("name", BUILTINS)
def test_length_histogram_counts_each_tokens_bytes_of_text(corpora, name):
    text = (corpora / "multilingual/udhr/udhr_hin.txt").read_text("utf-8")[:3000] + " 123 hello 👋"
    tok = get_builtin(name)
    enc = tok.encode(text, allowed_special="none")
    raw = text.encode("utf-8")
    # The slow way: find each token's bytes in the text, left to right.
    lengths, at = [], 0
    for b in enc.token_bytes:
        b = b.removeprefix(b" ") if name == "llama-sp" and at == 0 else b
        assert raw[at:at + len(b)] == b
        lengths.append(len(b))
        at += len(b)
    assert at == len(raw)
    (hist,) = length_histograms(text, [tok])
    assert hist == length_histogram(enc, name)
    assert hist.counts == tuple(collections.Counter(lengths).get(k, 0) for k in range(max(lengths) + 1))
    assert hist.tokens == len(enc.ids) and hist.bytes == len(raw)


def test_histogram_table_has_a_row_per_length_and_a_column_per_tokenizer():
    text = "the quick brown fox jumps over the lazy dog, 12345!"
    hists = length_histograms(text, [get_builtin("gpt2"), get_builtin("o200k_base")])
    rows = histogram_table(hists)
    assert rows[0] == ["bytes", "gpt2", "o200k_base"]
    assert [r[0] for r in rows[1:]] == list(range(1, max(len(h.counts) for h in hists)))
    assert [sum(r[i] for r in rows[1:]) for i in (1, 2)] == [h.tokens for h in hists]


def test_udhr_texts_are_installed_with_their_languages(corpora):
    texts = read_parallel_texts()
    assert len(texts) == 56 and len({t.key for t in texts}) == 56
    shared = corpora / "multilingual/udhr"
    for t in texts:
        assert t.text == (shared / f"udhr_{t.key}.txt").read_text("utf-8")
        assert t.language != t.key and len(t.script) == 4, t
    by_key = {t.key: t for t in texts}
    assert (by_key["cmn_hans"].script, by_key["arb"].language, by_key["mya"].script) == ("Hans", "Arabic, Standard", "Mymr")
    assert udhr_folder().joinpath("README.md").is_file()


def test_tokens_per_language_are_each_files_tokens_relative_to_english():
    tokenizers = [get_builtin(n) for n in BUILTINS]
    report = tokens_per_language(read_parallel_texts(), tokenizers)
    assert report.tokenizers == tuple(BUILTINS) and report.reference == "eng"
    english = (udhr_folder() / "udhr_eng.txt").read_text("utf-8")
    eng_tokens = [len(t.encode(english, allowed_special="none").ids) for t in tokenizers]
    assert report.row("eng").ratios == (1.0,) * 4
    for key in ("hin", "jpn", "mya", "fra"):
        text = (udhr_folder() / f"udhr_{key}.txt").read_text("utf-8")
        row = report.row(key)
        tokens = [len(t.encode(text, allowed_special="none").ids) for t in tokenizers]
        assert row.tokens == tuple(tokens) and (row.chars, row.bytes) == (len(text), len(text.encode("utf-8")))
        assert row.ratios == tuple(n / e for n, e in zip(tokens, eng_tokens))
    # The lecture's fact: Hindi costs GPT-2 several times the tokens of English; o200k cuts the tax.
    hin = report.row("hin").ratios
    assert hin[0] > 5 and hin[2] < hin[1] < hin[0]
    table = report.table()
    assert table[0][:6] == ["key", "language", "script", "characters", "bytes", "tokens gpt2"]
    assert len(table) == 57 and csv_text(table).count("\n") == 57


def test_tokens_per_language_refuses_a_missing_reference(tmp_path):
    (tmp_path / "fra.txt").write_text("bonjour", "utf-8")
    with pytest.raises(TokexplorerError, match="reference language 'eng'"):
        tokens_per_language(read_parallel_texts(tmp_path), [get_builtin("gpt2")])
    (tmp_path / "eng.txt").write_text("hello", "utf-8")
    report = tokens_per_language(read_parallel_texts(tmp_path), [get_builtin("gpt2")])
    assert [(r.key, r.language, r.tokens) for r in report.rows] == [("eng", "eng", (1,)), ("fra", "fra", (3,))]  # bon|j|our
    (tmp_path / "empty").mkdir()
    with pytest.raises(TokexplorerError, match="no .txt files"):
        read_parallel_texts(tmp_path / "empty")
