"""Tokens per language on parallel text: the lecture's "non-English tax", measured.

The same document in many languages (by default the Universal Declaration of Human Rights in 56
translations, installed with tokexplorer in resources/udhr) is encoded by each tokenizer; a
language's ratio is its token count divided by the reference language's (English) count with the
same tokenizer, so 3.0 means the same content costs three times the tokens (three times the
context window, compute and price).

It reads the texts and counts; sorting and drawing are the views' business.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from tokexplorer.core.analysis.sweep import count_tokens
from tokexplorer.core.files.textfile import read_text_file
from tokexplorer.core.resources import resource_path
from tokexplorer.core.tokenizer import Tokenizer, TokexplorerError

REFERENCE = "eng"  # the key every ratio is relative to
LANGUAGE_TABLE = "languages.tsv"  # key, language tag, language, script, direction (tab-separated)


def udhr_folder() -> Path:
    """The UDHR texts installed with tokexplorer."""
    return resource_path("udhr")


@dataclass(frozen=True)
class ParallelText:
    """One language's version of the document; `key` is the file name's stem without `udhr_`."""

    key: str
    language: str
    script: str
    text: str

    @property
    def title(self) -> str:
        """The text's first line: the document's title in that language and script.

        >>> ParallelText("x", "x", "", "\\n  Title  \\nbody").title
        'Title'
        """
        return next((line.strip() for line in self.text.splitlines() if line.strip()), "")


def read_parallel_texts(folder: str | os.PathLike | None = None) -> list[ParallelText]:
    """Every `*.txt` of the folder (default: the installed UDHR), named from its languages.tsv
    where there is one (otherwise the key is the name), in the order of the file names.

    >>> texts = read_parallel_texts()
    >>> len(texts), next(t.language for t in texts if t.key == "hin")
    (56, 'Hindi')
    """
    path = Path(folder) if folder is not None else udhr_folder()
    if not path.is_dir():
        raise TokexplorerError(f"{path} is not a folder of parallel texts (one .txt file per language)")
    names: dict[str, tuple[str, str]] = {}
    table = path / LANGUAGE_TABLE
    if table.is_file():
        for line in read_text_file(table).splitlines():
            cells = line.split("\t")
            if line.startswith("#") or len(cells) < 4:
                continue
            names[cells[0]] = (cells[2], cells[3])
    texts = []
    for file in sorted(path.glob("*.txt")):
        key = file.stem.removeprefix("udhr_")
        language, script = names.get(key, (key, ""))
        texts.append(ParallelText(key, language, script, read_text_file(file)))
    if not texts:
        raise TokexplorerError(f"{path} has no .txt files; put one text per language there")
    return texts


@dataclass(frozen=True)
class LanguageRow:
    key: str
    language: str
    script: str
    chars: int
    bytes: int
    tokens: tuple[int, ...]  # one per tokenizer, in the report's order
    ratios: tuple[float, ...]  # tokens / the reference language's tokens, per tokenizer
    title: str = ""  # the text's first line, in its own script


@dataclass(frozen=True)
class LanguageReport:
    """Token counts of each language's text per tokenizer, relative to the reference language."""

    tokenizers: tuple[str, ...]
    reference: str  # the key of the language every ratio divides by
    rows: tuple[LanguageRow, ...]  # in the texts' order

    def row(self, key: str) -> LanguageRow:
        for r in self.rows:
            if r.key == key:
                return r
        raise KeyError(key)

    def table(self) -> list[list[object]]:
        """Header and one row per language, for CSV."""
        header = ["key", "language", "script", "characters", "bytes"]
        header += [f"tokens {t}" for t in self.tokenizers] + [f"ratio {t}" for t in self.tokenizers]
        return [header] + [[r.key, r.language, r.script, r.chars, r.bytes, *r.tokens,
                            *(round(x, 6) for x in r.ratios)] for r in self.rows]

    def to_dict(self) -> dict:
        return {"tokenizers": list(self.tokenizers), "reference": self.reference, "languages": [
            {"key": r.key, "language": r.language, "script": r.script, "characters": r.chars,
             "bytes": r.bytes, "title": r.title, "tokens": dict(zip(self.tokenizers, r.tokens)),
             "ratio": {t: round(x, 4) for t, x in zip(self.tokenizers, r.ratios)}} for r in self.rows]}


def tokens_per_language(
    texts: Sequence[ParallelText],
    tokenizers: Sequence[Tokenizer],
    *,
    reference: str = REFERENCE,
    progress: Callable[[int, int], None] | None = None,
) -> LanguageReport:
    """Count every text with every tokenizer; ratios are relative to the `reference` language.

    >>> from tokexplorer.core.registry import get_builtin
    >>> texts = [ParallelText("eng", "English", "Latn", "hello world"),
    ...          ParallelText("rus", "Russian", "Cyrl", "привет мир")]
    >>> report = tokens_per_language(texts, [get_builtin("gpt2")])
    >>> [(r.key, r.tokens, r.ratios) for r in report.rows]
    [('eng', (2,), (1.0,)), ('rus', (11,), (5.5,))]
    """
    if not tokenizers:
        raise TokexplorerError("give at least one tokenizer")
    if reference not in {t.key for t in texts}:
        raise TokexplorerError(f"there is no text for the reference language {reference!r}; "
                               f"the texts are {', '.join(t.key for t in texts)}")
    total = len(texts) * len(tokenizers)
    counts: dict[str, tuple[int, ...]] = {}
    for i, t in enumerate(texts):
        counts[t.key] = tuple(count_tokens(tok, t.text) for tok in tokenizers)
        if progress is not None:
            progress((i + 1) * len(tokenizers), total)
    base = counts[reference]
    rows = tuple(
        LanguageRow(t.key, t.language, t.script, len(t.text), len(t.text.encode("utf-8")), counts[t.key],
                    tuple(n / b if b else 0.0 for n, b in zip(counts[t.key], base)), t.title)
        for t in texts
    )
    return LanguageReport(tuple(tok.name for tok in tokenizers), reference, rows)
