"""What vocab size buys: sequence length vs vocab size, and compression over merges.

`sweep` trains byte-level BPE once, up to the largest vocab size asked for (every smaller size is a
prefix of the same merges), and counts the tokens of an evaluation text at each size, with
reference tokenizers (GPT-2, GPT-4, ...) counted on the same text as points to compare with.
`CompressionCurve` is the training corpus's bytes per token after each merge, read off the
training steps themselves (each merge shortens the corpus by `MergeStep.merged` tokens), so it costs
nothing beyond training and can grow live, one merge at a time.

An evaluation text is counted without holding its tokens: a piece at a time by a tokenizer that
streams (`streaming.streams`), by BPE with no pattern in pieces where no merge can join them
(`BPETokenizer.basic_pieces`), and whole by the others, which the caller checks first
(`check_whole_counts`). A file given as a `TextFile` is read a block at a time where the
tokenizer allows it, and whole for the others; a sweep whose evaluation text is its training text
reads the trained sizes' counts off the training run itself (the corpus after k merges is the
corpus encoded with those k merges).

It draws nothing (see gui/plots.py) and opens no files of its own: callers hand it text, counted
text or checked text files (`TextFile.scan`), and tokenizers.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Sequence, Union

from tokexplorer.core.backends.trained_bpe import BPETokenizer, utf8_blocks
from tokexplorer.core.budgets import (basic_piece_over_budget, basic_piece_peak_gb, max_mb_for, memory_text,
                                      whole_text_peak_gb)
from tokexplorer.core.files.text_blocks import TextFile
from tokexplorer.core.training.bpe import MergeStep, check_vocab_size, iter_batches, iter_train
from tokexplorer.core.training.held_out import CountedText
from tokexplorer.core.patterns import piece_spans, resolve_pattern
from tokexplorer.core.streaming import ordered_map, streams, whole_text_refusal
from tokexplorer.core.tokenizer import Tokenizer, TokexplorerError, clean_text

Progress = Callable[[int, int], None]  # (done, total); may raise to cancel
COUNT_PIECE = 1 << 18  # characters counted at a time: 4M-character pieces took 125 MB more, no faster
FILE_BLOCK = 1 << 20  # bytes of a file read at a time
# An evaluation text: a string, or a UTF-8 file checked by `TextFile.scan` (one read with an
# --encoding is a string).
Evaluation = Union[str, TextFile]


@dataclass
class CompressionCurve:
    """Bytes per token of a training corpus after each merge: `tokens[k]` is the corpus's length in
    tokens after k merges (`tokens[0]` is its length in bytes).

    >>> curve = CompressionCurve(11)
    >>> curve.add(3), curve.add(2)
    (1.375, 1.8333333333333333)
    >>> curve.tokens, curve.merges
    ([11, 8, 6], [1, 2])
    """

    n_bytes: int
    tokens: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.tokens:
            self.tokens = [self.n_bytes]

    @classmethod
    def from_steps(cls, n_bytes: int, steps: Iterable[MergeStep]) -> "CompressionCurve":
        curve = cls(n_bytes)
        for step in steps:
            curve.add(step.merged)
        return curve

    def add(self, merged: int) -> float:
        """One more merge that rewrote `merged` occurrences; returns the new bytes per token."""
        self.tokens.append(self.tokens[-1] - merged)
        return self.n_bytes / self.tokens[-1]

    def snapshot(self) -> "CompressionCurve":
        """A copy to hand to another thread while this one keeps growing.

        >>> curve = CompressionCurve(10)
        >>> bytes_per_token = curve.add(2)
        >>> copy = curve.snapshot()
        >>> bytes_per_token = curve.add(2)
        >>> copy.tokens, curve.tokens
        ([10, 8], [10, 8, 6])
        """
        return CompressionCurve(self.n_bytes, list(self.tokens))

    @property
    def merges(self) -> list[int]:
        """The x values: 1, 2, ... (merges learned)."""
        return list(range(1, len(self.tokens)))

    @property
    def bytes_per_token(self) -> list[float]:
        """The y values, one per merge (after it)."""
        return [self.n_bytes / t for t in self.tokens[1:]]

    def table(self) -> list[list[object]]:
        """Header and one row per merge, for CSV."""
        return [["merges", "vocab_size", "tokens", "bytes_per_token"]] + [
            [k, 256 + k, t, round(self.n_bytes / t, 6)] for k, t in enumerate(self.tokens) if k
        ]


def compression_curve(text: str, vocab_size: int, *, pattern: str | None = None,
                      progress: Progress | None = None) -> CompressionCurve:
    """Train on `text` and return its bytes per token after each merge.

    >>> compression_curve("aaabdaaabac", 259).tokens
    [11, 9, 7, 5]
    """
    curve = CompressionCurve(len(text.encode("utf-8")))
    for step in iter_train(text, vocab_size, pattern=pattern):
        curve.add(step.merged)
        if progress is not None:
            progress(step.step, step.total)
    return curve


@dataclass(frozen=True)
class SweepPoint:
    """The evaluation text under the first `vocab_size - 256` merges."""

    vocab_size: int
    tokens: int
    reached: bool  # False when training ran out of pairs before this size

    def bytes_per_token(self, n_bytes: int) -> float:
        return n_bytes / self.tokens if self.tokens else 0.0


@dataclass(frozen=True)
class ReferencePoint:
    """A ready-made tokenizer's count of the same evaluation text."""

    name: str
    n_vocab: int
    tokens: int


@dataclass(frozen=True)
class Sweep:
    """Sequence length vs vocab size of one training run, plus reference points."""

    pattern: str | None
    train_bytes: int
    eval_bytes: int
    eval_source: str  # "held-out 10%", "the corpus", a file name...
    points: tuple[SweepPoint, ...]
    references: tuple[ReferencePoint, ...]
    curve: CompressionCurve  # of the training text

    @property
    def merges_learned(self) -> int:
        return len(self.curve.tokens) - 1

    def table(self) -> list[list[object]]:
        """Header, then the trained sizes, then the reference points, for CSV."""
        rows: list[list[object]] = [["tokenizer", "vocab_size", "tokens", "bytes_per_token"]]
        rows += [["trained BPE", p.vocab_size, p.tokens, round(p.bytes_per_token(self.eval_bytes), 6)]
                 for p in self.points]
        rows += [[r.name, r.n_vocab, r.tokens, round(self.eval_bytes / r.tokens, 6) if r.tokens else 0.0]
                 for r in self.references]
        return rows

    def to_dict(self) -> dict:
        return {
            "pattern": self.pattern, "train_bytes": self.train_bytes, "eval_bytes": self.eval_bytes,
            "eval": self.eval_source, "merges_learned": self.merges_learned,
            "results": [{"vocab_size": p.vocab_size, "reached": p.reached, "tokens": p.tokens,
                         "bytes_per_token": round(p.bytes_per_token(self.eval_bytes), 4)} for p in self.points],
            "references": [{"tokenizer": r.name, "vocab_size": r.n_vocab, "tokens": r.tokens,
                            "bytes_per_token": round(self.eval_bytes / r.tokens, 4) if r.tokens else None}
                           for r in self.references],
        }


def parse_vocab_sizes(value: str) -> list[int]:
    """Comma-separated sizes, sorted, duplicates dropped; each must be 256 or more.

    >>> parse_vocab_sizes("512, 256,512")
    [256, 512]
    """
    try:
        sizes = sorted({int(v) for v in value.split(",") if v.strip()})
    except ValueError:
        raise TokexplorerError("vocab sizes are integers separated by commas, e.g. 256,512,1024") from None
    if not sizes:
        raise TokexplorerError("give at least one vocab size, e.g. 256,512,1024")
    check_vocab_size(sizes[0])
    return sizes


def split_held_out(text: str, fraction: float) -> tuple[str, str]:
    """(training text, held-out text): the last `fraction` of the text, cut at a line start when
    one is near, so no line is split between the two.

    >>> split_held_out("one\\ntwo\\nthree\\nfour\\n", 0.25)
    ('one\\ntwo\\nthree\\n', 'four\\n')
    """
    if not 0 < fraction < 1:
        raise TokexplorerError(f"the held-out fraction must be between 0 and 1, not {fraction}")
    cut = int(len(text) * (1 - fraction))
    line = text.rfind("\n", 0, cut)
    if line >= 0 and cut - line < 0.5 * (len(text) - cut) + 200:
        cut = line + 1
    train, held = text[:cut], text[cut:]
    if not train.strip() or not held.strip():
        raise TokexplorerError("the text is too short to hold some of it out; give a longer text or "
                               "a separate evaluation text")
    return train, held


def count_tokens(tok: Tokenizer, text: Evaluation, limit_mb: float | None = None) -> int:
    """Tokens of `text`, special-token text counted as plain text, never all its ids at once: a
    piece at a time (a file's a block at a time, the pieces on every core) when the tokenizer gives
    the same tokens so, in pieces where no merge joins them for BPE with no pattern (a stretch with
    no such place over its budget, or `limit_mb` MB, refused), else the text whole (a file read
    whole: `check_whole_counts` first).

    >>> from tokexplorer.core.registry import get_builtin
    >>> count_tokens(get_builtin("gpt2"), "hello world<|endoftext|>")
    9
    """
    if _is_basic(tok):
        return _count_basic(tok, text, limit_mb)
    encode_ids = getattr(tok, "encode_ids", None)
    if encode_ids is None:
        def encode_ids(piece: str, allowed_special: str) -> list[int]:
            return tok.encode(piece, allowed_special=allowed_special).ids
    threads = None  # one a core
    if isinstance(text, TextFile) and streams(tok) and text.in_blocks():
        pieces: Iterable[str] = _pieces_of_blocks(text)
    else:
        whole = text.read() if isinstance(text, TextFile) else text
        spans = piece_spans(whole, size=COUNT_PIECE) if streams(tok) else [(0, len(whole))]
        pieces = (whole[a:b] for a, b in spans)
        if len(spans) == 1:
            threads = 1  # (no pool for one piece: `report languages` counts 224 short texts)
    return sum(ordered_map(lambda piece: len(encode_ids(piece, allowed_special="none")), pieces, threads))


def _pieces_of_blocks(text: TextFile) -> Iterator[str]:
    """A file's text a piece at a time: its blocks (each ends where every named pattern ends a
    chunk), each cut as a text is (`piece_spans`)."""
    for block in text.blocks(FILE_BLOCK):
        piece = block.decode("utf-8")
        for a, b in piece_spans(piece, size=COUNT_PIECE):
            yield piece[a:b]


def _is_basic(tok: Tokenizer) -> bool:
    """Whether `tok` is BPE with no split pattern, counted in pieces of its own (`basic_pieces`)."""
    return isinstance(tok, BPETokenizer) and tok.split_pattern is None


def _count_basic(tok: BPETokenizer, text: Evaluation, limit_mb: float | None) -> int:
    n = 0
    for piece in tok.basic_pieces(_utf8_of(text)):
        why = basic_piece_over_budget(tok.name, len(piece), limit_mb)
        if why is not None:
            raise TokexplorerError(f"{why}; cut the text, or pass --max-mb {max_mb_for(len(piece))} to go on "
                                   f"(about {memory_text(basic_piece_peak_gb(len(piece)))})")
        n += len(tok.encode_chunk(piece))
    return n


def _utf8_of(text: Evaluation) -> Iterator[bytes]:
    """The text's UTF-8 a block at a time, cut anywhere: a file's bytes as they are (without a
    byte-order mark; checked by `TextFile.scan`), or a file read whole when it is not UTF-8."""
    from tokexplorer.core.training.counting import open_corpus

    corpus = open_corpus([text.path]) if isinstance(text, TextFile) and text.in_blocks() else None
    if corpus is not None:
        return (corpus.read(at, FILE_BLOCK) for at in range(0, corpus.size, FILE_BLOCK))
    return utf8_blocks(clean_text(text.read() if isinstance(text, TextFile) else text))


def text_size(text: Evaluation) -> tuple[int, int]:
    """(characters, UTF-8 bytes) of a text, or a file's (a block at a time).

    >>> text_size("héllo")
    (5, 6)
    """
    if isinstance(text, str):
        return len(text), sum(map(len, utf8_blocks(clean_text(text))))
    decoder = codecs.getincrementaldecoder("utf-8")()
    chars = n_bytes = 0
    for block in _utf8_of(text):
        n_bytes += len(block)
        chars += len(block) if block.isascii() else len(decoder.decode(block))
    return chars, n_bytes


def check_whole_counts(tokenizers: Sequence[Tokenizer], text: Evaluation, limit_mb: float | None = None) -> None:
    """Refuse, in one line as `streaming.check_size` does, an evaluation text that one of the
    tokenizers must count whole and that is over its budget (`streaming.whole_text_refusal`;
    `limit_mb`: the command line's --max-mb). A file is measured only when one of them counts it
    whole.
    """
    whole = [tok for tok in tokenizers if not (streams(tok) or _is_basic(tok))]
    if not whole:
        return
    if isinstance(text, TextFile) and text.in_blocks():
        text.scan([])  # (a byte that is not UTF-8: one line, NotUtf8Error)
    n_chars = text_size(text)[0]
    for tok in whole:
        why = whole_text_refusal(tok, n_chars, limit_mb)
        if why is not None:
            raise TokexplorerError(f"{why}; cut the file, or pass --max-mb {max_mb_for(n_chars)} to go on "
                                   f"(about {whole_text_peak_gb(tok.family, n_chars):.1f} GB)")


def sweep(
    text: str | CountedText,
    vocab_sizes: Sequence[int],
    *,
    pattern: str | None = "gpt4",
    eval_text: Evaluation | None = None,
    eval_source: str = "",
    references: Sequence[Tokenizer] = (),
    progress: Progress | None = None,
    on_merge: Callable[[CompressionCurve], None] | None = None,
    limit_mb: float | None = None,
) -> Sweep:
    """Train on `text` once up to max(vocab_sizes), count `eval_text` (default: `text`) at each size.

    `text` may come counted (`held_out.CountedText`, split by `pattern`; its chunks are handed to
    the merge loop, `take_chunks`): the same merges as the text itself. With no `eval_text`, the
    trained sizes' counts are the training run's (the compression curve's), and the references
    count the text, or the counted text's `source`.

    `progress(done, total)` counts merges, then evaluations, then references; it may raise to stop.
    `on_merge(curve)` sees the training text's compression curve after each merge (the same object,
    growing: take a `snapshot()` to keep it), for a live plot. `limit_mb`: the command line's
    --max-mb, for BPE with no pattern counting a long stretch whole (`count_tokens`).

    >>> s = sweep("aaabdaaabac", [256, 258], pattern=None)
    >>> [(p.vocab_size, p.tokens) for p in s.points], s.curve.tokens
    ([(256, 11), (258, 7)], [11, 9, 7])
    """
    sizes = sorted(set(vocab_sizes))
    if not sizes:
        raise TokexplorerError("give at least one vocab size, e.g. 256,512,1024")
    check_vocab_size(sizes[0])
    pattern = None if pattern is None else resolve_pattern(pattern)
    counted = isinstance(text, CountedText)
    evaluation = eval_text if eval_text is not None else text.source if counted else text
    if evaluation is None and references:
        raise TypeError("a counted text's references need its source or an eval_text")
    eval_bytes = text_size(eval_text)[1] if eval_text is not None else None
    if eval_bytes == 0 or (eval_text is None and not counted and not text):
        raise TokexplorerError("the evaluation text is empty")
    n_merges = sizes[-1] - 256
    total = n_merges + len(sizes) + len(references)
    report = progress or (lambda done, total: None)
    merges: list[tuple[int, int]] = []
    if counted:
        if not text.n_bytes:
            raise TokexplorerError("the corpus is empty; give some text to train on")
        curve = CompressionCurve(text.n_bytes)
        steps = (step for batch in iter_batches(*text.take_chunks(), sizes[-1]) for step in batch)
    else:
        curve = CompressionCurve(len(text.encode("utf-8")))
        steps = iter_train(text, sizes[-1], pattern=pattern)
    for step in steps:
        merges.append(step.pair)
        curve.add(step.merged)
        if on_merge is not None:
            on_merge(curve)
        report(step.step, total)
    done = n_merges
    points = []
    for size in sizes:
        used = merges[: size - 256]
        if eval_text is None:  # the training text after len(used) merges: the curve's
            tokens = curve.tokens[len(used)]
        else:
            tok = BPETokenizer({pair: 256 + i for i, pair in enumerate(used)}, pattern,
                               name=f"the trained BPE at {size:,}")
            tokens = count_tokens(tok, eval_text, limit_mb)
        points.append(SweepPoint(size, tokens, 256 + len(used) == size))
        done += 1
        report(done, total)
    refs = reference_points(evaluation, references, progress=lambda i, n: report(done + i, total),
                            limit_mb=limit_mb) if references else ()
    source = eval_source or ("the corpus" if eval_text is None else "evaluation text")
    return Sweep(pattern, curve.n_bytes, curve.n_bytes if eval_bytes is None else eval_bytes, source,
                 tuple(points), refs, curve)


def reference_points(evaluation: Evaluation, references: Sequence[Tokenizer], *,
                     progress: Progress | None = None, limit_mb: float | None = None) -> tuple[ReferencePoint, ...]:
    """Each ready-made tokenizer's count of the evaluation text (a sweep's reference points, also
    counted apart from its training run, e.g. where the tokenizers are).

    >>> from tokexplorer.core.backends.trained_bpe import BPETokenizer
    >>> reference_points("hihi", [BPETokenizer({(104, 105): 256}, None, name="hi")])
    (ReferencePoint(name='hi', n_vocab=257, tokens=2),)
    """
    refs = []
    for i, tok in enumerate(references, 1):
        refs.append(ReferencePoint(tok.name, tok.n_vocab, count_tokens(tok, evaluation, limit_mb)))
        if progress is not None:
            progress(i, len(references))
    return tuple(refs)
