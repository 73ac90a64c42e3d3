"""The files a tokenizer trained in the window can be saved as: which formats its family offers,
and writing them (each format's writer is atomic)."""

from __future__ import annotations

import os
from pathlib import Path

from tokexplorer.core.tokenizer import Tokenizer, TokexplorerError


def save_formats(family: str) -> dict[str, str]:
    """The formats a trained tokenizer of `family` can be saved in: key -> file-dialog filter."""
    if family == "bpe":
        # subtle: only minbpe's .model keeps the split pattern; readers of the other two assume one
        return {"minbpe": "minbpe model, pattern and special tokens kept (*.model *.vocab)",
                "tiktoken": "tiktoken ranks, read back with the GPT-4 split (*.tiktoken)",
                "gpt2": "GPT-2 encoder.json + vocab.bpe in a new folder, read back with the GPT-2 split (*)"}
    return {"sentencepiece": "SentencePiece model (*.model *.vocab)"}


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
    raise TokexplorerError(f"unknown format {fmt!r}; choose one of {', '.join(save_formats(tok.family))}")
