"""minbpe's `.model` / `.vocab` files, and `.tiktoken` and GPT-2 files of trained tokenizers.

The `.model` format is minbpe's (version 1), so models move both ways between minbpe and here:
the line "minbpe v1", the split pattern (an empty line for Basic), the number of special tokens,
one "token id" line per special token, then one "id1 id2" line per merge in the order learned
(merge i makes id 256 + i). The `.vocab` file is minbpe's human-readable listing: "[token] id" for
bytes and "[left][right] -> [token] id" for merges, each token decoded with U+FFFD for broken UTF-8
and control characters escaped as \\uXXXX. minbpe never reads it back and neither do we: it is lossy.
`.tiktoken` is one "base64(token) rank" line per byte or merged token. GPT-2's pair is
`encoder.json` (token, spelt in GPT-2's printable byte alphabet -> id) and `vocab.bpe` (a version
line, then the merges in order, "left right" in the same alphabet).

Every write is atomic, and the files of one output are written together (`write_files`). What minbpe's reader would get wrong (a pattern spanning lines or with
leading or trailing spaces, a special token containing whitespace) is refused before writing.
A file cut at a line boundary cannot be told from a shorter model (the format has no merge count);
one cut mid-line lacks its last line end, and is refused like anything else truncated or corrupt. It does not train or encode.
"""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path
from typing import NamedTuple

from tokexplorer.core.backends.trained_bpe import BPETokenizer
from tokexplorer.core.patterns import compile_pattern
from tokexplorer.core.files.textfile import write_set
from tokexplorer.core.tokenizer import MAX_SPECIAL_GAP, TokexplorerError

MAGIC = "minbpe v1"


class ModelParts(NamedTuple):
    """What a `.model` and a `.vocab` hold of a tokenizer: its merges (pair -> new id, in the order
    learned), every token's bytes (id -> bytes), its split pattern and special tokens. A
    BPETokenizer has the same four attributes; `model_parts` makes them for merges just learned,
    without building one (`tokexplorer train` only writes its model: the checks and the encoder
    a tokenizer builds would cost it more than its files)."""

    merges: dict[tuple[int, int], int]
    vocab: dict[int, bytes]
    split_pattern: str | None
    special_tokens: dict[str, int]


def model_parts(merges: dict[tuple[int, int], int], pattern: str | None,
                special_tokens: dict[str, int]) -> ModelParts:
    """The parts of a model from merges that follow each other (merge i makes 256 + i from known ids).

    >>> parts = model_parts({(104, 105): 256}, None, {"<|end|>": 257})
    >>> parts.vocab[256], parts.vocab[257]
    (b'hi', b'<|end|>')
    """
    vocab = [bytes([i]) for i in range(256)]  # id -> bytes
    for a, b in merges:
        vocab.append(vocab[a] + vocab[b])
    for token, token_id in special_tokens.items():  # (below the merges: `assign_special_ids` refuses)
        if token_id > len(vocab) + MAX_SPECIAL_GAP:
            raise TokexplorerError(f"special token {token!r} has id {token_id:,}; special ids run from "
                                   f"{len(vocab)} to {len(vocab) + MAX_SPECIAL_GAP:,} here")
    by_id = dict(enumerate(vocab))
    by_id.update((i, token.encode("utf-8")) for token, i in special_tokens.items())
    return ModelParts(merges, by_id, pattern, dict(special_tokens))


def is_minbpe_model(head: bytes) -> bool:
    """Whether a file's first bytes are a minbpe `.model`.

    >>> is_minbpe_model(b"minbpe v1\\n\\n0\\n")
    True
    """
    return head.startswith(MAGIC.encode()) and head[len(MAGIC):len(MAGIC) + 1] in (b"\n", b"\r")


def model_text(tok: BPETokenizer | ModelParts) -> str:
    """The `.model` file's text for a tokenizer.

    >>> print(model_text(BPETokenizer({(104, 105): 256}, None, {"<|end|>": 257})), end="")
    minbpe v1
    <BLANKLINE>
    1
    <|end|> 257
    104 105
    """
    pattern = tok.split_pattern or ""
    if "\n" in pattern or "\r" in pattern or pattern != pattern.strip():
        raise TokexplorerError(
            "minbpe's .model keeps the split pattern on one line and strips its ends; this pattern "
            f"({pattern!r}) has a line break or leading/trailing whitespace: write it with \\n, "
            "\\s or a character class instead"
        )
    lines = [MAGIC, pattern, str(len(tok.special_tokens))]
    for token, token_id in tok.special_tokens.items():
        if not token or any(c.isspace() for c in token):
            raise TokexplorerError(
                f"special token {token!r} contains whitespace; minbpe's .model cannot store it"
            )
        lines.append(f"{token} {token_id}")
    lines += [f"{a} {b}" for a, b in tok.merges]
    return "\n".join(lines) + "\n"


def render_token(data: bytes) -> str:
    """A token as the `.vocab` file shows it: broken UTF-8 as U+FFFD, controls escaped.

    >>> render_token(b"a\\n\\xe2")
    'a\\\\u000a\\ufffd'
    """
    text = data.decode("utf-8", errors="replace")
    if text.isprintable():  # most tokens: every category C character is unprintable
        return text
    return _escaped(text)


def _escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c).startswith("C") else c
                   for c in text)


def vocab_text(tok: BPETokenizer | ModelParts) -> str:
    """The `.vocab` file's text: every token, merges shown with their two parts.

    >>> vocab_text(BPETokenizer({(104, 105): 256}, None)).splitlines()[-1]
    '[h][i] -> [hi] 256'
    """
    # each token rendered once (render_token's two steps, without a Python call for most tokens),
    # into a list by id: the bytes and the merged tokens are ids 0 to 255 + merges
    texts = [tok.vocab[i].decode("utf-8", errors="replace") for i in range(256 + len(tok.merges))]
    shown = [t if t.isprintable() else _escaped(t) for t in texts]
    lines = [f"[{shown[i]}] {i}" for i in range(256)]
    lines += [f"[{shown[a]}][{shown[b]}] -> [{shown[new]}] {new}" for (a, b), new in tok.merges.items()]
    lines += [f"[{render_token(tok.vocab[i])}] {i}" for i in tok.special_tokens.values()]
    return "\n".join(lines) + "\n"


def minbpe_files(tok: BPETokenizer | ModelParts, prefix: str | os.PathLike) -> dict[Path, bytes]:
    """PREFIX.model and PREFIX.vocab: path -> content (nothing written)."""
    model = model_text(tok).encode("utf-8")  # checked before anything is written
    return {Path(f"{os.fspath(prefix)}.model"): model,
            Path(f"{os.fspath(prefix)}.vocab"): vocab_text(tok).encode("utf-8")}


def save_minbpe(tok: BPETokenizer, prefix: str | os.PathLike) -> list[Path]:
    """Write PREFIX.model and PREFIX.vocab (together or not at all); return their paths."""
    files = minbpe_files(tok, prefix)
    write_set(files)
    return list(files)


def parse_minbpe_model(data: bytes, *, source: str = "the model", name: str = "minbpe") -> BPETokenizer:
    """A tokenizer from a `.model` file's bytes.

    >>> parse_minbpe_model(b"minbpe v1\\n\\n0\\n104 105\\n").merges
    {(104, 105): 256}
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TokexplorerError(f"{source}: not a minbpe .model (byte {exc.start} is not UTF-8)") from None
    from tokexplorer.core.files.file_budget import check_made_tokens, check_token_count

    # one merge or special token a line: counted before the text is split into lines
    check_token_count(data.count(b"\n") - 3, source=source, what="lines of merges")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif text.startswith(MAGIC):
        # minbpe (and we) end every line with "\n": a last line without one was cut mid-line.
        raise TokexplorerError(
            f"{source}: line {len(lines)} ({lines[-1]!r}) has no line end: the file was cut "
            "mid-line; the minbpe .model is truncated"
        )
    lines = [line.rstrip("\r") for line in lines]

    def corrupt(lineno: int, what: str) -> TokexplorerError:
        if len(what) > 160:  # a crafted line may be megabytes: the message stays a line
            what = what[:150] + "…'"
        return TokexplorerError(
            f"{source}: line {lineno} {what}; the minbpe .model is truncated or corrupt"
        )

    if not lines or lines[0].strip() != MAGIC:
        raise TokexplorerError(f"{source}: not a minbpe .model (the first line must be {MAGIC!r})")
    if len(lines) < 3:
        raise corrupt(len(lines) + 1, "is missing (the pattern and the special-token count)")
    pattern = lines[1].strip() or None
    if pattern is not None:
        compile_pattern(pattern)
    try:
        n_special = int(lines[2])
        if n_special < 0:
            raise ValueError
    except ValueError:
        raise corrupt(3, f"should be the number of special tokens, not {lines[2]!r}") from None
    if len(lines) < 3 + n_special:
        raise corrupt(len(lines) + 1, f"is missing: {n_special} special tokens were announced")
    specials: dict[str, int] = {}
    for lineno in range(4, 4 + n_special):
        fields = lines[lineno - 1].split()
        if len(fields) != 2 or not _number(fields[1]):
            raise corrupt(lineno, f"should be 'token id', not {lines[lineno - 1]!r}")
        specials[fields[0]] = int(fields[1])
    merges: dict[tuple[int, int], int] = {}
    # subtle: the file lists merges, not tokens, and a merge of a token with itself doubles it
    # (forty such lines would make a token of a terabyte): each token's length is added up from
    # its parts' before any token is built, and bounded.
    lengths = [1] * 256  # id -> the token's length in bytes
    total = 256
    for lineno in range(4 + n_special, len(lines) + 1):
        fields = lines[lineno - 1].split()
        if len(fields) != 2 or not all(map(_number, fields)):
            raise corrupt(lineno, f"should be a merge 'id1 id2', not {lines[lineno - 1]!r}")
        a, b = int(fields[0]), int(fields[1])
        new = 256 + len(merges)
        if a >= new or b >= new:
            raise corrupt(lineno, f"merges ({a}, {b}) although only ids below {new} exist yet")
        merges[(a, b)] = new
        lengths.append(lengths[a] + lengths[b])
        total += lengths[-1]
        check_made_tokens(lengths, total, source=source, where=f"line {lineno}")
    for token, token_id in specials.items():
        if token_id < 256 + len(merges):
            raise TokexplorerError(
                f"{source}: special token {token!r} has id {token_id}, the id of a byte or merged "
                "token; the model is corrupt"
            )
    return BPETokenizer(merges, pattern, specials, name=name, source=source,
                        description="minbpe " + ("Regex" if pattern else "Basic") + " model")


def _number(field: str) -> bool:
    """Whether a field is a whole number int() reads: ASCII digits, at most 4,000 (str.isdigit also
    takes '²', which int() refuses, and int() refuses more than 4,300 digits). Its size is checked
    where it is used.

    >>> _number("257"), _number("²"), _number("9" * 5000)
    (True, False, False)
    """
    return field.isascii() and field.isdigit() and len(field) <= 4000


def load_minbpe_model(path: Path, data: bytes | None = None) -> BPETokenizer:
    """Read a minbpe `.model` file (the registry's loader for the format)."""
    if data is None:
        from tokexplorer.core.files.file_budget import read_limited

        data = read_limited(path, what="minbpe .model")
    return parse_minbpe_model(data, source=str(path), name=Path(path).stem)


def tiktoken_text(tok: BPETokenizer) -> str:
    """The `.tiktoken` file's text: one "base64(token) rank" line per byte or merged token.

    >>> tiktoken_text(BPETokenizer({(104, 105): 256}, None)).splitlines()[-1]
    'aGk= 256'
    """
    import base64  # (here: `tokexplorer train` writes no .tiktoken unless asked)

    return "".join(f"{base64.b64encode(token).decode()} {rank}\n"
                   for token, rank in sorted(tok.mergeable_ranks.items(), key=lambda kv: kv[1]))


def tiktoken_file(tok: BPETokenizer, path: str | os.PathLike) -> dict[Path, bytes]:
    """The `.tiktoken` file: path -> content (nothing written)."""
    if len(tok.mergeable_ranks) != 256 + len(tok.merges):
        raise TokexplorerError(
            f"{tok.name} has two tokens with the same bytes; a .tiktoken file cannot hold it"
        )
    return {Path(path): tiktoken_text(tok).encode("ascii")}


def save_tiktoken(tok: BPETokenizer, path: str | os.PathLike) -> Path:
    """Write a `.tiktoken` file (atomically). Its split pattern and special tokens are not kept."""
    write_set(tiktoken_file(tok, path))
    return Path(path)


def gpt2_files(tok: BPETokenizer, folder: str | os.PathLike) -> dict[Path, bytes]:
    """`encoder.json` and `vocab.bpe` in a folder: path -> content (nothing written).

    Bytes keep ids 0..255 and merge i makes 256 + i, as here; special tokens are added to the
    encoder as GPT-2's <|endoftext|> is. The split pattern is not stored (readers assume GPT-2's).
    """
    if len(tok.mergeable_ranks) != 256 + len(tok.merges):
        raise TokexplorerError(
            f"{tok.name} has two tokens with the same bytes; GPT-2's files cannot hold it"
        )
    from tokexplorer.core.backends.tiktoken_family import gpt2_byte_decoder  # only here: saving minbpe files needs no tiktoken

    spell = {b: c for c, b in gpt2_byte_decoder().items()}

    def word(data: bytes) -> str:
        return "".join(spell[b] for b in data)

    encoder = {word(token): rank for token, rank in tok.mergeable_ranks.items()}
    encoder.update(tok.special_tokens)
    merges = "".join(f"{word(tok.vocab[a])} {word(tok.vocab[b])}\n" for a, b in tok.merges)
    out = Path(folder)
    return {out / "encoder.json": json.dumps(encoder, ensure_ascii=False).encode("utf-8"),
            out / "vocab.bpe": ("#version: 0.2\n" + merges).encode("utf-8")}


def save_gpt2(tok: BPETokenizer, folder: str | os.PathLike) -> list[Path]:
    """Write `encoder.json` and `vocab.bpe` into a folder (created if needed; both or neither)."""
    files = gpt2_files(tok, folder)
    write_files(files)
    return list(files)


def write_files(files: dict[Path, bytes]) -> None:
    """Write a set of output files together (`write_set`), creating missing folders first and
    removing the ones it created if the set cannot be written."""
    created: list[Path] = []
    try:
        for folder in dict.fromkeys(p.parent for p in files):
            if not folder.is_dir():
                try:
                    folder.mkdir(parents=True)
                except OSError as exc:
                    raise TokexplorerError(f"cannot create the folder {folder}: {exc.strerror}") from None
                created.append(folder)
        write_set(files)
    except BaseException:
        for folder in reversed(created):
            try:
                folder.rmdir()
            except OSError:
                pass
        raise
