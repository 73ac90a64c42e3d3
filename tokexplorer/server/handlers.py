"""What the server does for each request of `protocol` except `Tokenize` (which `process` runs
per document, in order): one function per request type, found by the request's type.

Each calls the core, as the command line does, and returns a plain record: nothing a handler
returns holds a tokenizer, so the window never unpickles one.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
from functools import singledispatch
from typing import TYPE_CHECKING, Callable

from tokexplorer.core.tokenizer import TokexplorerError
from tokexplorer.core.memory_reading import heap_mb, settle_for_reading
from tokexplorer.server import protocol as p
from tokexplorer.server.tokenizers import info_of

if TYPE_CHECKING:
    from tokexplorer.server.process import Server

Report = Callable[[int, int], None]

# The tokenizer libraries whose presence `Ping` reports (the window's process must import none).
LIBRARIES = ("tiktoken", "sentencepiece", "tokenizers", "gguf", "jinja2", "mistral_common")


@singledispatch
def handle(request, server: "Server", progress: Report):
    raise TokexplorerError(f"the tokenizing server does not know the request {type(request).__name__}")


@handle.register
def _(request: p.Describe, server, progress):
    return info_of(request.tokenizer, server.tokenizers.get(request.tokenizer))


@handle.register
def _(request: p.OpenTokenizerFile, server, progress):  # (registered as it arrived: `process`)
    return info_of(request.name, server.tokenizers.get(request.name))


@handle.register
def _(request: p.AddTrained, server, progress):
    return info_of(request.name, server.tokenizers.get(request.name))


@handle.register
def _(request: p.SaveTokenizer, server, progress):
    from tokexplorer.core.files.trained import save_trained

    return tuple(str(path) for path in save_trained(server.tokenizers.get(request.tokenizer), request.path,
                                                    request.format))


@handle.register
def _(request: p.CloseDocument, server, progress):
    server.documents.pop(request.doc, None)


def _document_encoding(server: "Server", doc: int, generation: int):
    """The encoding of document `doc` as of `generation`, or None if the server has moved on."""
    document = server.documents.get(doc)
    if document is None or document.generation != generation or document.encoding is None:
        return None
    return document


@handle.register
def _(request: p.ChunksOf, server, progress):
    import numpy as np

    from tokexplorer.core.analysis.pattern_parts import compare_splits, comparable, explain_chunks

    document = _document_encoding(server, request.doc, request.generation)
    if document is None:
        return None
    arrays = document.encoding.chunk_arrays()
    if arrays is None:
        return None
    # A pipeline of splits (a tokenizer.json) has chunks but no one pattern to explain them by.
    pattern = document.tokenizer.split_pattern or ""
    text = document.encoding.text
    starts, ends = arrays
    explained = None
    if pattern:  # from the last explanation: only the chunks an edit can have changed are matched
        explained = explain_chunks(text, pattern, starts, ends, previous=document.explained)
        document.explained = explained
    alternatives = explained.alternatives if explained else np.full(len(starts), -1, dtype=np.int64)
    differs = None
    if request.compare is not None:
        differs = compare_splits(text, starts, ends, comparable(request.compare))
    return p.ChunkSpans(starts, ends, alternatives, explained.names if explained else (), pattern, differs,
                        request.compare)


@handle.register
def _(request: p.TraceAt, server, progress):
    from tokexplorer.core.analysis.encode_trace import chunk_at, trace_at
    from tokexplorer.core.analysis.rule_trace import rules_at

    document = _document_encoding(server, request.doc, request.generation)
    if document is None:
        return None
    tok, encoding = document.tokenizer, document.encoding
    try:
        first, stop = chunk_at(tok, encoding, request.index)
        trace = trace_at(tok, encoding, request.index)
    except TokexplorerError as exc:
        return p.TraceAnswer(None, str(exc), 0, 0, ())
    try:
        rules, why = rules_at(tok, encoding, first, stop), ""
    except TokexplorerError as exc:
        rules, why = None, str(exc)
    return p.TraceAnswer(trace, "", first, stop, tuple(int(i) for i in encoding.id_array[first:stop]), rules, why)


@handle.register
def _(request: p.LengthHistograms, server, progress):
    from tokexplorer.core.analysis.token_lengths import length_histograms

    return length_histograms(request.text, [server.tokenizers.get(n) for n in request.tokenizers])


@handle.register
def _(request: p.DecodeIds, server, progress):
    from tokexplorer.core.analysis.id_lookup import lookup

    return lookup(server.tokenizers.get(request.tokenizer), request.text)


@handle.register
def _(request: p.PieceNamesOf, server, progress):
    from tokexplorer.core.analysis.id_lookup import piece_names

    names = piece_names(server.tokenizers.get(request.tokenizer), list(request.ids))
    return None if names is None else tuple(names)


@handle.register
def _(request: p.MergeTreeOf, server, progress):
    from tokexplorer.core.analysis.merge_tree import merge_tree

    return merge_tree(server.tokenizers.get(request.tokenizer), request.token_id)


@handle.register
def _(request: p.VocabularyOf, server, progress):
    from tokexplorer.core.analysis.vocabulary import Vocabulary

    return Vocabulary.of(server.tokenizers.get(request.tokenizer))


@handle.register
def _(request: p.CountChat, server, progress):
    from tokexplorer.core.chat.conversation import count_chat

    # The template renders in a child of this process with time and memory limits (a template
    # that runs away is killed there, with a message); one child waits ahead, so that a count
    # while the user types costs no process start.
    count = count_chat(server.tokenizers.get(request.tokenizer), list(request.messages), format=request.format,
                       add_generation_prompt=request.add_generation_prompt, keep_spare=True)
    return dataclasses.replace(count, encoding=portable(count.encoding))


@handle.register
def _(request: p.LanguageReportOf, server, progress):
    from tokexplorer.core.analysis.languages import read_parallel_texts, tokens_per_language

    toks = [server.tokenizers.get(n) for n in request.tokenizers]
    report = tokens_per_language(read_parallel_texts(), toks, progress=progress)
    return dataclasses.replace(report, tokenizers=tuple(request.tokenizers))  # the picker's names


@handle.register
def _(request: p.ReferencePoints, server, progress):
    from tokexplorer.core.analysis.sweep import reference_points, split_held_out
    from tokexplorer.core.files.textfile import read_text_file

    text = read_text_file(request.path) if request.path is not None else request.text or ""
    if request.held_out:
        text = split_held_out(text, request.held_out)[1]
    toks = [server.tokenizers.get(n) for n in request.tokenizers]
    points = reference_points(text, toks, progress=progress)
    return tuple(dataclasses.replace(point, name=name) for point, name in zip(points, request.tokenizers))


@handle.register
def _(request: p.Ping, server, progress):
    if request.settle:
        _settle()
    heap = heap_mb()
    return p.ServerFacts(os.getpid(), _status_mb("VmHWM"), _status_mb("VmRSS"), heap and heap[0],
                         tuple(m for m in LIBRARIES if m in sys.modules))


def _status_mb(key: str) -> float | None:
    """A memory figure of this process in MB, where the system tells (Linux's /proc)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return None


def _settle() -> None:
    """For the soak's memory reading only (`Ping(settle=True)`; nothing else calls it)."""
    settle_for_reading()


def portable(encoding):
    """An Encoding that can cross to the window: its ids and bytes as lists, its spans and flags
    computed, and no reference to the tokenizer (whose chunk finder it may hold)."""
    from tokexplorer.core.encoding import Encoding

    chunks = encoding.chunk_arrays()
    return Encoding.from_parts(
        encoding.text, [int(i) for i in encoding.id_array], list(encoding.token_bytes),
        encoding.byte_starts, encoding.byte_ends, special_mask=encoding.special_mask,
        byte_fallback_mask=encoding.byte_fallback_mask, starts=encoding.starts, ends=encoding.ends,
        flags=encoding.flags, n_bytes=encoding.n_bytes, chunk_spans=chunks)


@handle.register
def _(request: p.EncodeIds, server, progress):
    import numpy as np

    allowed = "none" if request.policy == "refuse" else request.policy  # as `documents.Retokenizer` does
    encoding = server.tokenizers.get(request.tokenizer).encode(request.text, allowed_special=allowed)
    return np.asarray(encoding.id_array, dtype=np.int64)


@handle.register
def _(request: p.LessonCheck, server, progress):
    from tokexplorer.core.lesson.chapters import step_by_key
    from tokexplorer.core.lesson.check import check_step

    return check_step(step_by_key(request.step), request.text, server.tokenizers.get)


@handle.register
def _(request: p.BpeByHandOf, server, progress):
    return _lesson_runs().snapshot(request.text, request.merges, request.pattern, rows=request.rows,
                                   shown=request.shown, progress=progress)


@functools.cache
def _lesson_runs():
    """BPE by hand's last run, kept to continue from (core.analysis.bpe_by_hand.LessonRuns)."""
    from tokexplorer.core.analysis.bpe_by_hand import LessonRuns

    return LessonRuns()


@handle.register
def _(request: p.MergeTypedIds, server, progress):
    from tokexplorer.core.analysis.bpe_by_hand import merge_typed

    return merge_typed(request.ids, request.pair, request.new_id)


@handle.register
def _(request: p.GlitchTokensOf, server, progress):
    from tokexplorer.core.analysis.glitch import find_glitch_tokens

    return find_glitch_tokens(server.tokenizers.get(request.tokenizer), progress=progress)
