"""The held-out split of a corpus file found on its bytes, so that a sweep never holds the text whole.

`held_out_cut` gives the byte offset where `analysis.sweep.split_held_out` would cut the file's text
(the same character, moved to a line start by the same rule), reading the file a block at a time:
the training part is then counted from the file as `train` counts it (`counting.count_corpus`), and
only the held-out part is decoded. A whole decoded text takes up to 4 bytes a character (Python's
str with one emoji in it), and splitting it copied it once more.

`split_counted` does both for a sweep (the command line's and the window's): the training part
counted, the held-out part as text; `counted_corpus` counts a whole corpus file for a sweep with
no held-out part, which then counts its evaluation text from the file too. They read UTF-8 files
only (a `counting.CorpusFiles`); they do not train.
"""

from __future__ import annotations

from typing import NamedTuple

from tokexplorer.core.files.text_blocks import TextFile
from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.training.counting import CorpusFiles


class CountedText(NamedTuple):
    """A training text already split and counted, never held as one string: its distinct chunks
    (UTF-8, in order of first occurrence), their occurrences, and the text's length in UTF-8 bytes
    (what `analysis.sweep.sweep` trains on). With no pattern the text's bytes are one chunk, read
    from `part` only when training starts. It is trained on once (`take_chunks`)."""

    chunks: list[bytes]
    freq: list[int]
    n_bytes: int
    source: TextFile | None = None  # the file it is the whole of, read again to count references on it
    part: CorpusFiles | None = None  # with no pattern: the stream of the text's bytes

    def take_chunks(self) -> tuple[list[bytes], list[int]]:
        """The chunks and their occurrences to train on, handed over: this text's lists are left
        empty, so that once the merge loop has copied them (the compiled one does) the copy is the
        only one. With no pattern, the text's bytes as one chunk, read now.

        >>> text = CountedText([b"ab", b"c"], [2, 1], 5)
        >>> text.take_chunks(), text.chunks
        (([b'ab', b'c'], [2, 1]), [])
        """
        if self.part is not None:
            return [self.part.read(0, self.n_bytes)], [1]
        chunks, freq = list(self.chunks), list(self.freq)
        self.chunks.clear()
        self.freq.clear()
        return chunks, freq


def sweep_corpus(path: str, held_out: float | None, pattern: str | None, *, encoding: str | None = None,
                 max_unique_mb: float | None = None) -> tuple[CountedText, str | None] | None:
    """What a sweep trains on and counts, read from a corpus file without holding it: (the
    training part counted, the held-out text, or None with no held-out part: the corpus itself is
    counted by the training run). None where `split_counted` / `counted_corpus` give None: the
    caller reads the text whole (and splits it with `sweep.split_held_out`). For the command line's
    `sweep` and the window's (`child`) alike."""
    if held_out is not None:
        return split_counted(path, held_out, pattern, encoding=encoding, max_unique_mb=max_unique_mb)
    whole = counted_corpus(path, pattern, encoding=encoding, max_unique_mb=max_unique_mb)
    return None if whole is None else (whole, None)


def split_counted(path: str, fraction: float, pattern: str | None, *, encoding: str | None = None,
                  max_unique_mb: float | None = None) -> tuple[CountedText, str] | None:
    """(the training part counted, the held-out text) of a corpus file, as `split_held_out` splits
    its text and `count_chunks` counts the first part, or with no pattern its bytes; the text is
    never decoded whole. None when the file is not UTF-8 (or may not be), or the pattern is not a
    named one (a name or its regex): the caller reads the text whole. `max_unique_mb`: the budget
    on the distinct chunks (`count_corpus`), as `train` takes it.
    """
    from tokexplorer.core.files.textfile import decode_text

    corpus = _countable(path, pattern, encoding)
    cut = None if corpus is None else held_out_cut(corpus, fraction)
    if cut is None:
        return None
    evaluation = decode_text(corpus.read(cut, corpus.size - cut), source=path)
    return _counted(training_part(corpus, cut), pattern, max_unique_mb), evaluation


def counted_corpus(path: str, pattern: str | None, *, encoding: str | None = None,
                   max_unique_mb: float | None = None) -> CountedText | None:
    """A corpus file counted as `count_chunks` counts its text, or with no pattern its bytes, its
    `source` the file; None where `split_counted` gives None (the caller reads the text whole).
    NotUtf8Error at the first byte that is not UTF-8, as the reader says it."""
    corpus = _countable(path, pattern, encoding)
    if corpus is None:
        return None
    if pattern is None:
        _check_utf8(corpus)
    return _counted(corpus, pattern, max_unique_mb)._replace(source=TextFile(path))


def _countable(path: str, pattern: str | None, encoding: str | None) -> CorpusFiles | None:
    """The file as a stream to count, or None when it is not read as UTF-8 (an --encoding, a
    UTF-16 mark or a NUL near its start) or `pattern` is not a named one (a name or its regex)."""
    import codecs

    from tokexplorer.core.patterns import NAMED_PATTERNS
    from tokexplorer.core.training.counting import open_corpus

    try:
        if encoding is not None and codecs.lookup(encoding).name != "utf-8":
            return None
    except LookupError:
        return None  # the reader says the encoding is unknown
    pattern = NAMED_PATTERNS.get(pattern, pattern) if pattern is not None else None  # a name: its regex
    if pattern is not None and pattern not in NAMED_PATTERNS.values():
        return None
    return open_corpus([path])


def _counted(corpus: CorpusFiles, pattern: str | None, max_unique_mb: float | None) -> CountedText:
    """The stream counted by a named pattern (`count_corpus`), or with none its bytes as one chunk."""
    from tokexplorer.core.patterns import NAMED_PATTERNS
    from tokexplorer.core.training.counting import count_corpus

    if pattern is None:
        return CountedText([], [1], corpus.size, part=corpus)
    return CountedText(*count_corpus(corpus, NAMED_PATTERNS.get(pattern, pattern), max_unique_mb=max_unique_mb),
                       corpus.size)


def _check_utf8(corpus: CorpusFiles) -> None:
    """NotUtf8Error at the stream's first byte that is not UTF-8 (the file and its offset)."""
    from tokexplorer.core.files.textfile import NotUtf8Error

    for offset, data in _blocks(corpus, 0, corpus.size):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NotUtf8Error(*corpus.where(offset + exc.start), data[exc.start]) from None

BLOCK = 1 << 22  # bytes decoded at a time (up to 16 MB as a str)


def held_out_cut(corpus: CorpusFiles, fraction: float) -> int | None:
    """The stream offset where the last `fraction` of the corpus's text starts, as
    `split_held_out` cuts the decoded text; None when the stream is not valid UTF-8 (the caller
    reads it whole, and the reader says where). The same TokexplorerError as `split_held_out` for
    a bad fraction or a text too short to split.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("wb", suffix=".txt", delete=False) as f:
    ...     _ = f.write("one\\ntwo\\nthree\\nfour\\n".encode())
    >>> from tokexplorer.core.training.counting import open_corpus
    >>> held_out_cut(open_corpus([f.name]), 0.25)
    14
    >>> os.unlink(f.name)
    """
    if not 0 < fraction < 1:
        raise TokexplorerError(f"the held-out fraction must be between 0 and 1, not {fraction}")
    marks = _char_marks(corpus)  # (byte offset, character offset) at each block's start, and the end
    if marks is None:
        return None
    n_chars = marks[-1][1]
    cut = int(n_chars * (1 - fraction))  # in characters, as split_held_out
    at = _byte_offset(corpus, marks, cut)
    # split_held_out moves the cut to just after the last newline before it when that newline is
    # less than `reach` characters back: within 4 bytes a character of the cut (one further back is
    # more than `reach` characters back, as is the last one before the cut then)
    reach = 0.5 * (n_chars - cut) + 200
    start = max(0, at - 4 * int(reach) - 4)
    window = corpus.read(start, at - start)
    line = window.rfind(b"\n")
    if line >= 0 and _chars(window[line:]) < reach:
        at = start + line + 1
    if not _has_text(corpus, 0, at) or not _has_text(corpus, at, corpus.size):
        raise TokexplorerError("the text is too short to hold some of it out; give a longer text or "
                               "a separate evaluation text")
    return at


def training_part(corpus: CorpusFiles, end: int) -> CorpusFiles:
    """The corpus's stream up to `end` (a file's tail left out), for `count_corpus`."""
    sizes, left = [], end
    for size in corpus.sizes:
        sizes.append(min(size, left))
        left -= sizes[-1]
    return corpus._replace(sizes=tuple(sizes))


def _blocks(corpus: CorpusFiles, start: int, end: int):
    """(offset, bytes) blocks of the stream from `start` to `end`, cut between UTF-8 characters."""
    while start < end:
        data = corpus.read(start, min(BLOCK, end - start) + 3)
        n = min(BLOCK, end - start)
        while n < len(data) and n > 0 and data[n] & 0xC0 == 0x80:
            n -= 1  # not inside a character (only the stream's end or invalid bytes are past 3)
        if n == 0:
            n = min(len(data), end - start)
        yield start, data[:n]
        start += n


def _char_marks(corpus: CorpusFiles) -> list[tuple[int, int]] | None:
    marks, chars = [], 0
    for offset, data in _blocks(corpus, 0, corpus.size):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        marks.append((offset, chars))
        chars += len(text)
    marks.append((corpus.size, chars))
    return marks


def _byte_offset(corpus: CorpusFiles, marks: list[tuple[int, int]], char: int) -> int:
    """The stream offset of character `char`."""
    for (offset, first), (end, after) in zip(marks, marks[1:]):
        if char < after:
            text = corpus.read(offset, end - offset).decode("utf-8")
            return offset + len(text[:char - first].encode("utf-8"))
    return corpus.size


def _chars(data: bytes) -> int:
    """Characters in valid UTF-8 bytes (the bytes that do not continue one)."""
    return len(data) - sum(map(data.count, _CONTINUATIONS))


_CONTINUATIONS = [bytes([b]) for b in range(0x80, 0xC0)]


def _has_text(corpus: CorpusFiles, start: int, end: int) -> bool:
    """Whether the stream from `start` to `end` holds a character that is not white space."""
    return any(data.decode("utf-8").strip() for _, data in _blocks(corpus, start, end))
