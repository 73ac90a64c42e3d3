"""Memory budgets of the commands that hold a whole text, in one place (no imports: the command
line's help states them without loading any tokenizer code).

A budget is the input size a command takes without being asked: above it the command refuses,
before reading or encoding, with the size that would be needed and the flag (`--max-mb`) that goes
on anyway. Peaks were measured with `/usr/bin/time -f %M` on non-repeating text of 10 to 50 MB.
"""

WHOLE_TEXT_LIMIT_MB = 64  # million characters encoded whole: about 30 bytes each at the peak

# Training corpora (MB on disk), and the peak each takes at most: base MB + per_mb x the corpus.
# BPE counts the corpus's chunks piece by piece (256 MB: 689 MB); SentencePiece keeps every sentence
# and its words, unigram most (128 MB: BPE 1,124 MB, unigram 1,973 MB).
TRAIN_LIMIT_MB = {"bpe": 256, "sentencepiece": 64}
TRAIN_PEAK_MB = {"bpe": (150, 3), "sentencepiece": (150, 15)}


def training_peak_gb(algorithm: str, corpus_mb: float) -> float:
    """The memory training a corpus of `corpus_mb` takes at its peak, in GB.

    >>> training_peak_gb("bpe", 256)
    0.918
    """
    base, per_mb = TRAIN_PEAK_MB[algorithm]
    return round((base + per_mb * corpus_mb) / 1000, 3)


def training_over_budget(algorithm: str, corpus_bytes: int, limit_mb: float | None = None) -> str | None:
    """Why a corpus of `corpus_bytes` is over the training budget (`TRAIN_LIMIT_MB`, or
    `limit_mb`), or None when it is within it. The caller adds the way on that fits it.

    >>> training_over_budget("sentencepiece", 300_000_000)
    "the corpus is 300 MB, over SentencePiece training's budget of 64 MB (memory near 1.1 GB at its peak)"
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
            f"(memory near {training_peak_gb(algorithm, limit):.1f} GB at its peak)")
