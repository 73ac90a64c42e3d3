"""Memory budgets of what holds a whole text (the commands and the window's worker), in one place;
no imports, so the command line's help states them without loading any tokenizer code.

A budget is the input a command takes without being asked: above it the command refuses, before
reading or encoding, with the memory that would be needed and the flag (`--max-mb`) that goes on
anyway. Peaks were measured with `/usr/bin/time -f %M` on non-repeating text (10 to 255 MB).
"""
# A tokenizer that must see a text whole (core/streaming.py) takes at most this at its peak without
# asking; the characters that fit depend on what its library returns per token, measured as bytes
# a character on 10 MB of English and of mixed scripts (the worse kept): a Hugging Face pipeline
# keeps every token's string and offsets, SentencePiece its pieces, a tiktoken core only ids.
WHOLE_TEXT_PEAK_MB = 2000
WHOLE_TEXT_BYTES_PER_CHAR = {"tokenizers": 320, "sentencepiece": 130}
OTHER_BYTES_PER_CHAR = 90  # tiktoken cores with a pattern of their own (Qwen, Tekken), BPE made here
# BPE made here with no pattern (Basic) counts a text in pieces cut where no merge joins two bytes
# (backends/trained_bpe.py); a stretch with no such place is merged whole by the Python encoder, at
# up to this many bytes a byte of it (its lists and heap; measured on 4 MB: 120 for text with and
# without emoji, 200 for one letter repeated, where every pair waits in the heap).
BASIC_BYTES_PER_BYTE = 200

# Training corpora (MB on disk), and the peak each takes at most: base MB + per_mb x the corpus.
# BPE counts the corpus's chunks piece by piece (256 MB: 689 MB); SentencePiece keeps every sentence
# and its words, unigram most (128 MB: BPE 1,124 MB, unigram 1,973 MB). BPE with no pattern
# ("bpe-bytes", Basic; the same corpus budget as BPE) merges the whole corpus as one stream, held by
# the compiled merge loop at about 10 bytes a byte (core/training/_merge.c): measured with
# `train --vocab-size 300 -p none`, 20 MB 224 MB, 50 MB 501 MB, 200 MB 1,958 MB (2,056 MB with
# emoji; 1,958 MB at 4,096 too). Past that its pairs add up: 20 MB at 16,384 takes 332 MB, at
# 65,536 393 MB. The pure-Python loop (an install without a compiler) takes far more: 20 MB at
# 300, 1,750 MB (its 64-bit arrays and position lists; not budgeted here).
TRAIN_LIMIT_MB = {"bpe": 256, "sentencepiece": 64}
TRAIN_PEAK_MB = {"bpe": (150, 3), "bpe-bytes": (25, 11), "sentencepiece": (150, 15), "bpe-stream": (300, 28)}
# BPE with a named pattern over files never holds the corpus (core/training/counting.py): its
# budget is on the distinct chunks (MB of their UTF-8 bytes), checked while counting; the peak is
# base MB + per_mb x the distinct chunks' MB ("bpe-stream" above: the base holds two counting
# workers). Measured at 32,768, GPT-4 pattern, source code and docs: 100 MB has 4.9 MB of distinct
# chunks (the main process peaks at 249 MB, each worker near 120 MB), 1 GB has 25.1 MB (803 MB).
TRAIN_CHUNKS_LIMIT_MB = 32


def max_mb_for(size: int) -> int:
    """The `--max-mb` that takes an input of `size` bytes (training) or characters (whole-text
    encoding): the next whole million.

    >>> max_mb_for(199_999_000), max_mb_for(200_000_000)
    (200, 201)
    """
    return size // 1_000_000 + 1


def peak_key(algorithm: str, basic: bool = False) -> str:
    """The `TRAIN_PEAK_MB` entry of a run that holds its corpus whole; `basic`: BPE with no
    pattern, which has its own.

    >>> peak_key("bpe", basic=True), peak_key("bpe"), peak_key("sentencepiece", basic=True)
    ('bpe-bytes', 'bpe', 'sentencepiece')
    """
    return "bpe-bytes" if algorithm == "bpe" and basic else algorithm


def training_peak_gb(algorithm: str, corpus_mb: float) -> float:
    """The memory training a corpus of `corpus_mb` takes at its peak, in GB; `algorithm` is a
    `TRAIN_PEAK_MB` entry (see `peak_key`).

    >>> training_peak_gb("bpe", 256), training_peak_gb("bpe-bytes", 256)
    (0.918, 2.841)
    """
    base, per_mb = TRAIN_PEAK_MB[algorithm]
    return round((base + per_mb * corpus_mb) / 1000, 3)


def training_over_budget(algorithm: str, corpus_bytes: int, limit_mb: float | None = None, *,
                         basic: bool = False) -> str | None:
    """Why a corpus of `corpus_bytes` is over the training budget (`TRAIN_LIMIT_MB`, or
    `limit_mb`), or None when it is within it; `basic`: BPE with no pattern (the same budget, a
    higher peak). The caller adds the way on that fits it.

    >>> training_over_budget("sentencepiece", 300_000_000)
    "the corpus is 300 MB, over SentencePiece training's budget of 64 MB (memory near 1.1 GB at its peak)"
    >>> training_over_budget("bpe", 300_000_000, basic=True)
    "the corpus is 300 MB, over BPE training's budget of 256 MB (memory near 2.8 GB at its peak)"
    >>> training_over_budget("bpe", 300_000_000) is None
    False
    >>> training_over_budget("bpe", 300_000_000, limit_mb=400) is None
    True
    """
    limit = TRAIN_LIMIT_MB[algorithm] if limit_mb is None else limit_mb
    size_mb = corpus_bytes / 1e6
    if size_mb <= limit:
        return None
    name = "BPE" if algorithm == "bpe" else "SentencePiece"
    return (f"the corpus is {size_mb:,.0f} MB, over {name} training's budget of {limit:g} MB "
            f"(memory near {memory_text(training_peak_gb(peak_key(algorithm, basic), limit))} at its peak)")


READ_WHOLE_LIMIT_MB = 256  # a text file read whole (not UTF-8, or --encoding): its bytes, then its str


def read_whole_over_budget(path, size: int, limit_mb: float | None = None) -> str | None:
    """The refusal of a text file of `size` bytes that must be read whole, None within the budget.

    >>> read_whole_over_budget("big.txt", 300_000_000) is not None, read_whole_over_budget("a.txt", 10)
    (True, None)
    """
    limit = READ_WHOLE_LIMIT_MB if limit_mb is None else limit_mb
    if size <= limit * 1e6:
        return None
    return (f"{path} is {size / 1e6:,.0f} MB, over the {limit:,.0f} MB a text read whole may take "
            f"(about {memory_text(3 * size / 1e9)} in memory): give a part of it, or, for a file in "
            f"UTF-16 or another encoding, save it as UTF-8 without a BOM, which encode, compare, "
            f"split and train read in blocks")


def memory_text(gb: float) -> str:
    """A peak for a message: GB to one decimal, or MB under a GB.

    >>> memory_text(2.841), memory_text(0.037)
    ('2.8 GB', '37 MB')
    """
    return f"{gb:.1f} GB" if gb >= 1 else f"{gb * 1000:.0f} MB"


def whole_text_limit(family: str) -> int:
    """Million characters a tokenizer of `family` encodes whole without asking.

    >>> [whole_text_limit(f) for f in ("tokenizers", "sentencepiece", "tiktoken")]
    [6, 15, 22]
    """
    return int(WHOLE_TEXT_PEAK_MB / WHOLE_TEXT_BYTES_PER_CHAR.get(family, OTHER_BYTES_PER_CHAR))


def whole_text_over_budget(name: str, family: str, n_chars: int, limit_m: float | None = None) -> str | None:
    """Why encoding a text of `n_chars` whole with tokenizer `name` is over its budget (its family's
    `whole_text_limit`, or `limit_m` million characters), or None. The caller adds the way on.

    >>> whole_text_over_budget("llama-sp", "sentencepiece", 40_000_000)
    'llama-sp encodes a text whole (its tokens would change where the text is cut), and this text has 40 million characters, over the 15 million that keep memory near 1.9 GB'
    """
    return _over_whole_text_limit(f"{name} encodes a text whole (its tokens would change where the text is cut)",
                                  family, n_chars, limit_m)


def whole_encoding_over_budget(name: str, family: str, n_chars: int, limit_m: float | None = None) -> str | None:
    """Why keeping every token of a text of `n_chars` (`inspect -t`: each token's bytes, spans and
    flags, the text's whole `Encoding`) is over the whole-text budget of `name`'s family, or
    `limit_m` million characters; None within it. The caller adds the way on.

    >>> whole_encoding_over_budget("cl100k_base", "tiktoken", 40_000_000)
    'inspect keeps every cl100k_base token of the text with its bytes, spans and flags, and this text has 40 million characters, over the 22 million that keep memory near 2.0 GB'
    """
    return _over_whole_text_limit(f"inspect keeps every {name} token of the text with its bytes, spans and flags",
                                  family, n_chars, limit_m)


def _over_whole_text_limit(what: str, family: str, n_chars: int, limit_m: float | None) -> str | None:
    """`what` is done to a text of `n_chars`, and why that is over the whole-text limit of
    `family` (or `limit_m` million characters); None within it."""
    limit = whole_text_limit(family) if limit_m is None else limit_m
    if n_chars <= limit * 1e6:
        return None
    per_char = WHOLE_TEXT_BYTES_PER_CHAR.get(family, OTHER_BYTES_PER_CHAR)
    return (f"{what}, and this text has {n_chars / 1e6:,.0f} million characters, over the {limit:g} million "
            f"that keep memory near {per_char * limit / 1000:.1f} GB")


def basic_piece_limit_mb() -> float:
    """MB of a stretch that BPE with no pattern cannot cut that it merges whole without asking.

    >>> basic_piece_limit_mb()
    10.0
    """
    return WHOLE_TEXT_PEAK_MB / BASIC_BYTES_PER_BYTE


def basic_piece_over_budget(name: str, n_bytes: int, limit_mb: float | None = None) -> str | None:
    """Why merging a stretch of `n_bytes` with no place to cut whole (BPE with no pattern) is over
    its budget (the whole-text peak, or `limit_mb` MB of the stretch), or None. The caller adds
    the way on.

    >>> basic_piece_over_budget("the trained BPE at 4,096", 30_000_000)
    'the trained BPE at 4,096 has no split pattern and must merge 30 MB of the text at once (no place in it where its tokens stay the same when cut), over the 10 MB that keep memory near 2.0 GB'
    """
    limit = basic_piece_limit_mb() if limit_mb is None else limit_mb
    if n_bytes <= limit * 1e6:
        return None
    size = f"{n_bytes / 1e6:,.1f}" if n_bytes < 10e6 else f"{n_bytes / 1e6:,.0f}"
    return (f"{name} has no split pattern and must merge {size} MB of the text at once "
            f"(no place in it where its tokens stay the same when cut), over the {limit:g} MB that keep "
            f"memory near {memory_text(basic_piece_peak_gb(int(limit * 1e6)))}")


def basic_piece_peak_gb(n_bytes: int) -> float:
    """About what merging a stretch of `n_bytes` whole (BPE with no pattern) takes, in GB."""
    return round(BASIC_BYTES_PER_BYTE * n_bytes / 1e9, 3)


def whole_text_peak_gb(family: str, n_chars: int) -> float:
    """About what encoding `n_chars` whole takes at its peak, in GB."""
    return round(WHOLE_TEXT_BYTES_PER_CHAR.get(family, OTHER_BYTES_PER_CHAR) * n_chars / 1e9, 1)


WHOLE_TEXT_DEFAULTS = (f"{whole_text_limit('tokenizers')} for tokenizer.json, "
                       f"{whole_text_limit('sentencepiece')} for SentencePiece, {whole_text_limit('')} for others")
