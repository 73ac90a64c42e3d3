"""The files a tokenizer trained in the window can be saved as: the formats it offers (its
`save_formats`), each with its file-dialog filter, and writing them (each format's writer is atomic)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from tokexplorer.core.tokenizer import Tokenizer, TokexplorerError

# format -> file-dialog filter
# subtle: only minbpe's .model keeps a BPE's split pattern; readers of tiktoken and GPT-2 files assume one
FORMAT_FILTERS = {
    "minbpe": "minbpe model, pattern and special tokens kept (*.model *.vocab)",
    "tiktoken": "tiktoken ranks, read back with the GPT-4 split (*.tiktoken)",
    "gpt2": "GPT-2 encoder.json + vocab.bpe in a new folder, read back with the GPT-2 split (*)",
    "sentencepiece": "SentencePiece model (*.model *.vocab)",
}


def save_formats(formats: Iterable[str]) -> dict[str, str]:
    """The file-dialog filter of each of a tokenizer's `save_formats`, in its order.

    >>> list(save_formats(("minbpe", "tiktoken")))
    ['minbpe', 'tiktoken']
    """
    return {fmt: FORMAT_FILTERS[fmt] for fmt in formats}


def save_trained(tok: Tokenizer, path: str | os.PathLike, fmt: str) -> list[Path]:
    """Write a trained tokenizer in a format of `save_formats`; returns the files. minbpe and
    SentencePiece write PREFIX.model and PREFIX.vocab (a .model or .vocab ending of the path is
    the prefix's); GPT-2 writes a folder."""
    from tokexplorer.core.files.minbpe import save_gpt2, save_minbpe, save_tiktoken
    from tokexplorer.core.training.sentencepiece import save_sentencepiece

    path = Path(path)
    prefix = path.with_suffix("") if path.suffix in (".model", ".vocab") else path
    if fmt == "minbpe":
        return save_minbpe(tok, prefix)
    if fmt == "tiktoken":
        return [save_tiktoken(tok, path if path.suffix == ".tiktoken" else f"{path}.tiktoken")]
    if fmt == "gpt2":
        return save_gpt2(tok, path)
    if fmt == "sentencepiece":
        return save_sentencepiece(tok, prefix)
    raise TokexplorerError(f"unknown format {fmt!r}; choose one of {', '.join(tok.save_formats) or 'none (it is not saved from here)'}")
