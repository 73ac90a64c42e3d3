"""Memory budgets of the commands that hold a whole text, in one place (no imports: the command
line's help states them without loading any tokenizer code).

A budget is the input size a command takes without being asked: above it the command refuses,
before reading or encoding, with the size that would be needed and the flag (`--max-mb`) that goes
on anyway. Peaks were measured with `/usr/bin/time -f %M` on non-repeating text of 10 to 50 MB.
"""

WHOLE_TEXT_LIMIT_MB = 64  # million characters encoded whole: about 30 bytes each at the peak

# Training corpora (MB on disk), and the peak each takes: base MB + per_mb x the corpus.
# BPE counts the corpus's chunks piece by piece; SentencePiece keeps every sentence and its words.
TRAIN_LIMIT_MB = {"bpe": 256, "sentencepiece": 128}
TRAIN_PEAK_MB = {"bpe": (150, 4), "sentencepiece": (150, 8)}


def training_peak_gb(algorithm: str, corpus_mb: float) -> float:
    """The memory training a corpus of `corpus_mb` takes at its peak, in GB.

    >>> training_peak_gb("bpe", 256)
    1.174
    """
    base, per_mb = TRAIN_PEAK_MB[algorithm]
    return round((base + per_mb * corpus_mb) / 1000, 3)
