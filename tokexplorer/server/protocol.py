"""Every request the window sends the tokenizing server and every answer it gets back.

Each request is a small frozen dataclass; the server answers it with the record named beside it
(bulk data as numpy arrays), or with an error message. Nothing here is dispatched by name: the
server looks a request's handler up by its type (`handlers.handle`).

On the wire each request travels in a `Call` with a request id, and comes back as an `Answer`,
an `Error` or, for long requests, `Progress` reports first. Pipes keep order, so the answers of
one document's requests arrive in the order they were asked.

Documents follow the shape of a language server's: the window sends a document's edits with a
generation number (`Tokenize`), and the server answers with what changed (`TokensChanged`): the
range of tokens replaced and the new tokens' columns, as LSP answers "semantic tokens" with
deltas. A request superseded by a newer one for the same document before the server reached it
is not answered: the newer one's answer covers both.

This module holds records only; it imports no tokenizer library and no Qt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from tokexplorer.server.columns import TokenColumns

# --- the envelope ------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    rid: int  # the request's id, unique per window
    request: object  # one of the request records below


@dataclass(frozen=True)
class Answer:
    rid: int
    value: object


@dataclass(frozen=True)
class Error:
    rid: int
    message: str  # for the user: what went wrong and what to do; for a bug, its one-line summary
    details: str = ""  # for a bug in tokexplorer: the traceback, which the window logs


@dataclass(frozen=True)
class Progress:
    rid: int
    done: int
    total: int


@dataclass(frozen=True)
class Stop:
    """Sent by the window when it closes: the server finishes and exits."""


# --- tokenizers -------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenizerInfo:
    """What the window knows of a tokenizer: enough to name it, count against it and offer what
    it can do, without holding it."""

    name: str  # the picker's name
    family: str  # "tiktoken", "sentencepiece", "tokenizers", "bpe" (trained here)
    n_vocab: int
    special_tokens: dict[str, int]
    split_pattern: str | None
    has_merges: bool  # a merge tree can be shown for its tokens
    description: str = ""
    source: str = ""
    save_formats: tuple[str, ...] = ()  # what `SaveTokenizer` can write it as, the one keeping it whole first


@dataclass(frozen=True)
class Describe:
    """-> TokenizerInfo, loading the tokenizer if it is not yet."""

    tokenizer: str


@dataclass(frozen=True)
class OpenTokenizerFile:
    """-> TokenizerInfo: read a tokenizer file and offer it under `name`."""

    name: str
    path: str


@dataclass(frozen=True)
class TrainedBpe:
    """A byte-level BPE trained in the window's training process (minbpe semantics)."""

    merges: dict[tuple[int, int], int]
    pattern: str | None
    special_tokens: dict[str, int]
    description: str


@dataclass(frozen=True)
class TrainedSentencePiece:
    model: bytes  # the serialized ModelProto
    description: str


@dataclass(frozen=True)
class AddTrained:
    """-> TokenizerInfo: build a trained tokenizer and offer it under `name`."""

    name: str
    trained: TrainedBpe | TrainedSentencePiece


@dataclass(frozen=True)
class SaveTokenizer:
    """-> tuple of the paths written: a tokenizer trained in the window, in `format`
    (minbpe, tiktoken, gpt2 or sentencepiece), atomically."""

    tokenizer: str
    path: str
    format: str


# --- documents --------------------------------------------------------------------------


class TextDelta(NamedTuple):
    """What a `Tokenize` request carries of the text: the whole text, or the edits since the
    previous request (UTF-16 position, removed units, inserted text); `mark` counts the editor's
    edits so far. To check the server's copy: `length16`, the text's length in UTF-16 units, and
    `probes`, bits of the text as (UTF-16 position, text) around the edits and elsewhere (an edit
    put in the wrong place can leave the length right and the text wrong). `soft16`: the UTF-16
    positions of the text where the editor holds a soft break (`positions.SourceMap`), for the
    tokens' editor spans."""

    text: str | None
    edits: list[tuple[int, int, str]] | None
    mark: int
    length16: int
    probes: tuple[tuple[int, str], ...] = ()
    soft16: tuple[int, ...] = ()


@dataclass(frozen=True)
class Tokenize:
    """-> TokensChanged, Refused, Failed or OutOfStep: apply the edits to document `doc`'s text,
    then tokenize it with `tokenizer` under `policy` ("refuse", "all" or "none")."""

    doc: int
    generation: int
    tokenizer: str
    policy: str
    delta: TextDelta


@dataclass(frozen=True)
class TokensChanged:
    """What changed in a document's tokens since the previous answer: `removed` tokens from
    `first` on were replaced by `new` (None for `removed`: every token was); the positions of the
    tokens after them moved by `shift`. The rest describes the whole text now."""

    doc: int
    generation: int
    tokenizer: str
    policy: str
    mark: int  # the editor's edit count the text is from
    base: int  # how many tokens the window holds before applying this (-1 with removed None)
    first: int
    removed: int | None
    new: TokenColumns  # (on the pipe, a big one is columns.ColumnFrames followed by its arrays)
    shift: tuple[int, int, int]  # code points, UTF-16 units, UTF-8 bytes
    changed: tuple[int, int] | None  # code-point range re-encoded or recoloured, None: everything
    refused: tuple[tuple[int, int], ...]  # code-point spans spelling a special token the policy refuses
    dropped: tuple[tuple[int, int], ...]  # code-point spans no token covers
    dropped16: np.ndarray | None  # int64 [k, 2]: the same in the editor's UTF-16 units
    soft: np.ndarray  # code points before which the editor holds a soft break
    soft16: np.ndarray  # those breaks' own UTF-16 units
    n_bytes: int  # the text's UTF-8 length
    seconds: float  # spent tokenizing in the server
    has_chunks: bool  # the tokenizer pre-splits the text (`ChunksOf` answers)


@dataclass(frozen=True)
class Refused:
    """The text spells a special token and the tokenizer refuses every such text (the policy
    could not encode it as plain text either)."""

    doc: int
    generation: int
    token: str
    position: int


@dataclass(frozen=True)
class Failed:
    doc: int
    generation: int
    message: str  # for the user; for a bug, its one-line summary
    details: str = ""  # for a bug in tokexplorer: the traceback, which the window logs
    loaded: bool = False  # the tokenizer itself loaded: it is the text it cannot take


@dataclass(frozen=True)
class OutOfStep:
    """The server's copy of the text does not match the window's: send the whole text."""

    doc: int
    generation: int


@dataclass(frozen=True)
class CloseDocument:
    """-> None: forget a document (a compare pane closed)."""

    doc: int


# --- what views ask about a document's tokens -------------------------------------------


@dataclass(frozen=True)
class ChunksOf:
    """-> ChunkSpans of the pre-split chunks of document `doc` at `generation`, with the
    alternative of the split pattern that made each (core.pattern_parts) and which of them the
    pattern `compare` (a name of core.pattern_parts.COMPARABLE, or None) does not make; None if
    the server's text has moved on, or the tokenizer does not pre-split."""

    doc: int
    generation: int
    compare: str | None = None


@dataclass(frozen=True)
class ChunkSpans:
    starts: np.ndarray  # code points
    ends: np.ndarray
    alternatives: np.ndarray  # int64 per chunk: the alternative of `pattern` that matched (-1: none)
    names: tuple[str, ...]  # per alternative
    pattern: str  # "" for a pipeline of splits (no one pattern)
    differs: np.ndarray | None  # bool per chunk: `compare` splits it otherwise; None without a comparison
    compare: str | None


@dataclass(frozen=True)
class TraceAt:
    """-> TraceAnswer: how the chunk holding token `index` of document `doc` was encoded."""

    doc: int
    generation: int
    index: int


@dataclass(frozen=True)
class TraceAnswer:
    trace: object | None  # core.encode_trace.EncodeTrace, or None with `message`
    message: str
    first: int  # the chunk's tokens in the document
    stop: int
    expected: tuple[int, ...]  # their ids
    rules: object | None = None  # core.rule_trace.RuleTrace of the same chunk, or None with `rules_message`
    rules_message: str = ""


@dataclass(frozen=True)
class LengthHistograms:
    """-> list of core.token_lengths.LengthHistogram: `text` in each tokenizer."""

    text: str
    tokenizers: tuple[str, ...]


# --- what views ask about a tokenizer ---------------------------------------------------


@dataclass(frozen=True)
class DecodeIds:
    """-> core.id_lookup.DecodedIds of ids typed as text ("15339, 1917"), or a
    core.id_lookup.CharacterLookup of characters or code points ("'h'", "U+0068")."""

    tokenizer: str
    text: str


@dataclass(frozen=True)
class PieceNamesOf:
    """-> tuple of each id's piece as sentencepiece names it (`▁the`, `<0x0A>`), or None when the
    tokenizer is not a SentencePiece vocabulary (core.id_lookup.piece_names)."""

    tokenizer: str
    ids: tuple[int, ...]


@dataclass(frozen=True)
class MergeTreeOf:
    """-> core.merge_tree.MergeNode: how BPE built token `token_id`."""

    tokenizer: str
    token_id: int


@dataclass(frozen=True)
class VocabularyOf:
    """-> core.vocabulary.Vocabulary of the whole vocabulary."""

    tokenizer: str


@dataclass(frozen=True)
class CountChat:
    """-> core.chat.conversation.ChatCount (its Encoding carries no tokenizer)."""

    tokenizer: str
    messages: tuple  # core.chat.conversation.Message
    format: str | None
    add_generation_prompt: bool


@dataclass(frozen=True)
class LanguageReportOf:
    """-> core.languages.LanguageReport: the installed UDHR texts in each tokenizer (reports
    progress)."""

    tokenizers: tuple[str, ...]


@dataclass(frozen=True)
class ReferencePoints:
    """-> tuple of core.sweep.ReferencePoint: the evaluation text of a sweep (`text`, or read from
    `path`; its held-out part if `held_out`) counted by each tokenizer (reports progress)."""

    tokenizers: tuple[str, ...]
    text: str | None = None
    path: str | None = None
    held_out: float = 0.0


@dataclass(frozen=True)
class Ping:
    """-> ServerFacts. `settle`: collect garbage and hand freed memory back to the system first
    (as the soak reads the window's memory), so that `rss_mb` is comparable between readings."""

    settle: bool = False


@dataclass(frozen=True)
class ServerFacts:
    pid: int
    peak_mb: float | None  # peak resident memory, where the system tells (Linux)
    rss_mb: float | None  # resident memory now
    heap_mb: float | None = None  # of it, the C heap in use (glibc's mallinfo2; None elsewhere)
    modules: tuple[str, ...] = field(default=())  # the tokenizer libraries it has imported


@dataclass(frozen=True)
class EncodeIds:
    """-> np.ndarray (int64) of `text`'s ids in `tokenizer` under `policy` ("refuse" encodes as plain
    text, as a document's tokens are), encoded afresh: the soak's check that a document's spliced
    tokens equal a whole encode."""

    tokenizer: str
    text: str
    policy: str


# --- the lesson ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LessonCheck:
    """-> tuple of core.lesson.check.Checked: the numbers of the lesson step `step` (a key of
    core.lesson.chapters) computed on `text`, each beside the value the lecture printed."""

    step: str
    text: str


# --- BPE by hand (core.analysis.bpe_by_hand) -------------------------------------------------


@dataclass(frozen=True)
class BpeByHandOf:
    """-> core.analysis.bpe_by_hand.ByHandSnapshot: `merges` merges of the lecture's loop on `text`
    from the start (pre-split `pattern`: none, gpt2, gpt4), with `rows` rows of the sorted pair
    counts and the sequence's first `shown` ids. Reports progress."""

    text: str
    pattern: str
    merges: int
    rows: int = 100
    shown: int = 2000


@dataclass(frozen=True)
class MergeTypedIds:
    """-> core.analysis.bpe_by_hand.TypedMerge: the lecture's `merge(ids, pair, new_id)` on what
    the user typed ("5, 6, 6, 7, 9, 1", "6, 7", "99")."""

    ids: str
    pair: str
    new_id: str


@dataclass(frozen=True)
class GlitchTokensOf:
    """-> core.analysis.glitch.GlitchReport: `tokenizer`'s glitch tokens, on the bundled reference
    corpus (reports progress: the vocabulary's tokens checked, then the corpus's texts counted)."""

    tokenizer: str
