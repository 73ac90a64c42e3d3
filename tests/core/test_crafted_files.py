"""Crafted tokenizer files: a few bytes that claim a huge id, count or length, or nest without
end, are refused in one line, fast, in bounded memory (`core.files.file_budget`).

Each file is made here, in tmp_path. The loads that could take gigabytes run in a child process
whose address space is limited (RLIMIT_AS): a load that believed the file would die of a
MemoryError there (or hang until the timeout) instead of exhausting the machine.
"""

from __future__ import annotations

import base64
import json
import os
import resource
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tokexplorer.core.backends.tiktoken_family import gpt2_byte_decoder
from tokexplorer.core.files import file_budget
from tokexplorer.core.registry import load_tokenizer
from tokexplorer.core.tokenizer import TokexplorerError

ADDRESS_SPACE = 1 << 30  # the child's whole address space: libraries and threads take about 450 MB
PEAK_MB = 300  # what a refusal may take at most (resident), the file's bytes included
SECONDS = 5.0  # what a refusal may take at most, after the imports (a loaded CI machine)

# The child: load the file (after importing what loading needs), print what happened as JSON.
CHILD = """
import json, sys, time
from tokexplorer.core.registry import load_tokenizer
from tokexplorer.core.files.textfile import read_text_file
import tokexplorer.core.backends.hf_tokenizers, tokexplorer.core.backends.sentencepiece_family
kind, path = sys.argv[1], sys.argv[2]
start = time.perf_counter()
try:
    if kind == "text":
        read_text_file(path)
    else:
        load_tokenizer(path).encode("hello")
    error, kind = None, None
except BaseException as exc:
    error, kind = str(exc), type(exc).__name__
seconds = time.perf_counter() - start
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) / 1024
print(json.dumps({"error": error, "type": kind, "seconds": seconds, "peak_mb": peak}))
"""


def load_bounded(path: Path, kind: str = "tokenizer", timeout: float = 60) -> str:
    """The one-line refusal of loading `path` in a child limited to ADDRESS_SPACE; checks that it
    came within SECONDS and PEAK_MB."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    proc = subprocess.run([sys.executable, "-c", CHILD, kind, str(path)], capture_output=True,
                          text=True, timeout=timeout, preexec_fn=limit)
    assert proc.returncode == 0 and proc.stdout.strip(), proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["type"] == "TokexplorerError", result
    assert "\n" not in result["error"] and len(result["error"]) < 600, result["error"]
    assert result["seconds"] < SECONDS, result
    assert result["peak_mb"] < PEAK_MB, result
    return result["error"]


def byte_level(i: int) -> str:
    return {b: c for c, b in gpt2_byte_decoder().items()}[i]


def tiktoken_lines(extra: dict[bytes, int]) -> bytes:
    ranks = {bytes([i]): i for i in range(256)} | extra
    return b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in ranks.items())


def tokenizer_json(vocab_extra: dict | None = None, added: list | None = None, **model) -> dict:
    vocab = {byte_level(i): i for i in range(256)} | (vocab_extra or {})
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added or [],
            "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                              "use_regex": True},
            "post_processor": None,
            "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                        "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                      "vocab": vocab, "merges": [], **model}}


def added_token(content: str, token_id: int) -> dict:
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}


def tekken(**config) -> dict:
    base = {"pattern": r"\S+|\s+", "default_vocab_size": 1256, "default_num_special_tokens": 1000}
    return {"config": base | config,
            "vocab": [{"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode()} for i in range(256)]}


# --- size budgets: ids, counts and lengths bounded by what the file holds ------------------------

def test_a_tiktoken_rank_far_beyond_its_lines_is_refused(tmp_path):
    path = tmp_path / "big.tiktoken"
    path.write_bytes(tiktoken_lines({b"ab": 1 << 30}))  # 257 lines; a table of 2^30 entries is 8 GB
    assert "has id 1,073,741,824" in load_bounded(path)


def test_a_gpt2_encoder_id_of_two_billion_is_refused(tmp_path):
    encoder = {byte_level(i): i for i in range(256)} | {byte_level(97) + byte_level(98): 2_000_000_000}
    (tmp_path / "encoder.json").write_text(json.dumps(encoder), "utf-8")
    (tmp_path / "vocab.bpe").write_text("#version: 0.2\n", "utf-8")
    assert "id 2,000,000,000" in load_bounded(tmp_path / "encoder.json")


@pytest.mark.parametrize("where", ["vocab", "added"])
def test_a_tokenizer_json_id_of_two_billion_is_refused(tmp_path, where):
    spec = (tokenizer_json({"zz": 2_000_000_000}) if where == "vocab"
            else tokenizer_json(added=[added_token("<x>", 2_000_000_000)]))
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec), "utf-8")
    assert "id 2,000,000,000" in load_bounded(path)


@pytest.mark.parametrize("config, message", [
    ({"default_num_special_tokens": 100_000_000}, "default_num_special_tokens is 100000000"),
    ({"default_num_special_tokens": float("inf")}, "default_num_special_tokens is Infinity"),
    ({"default_num_special_tokens": 1000.5}, "not a whole number"),
    ({"default_vocab_size": 10 ** 12}, "default_vocab_size is 1000000000000"),
    ({"pattern": 5}, "config.pattern is 5"),
])
def test_tekken_counts_and_pattern_are_checked(tmp_path, config, message):
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(tekken(**config)), "utf-8")
    assert message in load_bounded(path)


def test_an_empty_special_token_is_refused_not_matched_for_ever(tmp_path):
    spec = tekken(default_num_special_tokens=2, default_vocab_size=258)
    spec["special_tokens"] = [{"rank": 0, "token_str": ""}, {"rank": 1, "token_str": "<s>"}]
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(spec), "utf-8")
    assert "special token '' (id 0) is empty" in load_bounded(path)


def test_minbpe_merges_that_double_a_token_are_refused_by_its_length(tmp_path):
    # each merge joins the newest token with itself: 40 lines would make a token of 2^41 bytes
    lines = ["minbpe v1", "", "0", "97 97"] + [f"{256 + i} {256 + i}" for i in range(40)]
    path = tmp_path / "double.model"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    err = load_bounded(path)
    assert "makes a token of 131,072 bytes" in err and f"{file_budget.MAX_TOKEN_BYTES:,}" in err


def test_minbpe_merges_whose_tokens_add_up_past_the_budget_are_refused(tmp_path):
    # a token of 32 KB, then thousands of distinct tokens of that length and one byte more each:
    # no token is over the bound, all together they would be gigabytes
    lines = ["minbpe v1", "", "0", "97 97"] + [f"{256 + i} {256 + i}" for i in range(14)]
    big = 256 + 14  # 2^15 bytes of 'a'
    lines += [f"{big} {b}" for b in range(256)]
    firsts = range(big + 1, big + 257)
    lines += [f"{t} {b}" for t in firsts for b in range(256)]
    path = tmp_path / "wide.model"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    assert "add up to" in load_bounded(path)


def test_a_json_file_of_empty_arrays_is_refused_by_its_estimate(tmp_path):
    # 40 MB: 13 million empty arrays would take about a gigabyte as Python lists
    path = tmp_path / "tokenizer.json"
    with path.open("wb") as f:
        f.write(b'{"model": [')
        f.write(b"[]," * 13_000_000)
        f.write(b"[]]}")
    assert "would take about" in load_bounded(path)


def test_a_tokenizer_file_over_the_size_budget_is_refused_before_reading(tmp_path):
    path = tmp_path / "tokenizer.json"
    with path.open("wb") as f:  # sparse: no disk is used
        f.write(b'{"model": {}, "x": "')
        f.truncate(file_budget.MAX_TOKENIZER_FILE_BYTES + 1_000_000)
    err = load_bounded(path)
    assert "257 MB, over the 256 MB a tokenizer file may have" in err


# --- GGUF: every claim checked against the bytes left ---------------------------------------------

def gguf_string(text: str | bytes) -> bytes:
    data = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(data)) + data


def gguf(*pairs: bytes, keys: int | None = None, version: int = 3) -> bytes:
    """A GGUF file's bytes: header, then the given key/value pairs (each already encoded)."""
    return b"GGUF" + struct.pack("<IQQ", version, 0, len(pairs) if keys is None else keys) + b"".join(pairs)


def kv(key: str, kind: int, payload: bytes) -> bytes:
    return gguf_string(key) + struct.pack("<I", kind) + payload


def kv_array(key: str, element: int, count: int, payload: bytes = b"") -> bytes:
    return kv(key, 9, struct.pack("<IQ", element, count) + payload)


MODEL_GPT2 = kv("tokenizer.ggml.model", 8, gguf_string("gpt2"))
MODEL_LLAMA = kv("tokenizer.ggml.model", 8, gguf_string("llama"))
TOKENS = kv_array("tokenizer.ggml.tokens", 8, 3, b"".join(gguf_string(t) for t in ["<unk>", "a", "b"]))


@pytest.mark.parametrize("name, pairs, keys, message", [
    ("strings", [MODEL_GPT2, kv_array("tokenizer.ggml.tokens", 8, 1 << 60)], None, "claims 1,152,921,504,606,846,976 entries"),
    ("bytes", [MODEL_GPT2, kv_array("general.blob", 0, 1 << 60)], None, "general.blob claims 1,152,921,504,606,846,976 entries"),
    ("token bytes", [MODEL_GPT2, kv_array("tokenizer.ggml.tokens", 0, 1 << 60)], None,
     "tokenizer.ggml.tokens is an array of uint8s, not an array of strings"),
    ("floats", [MODEL_GPT2, TOKENS, kv_array("tokenizer.ggml.scores", 6, 1 << 60)], None, "claims"),
    ("other key", [kv_array("general.tags", 12, 1 << 60), MODEL_GPT2], None, "general.tags claims"),
    ("nested", [MODEL_GPT2, kv_array("tokenizer.ggml.tokens", 9, 1 << 40, struct.pack("<IQ", 9, 1 << 40))], None,
     "is an array of arrays, not an array of strings"),
    ("nested elsewhere", [kv_array("general.x", 9, 1 << 40, struct.pack("<IQ", 9, 1 << 40) * 3), MODEL_GPT2], None,
     "general.x"),
    ("keys", [MODEL_GPT2], 1 << 60, "the key count claims"),
    ("string", [kv("tokenizer.ggml.model", 8, struct.pack("<Q", 1 << 62))], None, "claims"),
    ("pre as array", [MODEL_GPT2, TOKENS, kv_array("tokenizer.ggml.pre", 8, 1, gguf_string("gpt-2"))], None,
     "tokenizer.ggml.pre is an array of strings, not a string"),
    ("bos as string", [MODEL_LLAMA, TOKENS, kv("tokenizer.ggml.bos_token_id", 8, gguf_string("1"))], None,
     "tokenizer.ggml.bos_token_id is a string, not a whole number"),
    ("bos far", [MODEL_GPT2, TOKENS, kv("tokenizer.ggml.bos_token_id", 10, struct.pack("<Q", 1 << 40))], None,
     "bos_token_id is 1,099,511,627,776, not one of the 3 token ids"),
    ("scores as strings", [MODEL_LLAMA, TOKENS, kv_array("tokenizer.ggml.scores", 8, 3, gguf_string("x") * 3)], None,
     "tokenizer.ggml.scores is an array of strings, not an array of numbers"),
    ("truncated", [MODEL_GPT2, TOKENS[:-3]], None, "runs past the end of the file"),
    ("truncated header", [MODEL_GPT2[:-3]], None, "the string tokenizer.ggml.model claims 4"),
    ("not utf-8", [MODEL_GPT2, kv_array("tokenizer.ggml.tokens", 8, 1, gguf_string(b"\xff"))], None, "not UTF-8"),
])
def test_crafted_gguf_metadata_is_refused_in_one_line(tmp_path, name, pairs, keys, message):
    path = tmp_path / "crafted.gguf"
    path.write_bytes(gguf(*pairs, keys=keys))
    err = load_bounded(path)
    assert message in err and str(path) in err


def test_a_llama_gguf_without_an_unknown_token_is_refused_before_its_strings_are_decoded(tmp_path):
    # a crafted file of two million tokens took 5 s and 387 MB to be refused; here the second
    # token is not UTF-8, which decoding the strings would find first
    tokens = kv_array("tokenizer.ggml.tokens", 8, 2, gguf_string("a") + gguf_string(b"\xff"))
    types = kv_array("tokenizer.ggml.token_type", 5, 2, struct.pack("<2i", 1, 1))
    path = tmp_path / "no_unknown.gguf"
    path.write_bytes(gguf(MODEL_LLAMA, tokens, types))
    err = load_bounded(path)
    assert err.endswith("a 'llama' vocabulary needs an unknown token (type 2)") and str(path) in err


def test_a_small_gguf_vocabulary_still_loads(tmp_path):
    types = kv_array("tokenizer.ggml.token_type", 5, 3, struct.pack("<3i", 2, 1, 1))
    scores = kv_array("tokenizer.ggml.scores", 6, 3, struct.pack("<3f", 0, -1, -2))
    bos = kv("tokenizer.ggml.bos_token_id", 4, struct.pack("<I", 0))
    path = tmp_path / "small.gguf"
    no_prefix = kv("tokenizer.ggml.add_space_prefix", 7, b"\x00")
    path.write_bytes(gguf(MODEL_LLAMA, TOKENS, types, scores, bos, no_prefix, kv("general.name", 8, gguf_string("x"))))
    tok = load_tokenizer(path)
    assert tok.n_vocab == 3 and tok.encode("ab").ids == [1, 2]


# --- nesting, devices, FIFOs ----------------------------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("layout", ["tokenizer.json", "tokenizer_config.json", "tekken", "encoder.json"])
def test_deeply_nested_json_is_one_line_not_a_recursion_error(tmp_path, layout):
    path = tmp_path / "tokenizer.json"
    if layout == "tokenizer.json":
        path.write_text('{"normalizer": null, "model": ' + DEEP + "}", "utf-8")
    elif layout == "tokenizer_config.json":
        path.write_text(json.dumps(tokenizer_json()), "utf-8")
        (tmp_path / "tokenizer_config.json").write_text('{"bos_token": ' + DEEP + "}", "utf-8")
    elif layout == "tekken":
        path = tmp_path / "tekken.json"
        path.write_text('{"config": {}, "vocab": [], "x": ' + DEEP + "}", "utf-8")
    else:
        path = tmp_path / "encoder.json"
        path.write_text('{"a": ' + DEEP + "}", "utf-8")
        (tmp_path / "vocab.bpe").write_text("#version: 0.2\n", "utf-8")
    with pytest.raises(TokexplorerError, match="nested too deeply"):
        load_tokenizer(path)


@pytest.mark.parametrize("kind", ["tokenizer", "text"])
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_refused_before_it_is_read(kind, device):
    err = load_bounded(Path(device), kind, timeout=30)
    assert f"{device} is a character device, not a regular file" in err


@pytest.mark.parametrize("kind", ["tokenizer", "text"])
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path, kind):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert "is a named pipe (FIFO), not a regular file" in load_bounded(fifo, kind, timeout=30)


def test_a_socket_and_a_symbolic_link_loop_are_named(tmp_path, monkeypatch):
    # they were "cannot read sock: No such device or address" and "unknown tokenizer 'loop'"
    import socket

    monkeypatch.chdir(tmp_path)  # (a socket's path has at most 107 bytes)
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind("sock")
        for name in ("sock", str(tmp_path / "sock")):
            with pytest.raises(TokexplorerError, match=r"sock is a socket, not a regular file; give a tokenizer file"):
                load_tokenizer(name)
    os.symlink("loop2", "loop")
    os.symlink("loop", "loop2")
    for name in ("loop", str(tmp_path / "loop")):
        with pytest.raises(TokexplorerError, match=r"^cannot read .*loop: too many levels of symbolic links"):
            load_tokenizer(name)


def test_a_fifo_beside_a_tokenizer_json_is_refused_too(tmp_path):
    (tmp_path / "tokenizer.json").write_text(json.dumps(tokenizer_json()), "utf-8")
    os.mkfifo(tmp_path / "tokenizer_config.json")
    assert "named pipe" in load_bounded(tmp_path / "tokenizer.json", timeout=30)


# --- what the library refuses while encoding, and what a file may not ask -------------------------

@pytest.mark.parametrize("model", [
    {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
     "max_input_chars_per_word": 100, "vocab": {"a": 0}},
    {"type": "WordLevel", "unk_token": "[UNK]", "vocab": {"a": 0}},
    {"type": "Unigram", "unk_id": None, "vocab": [], "byte_fallback": False},
])
def test_a_model_without_its_unknown_token_refuses_text_in_one_line(tmp_path, model):
    spec = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None, "model": model}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec), "utf-8")
    tok = load_tokenizer(path)
    with pytest.raises(TokexplorerError, match="tokenizers cannot encode this text"):
        tok.encode("b c")


def test_a_tokenizer_json_that_asks_to_truncate_still_encodes_the_whole_text(tmp_path):
    spec = tokenizer_json() | {"truncation": {"direction": "Right", "max_length": 1,
                                              "strategy": "LongestFirst", "stride": 0}}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec), "utf-8")
    assert load_tokenizer(path).encode("abc").ids == [97, 98, 99]


def test_a_split_pattern_that_gives_up_is_one_line(tmp_path):
    path = tmp_path / "backtracks.model"
    path.write_text("minbpe v1\n(?:a|a)*(?=c)|[\\s\\S]\n0\n97 97\n", "utf-8")
    tok = load_tokenizer(path)
    with pytest.raises(TokexplorerError, match="the split pattern gave up on this text"):
        tok.encode("a" * 40 + "b")


@pytest.mark.parametrize("normalizer, message", [
    ({"type": "Replace", "pattern": {"String": ""}, "content": "a"}, "replaces an empty string"),
    ({"type": "Sequence", "normalizers": [{"type": "Replace", "pattern": {"Regex": "x*"}, "content": "ab"}]},
     "which matches the empty string"),
    ({"type": "Prepend", "prepend": ""}, "prepends an empty string"),
])
def test_a_normalizer_the_library_panics_on_is_refused_when_loaded(tmp_path, normalizer, message):
    # tokenizers' core indexes past the end of the text for these, and prints its panic on stderr
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(tokenizer_json() | {"normalizer": normalizer}), "utf-8")
    with pytest.raises(TokexplorerError, match=message):
        load_tokenizer(path)


@pytest.mark.parametrize("line", ["97 \u00b2", "<x> " + "9" * 5000])
def test_minbpe_numbers_python_cannot_read_are_one_short_line(tmp_path, line):
    # '²' is a digit to str.isdigit but not to int(); int() refuses more than 4,300 digits
    path = tmp_path / "odd.model"
    n_special = "1" if line.startswith("<x>") else "0"
    path.write_text(f"minbpe v1\n\n{n_special}\n{line}\n", "utf-8")
    with pytest.raises(TokexplorerError, match="line 4 should be") as refused:
        load_tokenizer(path)
    assert len(str(refused.value)) < 400


# --- text encodings -------------------------------------------------------------------------------

def byte_level_tokenizer_json() -> str:
    """A tokenizer.json of the 256 byte tokens (GPT-2's byte-to-character map), no merges."""
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return json.dumps({"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
                       "normalizer": None, "pre_tokenizer": byte_level, "post_processor": None,
                       "decoder": byte_level, "model": {"type": "BPE", "vocab": gpt2_byte_decoder(), "merges": []}})


TIKTOKEN_BYTES = "".join(f"{base64.b64encode(bytes([i])).decode()} {i}\n" for i in range(256))
TEXT_FORMATS = [("tokenizer.json", byte_level_tokenizer_json()), ("bytes.tiktoken", TIKTOKEN_BYTES),
                ("m.model", "minbpe v1\n\n0\n104 105\n")]


@pytest.mark.parametrize("name, text", TEXT_FORMATS)
def test_a_text_tokenizer_file_with_a_utf8_byte_order_mark_loads(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, "utf-8-sig")  # it was "unrecognised tokenizer format"
    tok = load_tokenizer(path)
    assert tok.decode(tok.encode("hi there").ids) == "hi there"
    assert len(tok.encode("hi there").ids) == (7 if name == "m.model" else 8)  # minbpe merged h+i


@pytest.mark.parametrize("name, text", TEXT_FORMATS)
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_a_utf16_tokenizer_file_is_named_utf16(tmp_path, name, text, encoding):
    path = tmp_path / name
    path.write_text(text, encoding)
    with pytest.raises(TokexplorerError, match="is UTF-16 text; tokenizer files are UTF-8: save it as UTF-8"):
        load_tokenizer(path)
