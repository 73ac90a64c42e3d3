"""The glitch-token finder: the tokens of a vocabulary a model is likely to have learned badly or
never, each with the reasons it is listed.

Five reasons, checked for any tokenizer of the registry (through the Tokenizer protocol only):
- unreachable: encoding the token's own text (`decode([id])`, special tokens read as plain text,
  policy "none") does not give `[id]` back, so ordinary text never produces it on its own (a
  SentencePiece piece from inside a word is encoded after a letter-free prefix, see `RoundTrip`);
- not valid UTF-8 alone: its bytes are part of a character (a byte-level BPE's fragments);
  such a token has no text of its own to encode back, so the round trip is not tried for it;
- never produced on the reference corpus: the bundled texts (the UDHR in 56 languages, the quirk
  samples, the welcome text and tokexplorer's own Python source) or the caller's; of those, the
  longest and rarest (latest in the merge order, which BPE training gives to rarer pairs) are
  listed first and the rest counted, as a small corpus leaves most of a vocabulary unseen;
- special: added to the vocabulary, not merged (`<|endoftext|>`), or an id reserved for one;
- reported under-trained in the literature (resources/glitch/under_trained.json: GPT-2 from
  Rumbelow & Watkins 2023 and Land & Bartolo 2024; cl100k_base and o200k_base from Land &
  Bartolo's results on the open models that share those vocabularies), listed only where the
  vocabulary's token has the reported text.

Speed: the round trip runs through the tokenizer's library encoder where the tokenizer declares one
and does not normalise its text (tiktoken: about 4 µs a token, o200k_base's 200k tokens in about a
second); a token whose fast round trip fails is checked again with the protocol's own encode, so a
token is called unreachable only by the encode the rest of tokexplorer uses. The whole scan of
o200k_base, corpus included, takes 4-7 s here. The scan reports
progress. It draws nothing and reads no file beyond the bundled corpus: `--corpus` files are read
by the caller (with the file budget) and passed in as texts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np

from tokexplorer.core.analysis.unicode_info import visible
from tokexplorer.core.analysis.vocabulary import Kind, Vocabulary
from tokexplorer.core.resources import resource_path
from tokexplorer.core.tokenizer import Tokenizer, TokexplorerError

Progress = Callable[[int, int], None]

NOT_UTF8 = "not valid UTF-8 alone"
UNSEEN = "never produced on the reference corpus"
SPECIAL = "special"
# A reason's kind is the start of its text; the view filters by these, in this order.
REASON_KINDS = {
    "reported under-trained": "reported under-trained",
    "unreachable": "unreachable",
    "not valid UTF-8": NOT_UTF8,
    "special": SPECIAL,
    "never produced": UNSEEN,
}
UNSEEN_SHOWN = 1000  # never-produced tokens listed (the longest and rarest); the rest are counted
SMALL_CORPUS_BYTES = 100_000_000  # below this a corpus is small beside a tokenizer's training data
PROGRESS_EVERY = 4096  # tokens between progress reports


def reason_kind(reason: str) -> str:
    """The kind (a key of REASON_KINDS) of one reason.

    >>> reason_kind("unreachable: encodes as [1, 2]"), reason_kind(SPECIAL)
    ('unreachable', 'special')
    """
    for kind, start in REASON_KINDS.items():
        if reason.startswith(start):
            return kind
    raise ValueError(f"not a glitch reason: {reason!r}")


def printable(data: bytes) -> str:
    """A token's bytes as one line of text: spaces kept, controls escaped, and bytes that are not
    (complete) UTF-8 written \\xNN.

    >>> printable(b" SolidGoldMagikarp"), printable(b"\\r\\n\\xe2\\x80")
    (' SolidGoldMagikarp', '\\\\r\\\\n\\\\xe2\\\\x80')
    """
    out = []
    for ch in data.decode("utf-8", errors="surrogateescape"):
        code = ord(ch)
        out.append(f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else visible(ch))
    return "".join(out)


@dataclass(frozen=True)
class KnownToken:
    """A token reported under-trained: its id and text in one tokenizer, and who reported it."""

    id: int
    text: str
    cite: str  # "Land & Bartolo 2024"
    model: str  # the model whose embeddings were studied
    title: str  # the publication
    url: str


@lru_cache(maxsize=1)
def known_tokens() -> dict[str, tuple[KnownToken, ...]]:
    """The under-trained tokens of the literature, per built-in tokenizer name.

    >>> [(k.id, k.text, k.cite) for k in known_tokens()["gpt2"]][0]
    (43453, ' SolidGoldMagikarp', 'Rumbelow & Watkins 2023')
    """
    data = json.loads(resource_path("glitch", "under_trained.json").read_text(encoding="utf-8"))
    sources = data["sources"]
    return {name: tuple(KnownToken(e["id"], e["text"], sources[e["source"]]["cite"], e["model"],
                                   sources[e["source"]]["title"], sources[e["source"]]["url"])
                        for e in entries)
            for name, entries in data["tokenizers"].items()}


def known_reason(known: KnownToken) -> str:
    """The reason that lists a token of the literature.

    >>> known_reason(known_tokens()["gpt2"][0])
    'reported under-trained (Rumbelow & Watkins 2023)'
    """
    return f"reported under-trained ({known.cite})"


@dataclass(frozen=True)
class Corpus:
    """The reference texts a scan counts tokens on, and what they are (for the report)."""

    texts: tuple[str, ...]
    description: str

    @property
    def n_bytes(self) -> int:
        return sum(len(t.encode("utf-8")) for t in self.texts)


def bundled_corpus() -> Corpus:
    """The reference corpus installed with tokexplorer: the UDHR in 56 languages, the quirk
    samples, the welcome text, and tokexplorer's own Python source (code; absent from a bundle
    that ships no .py files, and then not counted)."""
    from tokexplorer.core.analysis.quirks import QUIRKS, sample_text

    udhr = sorted(resource_path("udhr").glob("udhr_*.txt"))
    code = sorted(Path(__file__).resolve().parents[2].rglob("*.py"))
    texts = ([p.read_text(encoding="utf-8") for p in udhr] + [sample_text(q) for q in QUIRKS]
             + [resource_path("welcome.txt").read_text(encoding="utf-8")]
             + [p.read_text(encoding="utf-8") for p in code])
    return Corpus(tuple(texts), f"the UDHR in {len(udhr)} languages, {len(QUIRKS)} quirk samples, the "
                  f"welcome text and tokexplorer's own Python source ({len(code)} files)")


@dataclass(frozen=True)
class GlitchToken:
    id: int
    text: str  # printable(token bytes)
    reasons: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"id": self.id, "text": self.text, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class GlitchReport:
    tokenizer: str
    tokens: tuple[GlitchToken, ...]
    corpus: str  # what the reference corpus was, its size, and whether it is small
    unseen: int  # tokens never produced on it, of which the first UNSEEN_SHOWN are listed

    def to_dict(self) -> dict:
        return {"tokenizer": self.tokenizer, "tokens": [t.to_dict() for t in self.tokens]}


class RoundTrip:
    """Encodes a token's own text back, for one tokenizer.

    Fast where it can be: the library's own encoder where the tokenizer does not normalise its
    text; a token whose fast round trip fails is encoded again by the protocol's encode (policy
    "none"), which decides.

    subtle: a tokenizer that puts a word-start space before the text (SentencePiece's
    add_dummy_prefix) turns the inside of a word ("ing") into a word start ("▁ing") when it is
    encoded alone, so such a piece is encoded once more after WORD_INSIDE, itself one token: if
    it comes back there, ordinary text reaches it (Land & Bartolo 2024 counter the added space
    the same way).
    """

    WORD_INSIDE = "«"

    def __init__(self, tok: Tokenizer):
        self.tok = tok
        library = tok.library_encoder() if tok.normalizes is None else None
        self.fast = library[0] if library is not None else None
        self.inside: int | None = None  # the id WORD_INSIDE encodes as, if the tokenizer adds a space
        start = tok.encode("test", allowed_special="none")
        if len(start) and start.token_bytes[0][:1] == b" ":
            ids = list(tok.encode(self.WORD_INSIDE, allowed_special="none").ids)
            self.inside = int(ids[0]) if len(ids) == 1 else None

    def unreachable(self, token_id: int, *, special: bool = False) -> list[int] | None:
        """What encoding the token's own text gives when that is not `[token_id]`, else None
        (`special`: read its text as plain text; no fast path).

        >>> from tokexplorer.core.registry import get_builtin
        >>> RoundTrip(get_builtin("gpt2")).unreachable(50256, special=True)  # <|endoftext|> as text
        [27, 91, 437, 1659, 5239, 91, 29]
        """
        tok = self.tok
        tries = [(tok.decode([token_id]), [token_id])]  # (text, the ids that reach the token)
        if self.inside is not None and not special:
            # inside a word: its text after the prefix (the decode of a first token drops its space)
            inside = tok.decode([self.inside, token_id]).removeprefix(self.WORD_INSIDE)
            tries.append((self.WORD_INSIDE + inside, [self.inside, token_id]))
        if self.fast is not None and not special and any(list(self.fast(t)) == want for t, want in tries):
            return None
        encoded = []
        for text, want in tries:
            encoded.append([int(i) for i in tok.encode(text, allowed_special="none").ids])
            if encoded[-1] == want:
                return None
        return encoded[0]


def find_glitch_tokens(tok: Tokenizer, corpus: Corpus | None = None, *, progress: Progress | None = None,
                       unseen_shown: int = UNSEEN_SHOWN) -> GlitchReport:
    """Every token of `tok` with a reason to be a glitch token, most telling first: the reported
    ones, then the unreachable, special and not-UTF-8 ones by id, then the never-produced ones,
    longest and rarest first. `corpus` defaults to the bundled one.

    >>> from tokexplorer.core.registry import get_builtin
    >>> report = find_glitch_tokens(get_builtin("gpt2"), Corpus((" SolidGoldMagikarp",), "its name"))
    >>> next(t for t in report.tokens if t.id == 43453)
    GlitchToken(id=43453, text=' SolidGoldMagikarp', reasons=('reported under-trained (Rumbelow & Watkins 2023)',))
    """
    corpus = bundled_corpus() if corpus is None else corpus
    if not any(corpus.texts):
        raise TokexplorerError("the reference corpus is empty; give a text with some words in it")
    vocab = Vocabulary.of(tok)
    n = len(vocab)
    total = n + len(corpus.texts)
    reasons: dict[int, list[str]] = {}

    # the literature first: a row's first reason orders it
    for known in known_tokens().get(tok.name, ()):
        if known.id < n and vocab.token_bytes(known.id) == known.text.encode("utf-8"):
            reasons.setdefault(known.id, []).append(known_reason(known))

    round_trip = RoundTrip(tok)
    kinds = vocab.kinds
    for i in range(n):
        if progress is not None and i % PROGRESS_EVERY == 0:
            progress(i, total)
        kind = int(kinds[i])
        if kind & Kind.UNUSED:
            continue
        if kind & Kind.NOT_UTF8:
            reasons.setdefault(i, []).append(NOT_UTF8)
            continue
        ids = round_trip.unreachable(i, special=bool(kind & Kind.SPECIAL))
        if ids is not None:
            reasons.setdefault(i, []).append(f"unreachable: encodes as {ids}")
        if kind & Kind.SPECIAL:
            reasons.setdefault(i, []).append(SPECIAL)

    counts = np.zeros(n, dtype=np.int64)
    for k, text in enumerate(corpus.texts):
        if progress is not None:
            progress(n + k, total)
        ids = np.asarray(tok.encode(text, allowed_special="none").id_array, dtype=np.int64)
        counts += np.bincount(ids[ids < n], minlength=n)[:n]
    unused_or_special = (kinds & (Kind.UNUSED | Kind.SPECIAL)) != 0
    never = np.flatnonzero((counts == 0) & ~unused_or_special)
    order = np.lexsort((-never, -vocab.lengths[never]))  # longest first, then the latest merge
    ranked = never[order[:unseen_shown]]
    for i in ranked.tolist():
        reasons.setdefault(i, []).append(UNSEEN)
    if progress is not None:
        progress(total, total)

    unseen_rank = {i: r for r, i in enumerate(ranked.tolist())}
    kind_order = list(REASON_KINDS)

    def key(i: int) -> tuple[int, int]:
        first = kind_order.index(reason_kind(reasons[i][0]))
        return first, unseen_rank[i] if reason_kind(reasons[i][0]) == "never produced" else i

    rows = tuple(GlitchToken(i, printable(vocab.token_bytes(i)), tuple(reasons[i])) for i in sorted(reasons, key=key))
    size = corpus.n_bytes
    note = f"{corpus.description}: {size / 1e6:.1f} MB"
    if size < SMALL_CORPUS_BYTES:
        note += (" (small beside a tokenizer's training data, so most tokens are never produced on it: "
                 f"{len(never):,} of {n:,} here, of which the {len(ranked):,} longest and rarest are listed)")
    return GlitchReport(tok.name, rows, note, len(never))
