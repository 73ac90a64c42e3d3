"""SentencePiece training through the `sentencepiece` library: BPE or unigram, in memory.

The default options are the Llama 2 recipe as the lecture gives it (identity normalisation, byte
fallback, split digits, dummy prefix, unk/bos/eos = 0/1/2, no pad, ...); every option is a plain
dict entry a caller or the GUI can show and change before training. Sentences come from memory or
a file and the model comes back in memory: nothing is written to the working directory, and
`save_sentencepiece` writes PREFIX.model / PREFIX.vocab (together, atomically) only when asked.

Progress: the library trains in C++ without callbacks, so progress is reported while it reads the
sentences (done, total) and once more when the model is ready. It does not implement the
algorithms itself (see `training.bpe` for byte-level BPE).
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Callable, Iterable

from typing import TYPE_CHECKING

from tokexplorer.core.files.textfile import write_set
from tokexplorer.core.tokenizer import TokexplorerError

if TYPE_CHECKING:  # (the library loads on use: the window imports this module for the options)
    from tokexplorer.core.backends.sentencepiece_family import SentencePieceTokenizer

# The lecture's "best effort" Llama 2 options (vocab_size and model_type given separately).
LLAMA2_OPTIONS: dict[str, object] = {
    "normalization_rule_name": "identity",
    "remove_extra_whitespaces": False,
    "input_sentence_size": 200_000_000,
    "max_sentence_length": 4192,
    "seed_sentencepiece_size": 1_000_000,
    "shuffle_input_sentence": True,
    "character_coverage": 0.99995,
    "byte_fallback": True,
    "split_digits": True,
    "split_by_unicode_script": True,
    "split_by_whitespace": True,
    "split_by_number": True,
    "max_sentencepiece_length": 16,
    "add_dummy_prefix": True,
    "allow_whitespace_only_pieces": True,
    "unk_id": 0,
    "bos_id": 1,
    "eos_id": 2,
    "pad_id": -1,
}

Progress = Callable[[int, int], None]


def llama2_options(vocab_size: int, model_type: str = "bpe", **overrides: object) -> dict[str, object]:
    """The Llama 2 preset for a vocab size, with any option changed.

    >>> opts = llama2_options(400, byte_fallback=False)
    >>> opts["model_type"], opts["vocab_size"], opts["byte_fallback"], opts["split_digits"]
    ('bpe', 400, False, True)
    """
    if model_type not in ("bpe", "unigram"):
        raise TokexplorerError(f"unknown SentencePiece model type {model_type!r}; use bpe or unigram")
    return {"model_type": model_type, "vocab_size": vocab_size, **LLAMA2_OPTIONS, **overrides}


def parse_option(key: str, value: str) -> object:
    """An option's value typed from text like the Llama 2 preset's default for `key` (booleans
    from true/false, numbers as such); an option outside the preset keeps bool/int/float/text.

    >>> parse_option("byte_fallback", "False"), parse_option("character_coverage", "1")
    (False, 1.0)
    >>> parse_option("normalization_rule_name", "nfkc"), parse_option("seed", "7")
    ('nfkc', 7)
    """
    text = value.strip()
    default = LLAMA2_OPTIONS.get(key)
    if isinstance(default, str):
        return text
    if isinstance(default, bool) or (default is None and text.lower() in ("true", "false")):
        if text.lower() not in ("true", "false"):
            raise TokexplorerError(f"SentencePiece option {key} is true or false, not {value!r}")
        return text.lower() == "true"
    for kind in ((type(default),) if isinstance(default, (int, float)) else (int, float)):
        try:
            return kind(text)
        except ValueError:
            if default is not None:
                raise TokexplorerError(
                    f"SentencePiece option {key} is a number ({kind.__name__}), not {value!r}") from None
    return text


def train_sentencepiece(
    sentences: Iterable[str] | str,
    options: dict[str, object],
    *,
    name: str = "trained-sp",
    progress: Progress | None = None,
) -> SentencePieceTokenizer:
    """Train on sentences (a string is split into lines) with these options; nothing is written.

    >>> tok = train_sentencepiece("hello world\\nhello there\\n" * 20, llama2_options(270))
    >>> tok.n_vocab, tok.options["byte_fallback"], tok.pieces[259:262]
    (270, True, ['he', 'll', 'l'])
    """
    import sentencepiece as spm

    from tokexplorer.core.backends.sentencepiece_family import SentencePieceTokenizer

    lines = sentences.splitlines() if isinstance(sentences, str) else list(sentences)
    lines = [line for line in lines if line]
    if not lines:
        raise TokexplorerError("the corpus is empty; give some text to train on")
    forbidden = {"input", "model_prefix", "sentence_iterator", "model_writer"} & set(options)
    if forbidden:
        raise TokexplorerError(
            f"option(s) {', '.join(sorted(forbidden))} are set by tokexplorer (it trains in memory); "
            "remove them"
        )
    total = len(lines)

    def feed():
        for done, line in enumerate(lines, 1):
            if progress is not None and (done % 10_000 == 0 or done == total):
                progress(done, total)
            yield line

    model = io.BytesIO()
    settings = {"num_threads": os.cpu_count() or 1, "minloglevel": 2, **options}
    try:
        spm.SentencePieceTrainer.train(sentence_iterator=feed(), model_writer=model, **settings)
    except (RuntimeError, ValueError) as exc:
        raise TokexplorerError(f"SentencePiece cannot train with these options: {_reason(str(exc))}") from None
    return SentencePieceTokenizer(model.getvalue(), name=name, source="trained here",
                                  description=f"SentencePiece {options.get('model_type', 'unigram')}")


SAMPLE_BYTES = 1 << 20  # the summary counts tokens of at most this much of the corpus
SAMPLE_PIECE = 1 << 16  # ... encoded this many bytes (whole lines) at a time


def count_sample(tok, text: str, *, limit: int | None = None) -> tuple[int, int]:
    """(bytes counted, tokens): the tokens of the text's first `limit` bytes (cut at a line end),
    for a summary after training. Encoding a whole big corpus takes as long as training it (183 s
    against 16.6 s of training on 200 MB, most of it in one uninterruptible call): a sample is
    counted instead, in pieces of whole lines, so Ctrl-C stops it within one piece. Each piece is
    encoded on its own, as SentencePiece reads sentences (a dummy prefix per piece).

    >>> tok = train_sentencepiece("hello world\\nhello there\\n" * 20, llama2_options(270))
    >>> n, tokens = count_sample(tok, "hello world\\n" * 3, limit=24)  # two lines of three
    >>> n, tokens == len(tok.encode_ids("hello world\\n" * 2))
    (24, True)
    """
    limit = SAMPLE_BYTES if limit is None else limit
    counted = tokens = 0
    start = 0
    while start < len(text) and counted < limit:
        budget = min(SAMPLE_PIECE, limit - counted)  # bytes
        piece = text[start:start + budget]  # as many code points: that many bytes or more
        data = piece.encode("utf-8")
        if len(data) > budget:
            piece = data[:budget].decode("utf-8", "ignore")
        if start + len(piece) < len(text):  # whole lines, unless a line is longer than a piece
            cut = piece.rfind("\n") + 1
            if cut:
                piece = piece[:cut]
            elif counted and budget < SAMPLE_PIECE:
                break  # the sample ends where the last line that fits ends
        if not piece:
            break
        counted += len(piece.encode("utf-8"))
        tokens += len(tok.encode_ids(piece, allowed_special="none"))
        start += len(piece)
    return counted, tokens


def _reason(message: str) -> str:
    """SentencePiece's error in the command line's words: no source location, a failed check as
    the condition on `--option NAME=…`, and the option names the user typed.

    >>> _reason("INTERNAL: src/t.cc(94) [trainer_spec.character_coverage() >= 0.98] ")
    'the option must satisfy character_coverage >= 0.98 (set it with --option character_coverage=…)'
    >>> _reason('INVALID_ARGUMENT: cannot parse "maybe" as bool.')
    'cannot parse "maybe" as bool.'
    >>> _reason("Vocabulary size too high (100000). Please set it to a value <= 18351.")
    'vocab size too high (100000) for this corpus: use --vocab-size 18351 or less'
    >>> _reason('unknown field name "no_such" in TrainerSpec.')
    'no option no_such: --option takes the names --show-options lists'
    >>> _reason("Vocabulary size is smaller than required_chars. 2000 vs 4507. Increase vocab_size "
    ...         "or decrease character_coverage with --character_coverage option.")
    'the corpus has 4507 characters to cover, more than the vocab size 2000: use --vocab-size 4507 or more, or cover fewer characters with --option character_coverage=0.99'
    """
    import re

    head, sep, tail = message.partition("] ")
    text = tail.strip() if sep and tail.strip() else message.strip()
    check = None if sep and tail.strip() else re.search(r"\[(.*)\]", message)
    if check:
        condition = check.group(1).replace("trainer_spec.", "").replace("normalizer_spec.", "").replace("()", "")
        name = re.match(r"\w+", condition)
        hint = f" (set it with --option {name.group(0)}=…)" if name and name.group(0) != "vocab_size" else ""
        return f"the option must satisfy {condition}{hint}"
    text = re.sub(r"^[A-Z_]+: ", "", text)
    too_high = re.search(r"Vocabulary size too high \((\d+)\)\. Please set it to a value <= (\d+)", text)
    if too_high:
        return (f"vocab size too high ({too_high.group(1)}) for this corpus: use --vocab-size "
                f"{too_high.group(2)} or less")
    too_few = re.search(r"smaller than required_chars\. (\d+) vs (\d+)", text)
    if too_few:
        return (f"the corpus has {too_few.group(2)} characters to cover, more than the vocab size "
                f"{too_few.group(1)}: use --vocab-size {too_few.group(2)} or more, or cover fewer "
                "characters with --option character_coverage=0.99")
    unknown = re.search(r'unknown field name "(\w+)"', text)
    if unknown:
        return f"no option {unknown.group(1)}: --option takes the names --show-options lists"
    return text or "no reason given"


def vocab_text(tok: SentencePieceTokenizer) -> str:
    """SentencePiece's `.vocab` listing: "piece<TAB>score" per id.

    >>> tok = train_sentencepiece("ab ab ab\\n" * 5, llama2_options(8, byte_fallback=False))
    >>> vocab_text(tok).splitlines()[3:5]
    ['ab\\t-0', '\u2581ab\\t-1']
    """
    return "".join(f"{piece}\t{tok.score(i):g}\n" for i, piece in enumerate(tok.pieces))


def sentencepiece_files(tok: SentencePieceTokenizer, prefix: str | os.PathLike) -> dict[Path, bytes]:
    """PREFIX.model and PREFIX.vocab: path -> content (nothing written)."""
    return {Path(f"{os.fspath(prefix)}.model"): tok.model_proto,
            Path(f"{os.fspath(prefix)}.vocab"): vocab_text(tok).encode("utf-8")}


def save_sentencepiece(tok: SentencePieceTokenizer, prefix: str | os.PathLike) -> list[Path]:
    """Write PREFIX.model and PREFIX.vocab (together or not at all); return their paths."""
    files = sentencepiece_files(tok, prefix)
    write_set(files)
    return list(files)
