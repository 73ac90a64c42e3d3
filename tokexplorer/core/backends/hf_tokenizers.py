"""Hugging Face `tokenizer.json` files as Tokenizers, run by the `tokenizers` library's own core.

Any model `tokenizers` runs opens: BPE, Unigram, WordPiece and WordLevel, with whatever normaliser,
pre-tokenizer and decoder the file names. Files are read from disk (`Tokenizer.from_str` on the
file's text), never fetched: `from_pretrained` is not used. A `tokenizer_config.json` beside the
file adds the special tokens it names that the file lacks.

What this adapter adds to the library:
- each token's bytes, from the token itself: the byte-level alphabet undone (GPT-2's 'Ġ' is a
  space), `<0xNN>` byte-fallback pieces, '▁' as a space, WordPiece's '##' and an end-of-word
  suffix dropped. Added tokens are their own text.
- each token's place in the user's text. subtle: `tokenizers` reports character offsets, and the
  byte-level pieces of one character each report that whole character (the three GPT-2 pieces of
  👋 all say (6, 7)). Where a run of tokens' bytes is exactly the text under their offsets, they
  are laid out byte by byte (so a piece of a character is PARTIAL, as in the other families);
  where the normaliser changed the text (NFKC, lowercase, accents stripped) or the token is the
  unknown token, the token keeps the library's span and is flagged NORMALIZED.
- the pre-tokenizer's chunks, from the library's own word of each token.
- the special-token policy of the other families (refuse, "all", "none", a set): only added tokens
  marked special are special; other added tokens are ordinary vocabulary, always matched.
- merge trees for BPE models, from the file's merges (`merge_tree`; `has_merges` says whether the
  model has them: Unigram, WordPiece and WordLevel do not).

Ids are what `Tokenizer.encode(text, add_special_tokens=False)` returns: the post-processor's
template tokens (a BOS some models add) are not part of the user's text and are left out.

It runs past 400 lines because each item above reads the same parsed pipeline (the file's JSON
and the library's objects); split, they would pass that state around between modules.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Callable, NamedTuple

import tokenizers

from tokexplorer.core.tokenizer import (AllowedSpecial, PipelineSplits, TokexplorerError, clean_text,
                                      native_errors, resolve_special)

if TYPE_CHECKING:
    import numpy as np

    from tokexplorer.core.analysis.merge_tree import MergeNode
    from tokexplorer.core.encoding import Encoding

# subtle: numpy, the Encoding module and the per-token tables are not needed to encode a short
# text's ids (`encode_ids`): they are imported where used and the tables made when first asked for.
# A tokenizer made from a file checked before (`from_checked_file`: a built-in whose sha256 and
# stamp are known) is loaded by the library from the file alone, and the file's JSON is parsed
# only if a table is asked for; that was two thirds of deepseek-v4's cold start.

MODEL_TYPES = ("BPE", "Unigram", "WordPiece", "WordLevel")
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")
SPACE_MARK = "\u2581"  # '▁'
SMALL_BATCH = 64  # texts (of about 16 characters) encoded one by one, not in the library's thread pool


def looks_like_tokenizer_json(head: bytes) -> bool:
    """A JSON object with a "model" and a "pre_tokenizer" or "normalizer" key near its start, as
    `tokenizers` writes them (keys in this order: version, truncation, padding, added_tokens,
    normalizer, pre_tokenizer, post_processor, decoder, model).

    >>> looks_like_tokenizer_json(b'{"version": "1.0", "normalizer": null, "model": {}}')
    True
    """
    text = head.lstrip()
    return (text.startswith(b"{")
            and (b'"normalizer"' in text or b'"pre_tokenizer"' in text or b'"added_tokens"' in text))


def _types(node) -> list[str]:
    """Every "type" named in a pipeline part, nested Sequences included."""
    found: list[str] = []
    if isinstance(node, dict):
        if isinstance(node.get("type"), str):
            found.append(node["type"])
        for value in node.values():
            found += _types(value)
    elif isinstance(node, list):
        for value in node:
            found += _types(value)
    return found


def describe_normalizer(node) -> str | None:
    """A short description of a normaliser, or None when it leaves the text as it is.

    >>> describe_normalizer({"type": "Sequence", "normalizers": [{"type": "NFC"},
    ...     {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]})
    "NFC, replace ' ' with '▁'"
    >>> describe_normalizer({"type": "Sequence", "normalizers": []}) is None
    True
    """
    if not isinstance(node, dict):
        return None
    kind = node.get("type")
    if kind == "Sequence":
        parts = [describe_normalizer(n) for n in node.get("normalizers", [])]
        return ", ".join(p for p in parts if p) or None
    if kind == "Replace":
        pattern = node.get("pattern", {})
        what = pattern.get("String", pattern.get("Regex", "?"))
        return f"replace {what!r} with {node.get('content', '')!r}"
    if kind == "Prepend":
        return f"prepend {node.get('prepend', '')!r}"
    if kind == "BertNormalizer":
        # strip_accents None means "as lowercase" (BERT's uncased models do both).
        strip = node.get("strip_accents")
        options = [name for name, on in (("lowercase", node.get("lowercase")),
                                         ("strip accents", node.get("lowercase") if strip is None else strip),
                                         ("clean text", node.get("clean_text"))) if on]
        return "BERT (" + ", ".join(options) + ")" if options else "BERT"
    if kind == "Precompiled":
        return "SentencePiece's precompiled character map (usually NFKC)"
    return kind.lower() if kind in ("Lowercase", "Strip", "StripAccents") else kind


def pipeline_facts(spec: dict, source: str) -> dict:
    """What the adapter needs to know of a parsed tokenizer.json's pipeline (JSON-able, so a built-in
    keeps it with its checked file: `registry`): the model type, the normaliser's description,
    whether it is byte-level, has byte fallback, a subword prefix or suffix, or a '▁' for spaces.

    >>> pipeline_facts({"model": {"type": "BPE", "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}}, "t")
    {'model_type': 'BPE', 'normalizes': None, 'byte_level': True, 'byte_fallback': False, 'prefix': '', 'suffix': '', 'space_mark': False}
    """
    model = spec["model"]
    kind = model.get("type") or ("BPE" if "merges" in model else None)
    if kind not in MODEL_TYPES:
        raise TokexplorerError(
            f"{source}: unknown model type {model.get('type')!r}; tokenizer.json models "
            f"are {', '.join(MODEL_TYPES)}"
        )
    pipeline = _types(spec.get("pre_tokenizer")) + _types(spec.get("decoder"))
    byte_level = "ByteLevel" in pipeline
    return {
        "model_type": kind,
        "normalizes": describe_normalizer(spec.get("normalizer")),
        "byte_level": byte_level,
        "byte_fallback": bool(model.get("byte_fallback")),
        "prefix": model.get("continuing_subword_prefix") or "",
        "suffix": model.get("end_of_word_suffix") or "",
        "space_mark": not byte_level and (
            "Metaspace" in pipeline or SPACE_MARK in json.dumps(
                [spec.get("normalizer"), spec.get("decoder")], ensure_ascii=False)),
    }


class TokenizersTokenizer:
    """A Hugging Face `tokenizer.json` behind the Tokenizer protocol."""

    family = "tokenizers"
    save_formats: tuple[str, ...] = ()  # read from a tokenizer.json, not saved from here

    def __init__(self, text: str, *, name: str, source: str = "", description: str = "",
                 config: dict | None = None):
        self.name = name
        self.source = source or name
        from tokexplorer.core.files.file_budget import parse_json

        spec = parse_json(text, source=self.source, kind="tokenizer.json")
        model = spec.get("model") if isinstance(spec, dict) else None
        if not isinstance(model, dict):
            raise TokexplorerError(f"{self.source}: not a Hugging Face tokenizer.json (no \"model\")")
        facts = pipeline_facts(spec, self.source)
        _check_file_ids(spec, model, self.source)  # ids are table entries: bounded before any table
        _check_normalizer(spec.get("normalizer"), self.source)
        self._setup(lambda: tokenizers.Tokenizer.from_str(text), facts, config, description)
        self._merges_source = model.get("merges") if self.has_merges else None
        # subtle: the vocabulary is read from the parsed file, not with get_vocab(), which takes
        # 0.7 s on a 128k vocabulary (a third of a cold start).
        self._build_tables(_model_vocab(model))

    @classmethod
    def from_checked_file(cls, path: Path, *, name: str, facts: dict, source: str = "", description: str = "",
                          config: dict | None = None) -> "TokenizersTokenizer":
        """A tokenizer.json already checked to be a known file (a built-in: its sha256 and stamp,
        `vocab_cache`), with its `pipeline_facts` read from it then: the library reads the file
        itself, none of the checks for crafted files runs again, and the file's JSON is parsed only
        when a table (token bytes, merges) is first asked for.

        subtle: a compact copy does not help here. DeepSeek V4's tokenizer rebuilt through the
        library's own API (its vocabulary and merges handed to `models.BPE` as Python objects or as
        vocab.json + merges.txt, the rest of the pipeline from a small JSON, the added tokens in
        order) serialises to the same `to_str()`, but took as long or longer (tokenizers 0.23,
        whole processes): the time is the library's building of the BPE model, not its JSON."""
        self = cls.__new__(cls)
        self.name = name
        self.source = source or name
        self._setup(lambda: tokenizers.Tokenizer.from_file(str(path)), facts, config, description)
        self._spec_path = path
        return self

    def _setup(self, load: Callable[[], tokenizers.Tokenizer], facts: dict, config: dict | None,
               description: str) -> None:
        """The library's tokenizer (`load()`) and what the file's pipeline says (`pipeline_facts`)."""
        try:
            library = load()
        except Exception as exc:  # the library's own message says what is wrong
            raise TokexplorerError(
                f"{self.source}: tokenizers cannot load it: {str(exc).splitlines()[0]}"
            ) from None
        # subtle: a file may ask to truncate (BERT's: 512 tokens) or pad what it encodes; the user's
        # text is encoded whole, as it is
        library.no_truncation()
        library.no_padding()
        self.config = config or {}  # tokenizer_config.json, for views that need more of it
        self.facts = facts  # what the file's pipeline is (`pipeline_facts`)
        if self.config:
            _add_config_tokens(library, self.config)
        self._library = library
        self._library_lock = threading.Lock()  # encode_special_tokens is a setting of the shared object
        self.model_type = kind = facts["model_type"]
        self.has_merges = kind == "BPE"
        self.normalizes = facts["normalizes"]
        self.description = description or f"Hugging Face tokenizer.json ({kind}" + (
            f"; normalises: {self.normalizes})" if self.normalizes else ")")
        self.byte_level = facts["byte_level"]
        self.byte_fallback = facts["byte_fallback"]
        self._prefix = facts["prefix"]
        self._suffix = facts["suffix"]
        self._space_mark = facts["space_mark"]
        self._prepends = self._space_mark  # '▁' put before the text: the first token's lead space
        self.split_pattern = None  # no single regex: the pre-tokenizer's chunks come from the library
        # The library's own pipeline parts, as it reads them from the file (None where absent).
        self.pre_tokenizer_state: dict | None = _state(library.pre_tokenizer)
        self.normalizer_state: dict | None = _state(library.normalizer)
        # id -> (text, special) of every added token, the config's included
        self.added_tokens: dict[int, tuple[str, bool]] = {
            i: (t.content, bool(t.special)) for i, t in library.get_added_tokens_decoder().items()}
        self._special = {content: i for i, (content, special) in self.added_tokens.items() if special}
        # Offsets are only read where the tokens' bytes may not be the text (`_place`).
        self._needs_offsets = not self.byte_level or self.normalizes is not None
        self._lock = threading.Lock()
        self._tables_lock = threading.Lock()  # (its own: `_made_by` holds `_lock` and may need a table)

    # The per-token tables `_build_tables` makes: from a checked file, made at the first use.
    _TABLES = frozenset({"_strings", "_valid", "_is_byte", "_bytes", "_table", "_lengths", "_special_ids",
                         "_n_vocab", "_merges_source"})

    def __getattr__(self, name: str):
        # (only called for attributes not set: the tables of a tokenizer `from_checked_file`)
        if name in TokenizersTokenizer._TABLES and "_spec_path" in self.__dict__:
            with self._tables_lock:
                if name not in self.__dict__:
                    model = json.loads(self._spec_path.read_bytes())["model"]
                    self._merges_source = model.get("merges") if self.has_merges else None
                    self._build_tables(_model_vocab(model))
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _build_tables(self, vocab: dict[str, int]) -> None:
        import numpy as np

        from tokexplorer.core.encoding import TokenByteTable

        added = self.added_tokens
        n = max([*vocab.values(), *added], default=-1) + 1
        self._strings = [""] * n
        for token, i in vocab.items():
            self._strings[i] = token
        self._valid = np.zeros(n, dtype=bool)
        self._valid[list(vocab.values())] = True
        self._is_byte = np.zeros(n, dtype=bool)
        self._bytes: list[bytes] = [b""] * n
        if self.byte_level:
            self._bytes = _byte_level_bytes(self._strings)
        else:
            for i, token in enumerate(self._strings):
                self._bytes[i], self._is_byte[i] = self._to_bytes(token, None)
        for i, (content, _) in added.items():  # added tokens are their own text
            self._strings[i] = content
            self._bytes[i] = content.encode("utf-8")
            self._valid[i] = True
            self._is_byte[i] = False
        self._table = TokenByteTable(self._bytes)  # to check that tokens spell a text
        self._lengths = self._table.lengths
        self._special_ids = np.array(sorted(self._special.values()), dtype=np.int64)
        self._n_vocab = n

    def _to_bytes(self, token: str, byte_of: dict[str, int] | None) -> tuple[bytes, bool]:
        """A vocabulary entry's bytes, and whether it is a byte-fallback piece."""
        if byte_of is not None:
            try:
                return bytes(byte_of[c] for c in token), False
            except KeyError:  # not in the byte-level alphabet: written as plain text
                return token.encode("utf-8"), False
        if self.byte_fallback:
            m = _BYTE_PIECE.fullmatch(token)
            if m:
                return bytes([int(m.group(1), 16)]), True
        if self._prefix and token.startswith(self._prefix) and len(token) > len(self._prefix):
            token = token[len(self._prefix):]
        if self._suffix and token.endswith(self._suffix) and len(token) > len(self._suffix):
            token = token[: -len(self._suffix)]
        if self._space_mark:
            token = token.replace(SPACE_MARK, " ")
        return token.encode("utf-8"), False

    # --- the protocol -------------------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        return self._n_vocab

    @property
    def special_tokens(self) -> dict[str, int]:
        return dict(self._special)

    @property
    def chat_template(self) -> str | None:
        """tokenizer_config.json's chat_template (Jinja), the one named "default" where it lists
        several; None without one."""
        template = self.config.get("chat_template")
        if isinstance(template, list):
            named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
            template = named.get("default") or next(iter(named.values()), None)
        return template if isinstance(template, str) and template else None

    @property
    def bos_token(self) -> str:
        return _config_token(self.config.get("bos_token"))

    @property
    def eos_token(self) -> str:
        return _config_token(self.config.get("eos_token"))

    @property
    def library_tokenizer(self) -> tokenizers.Tokenizer:
        """The `tokenizers.Tokenizer` itself (for benchmarks). Do not change its settings."""
        return self._library

    def library_encoder(self):
        """`tokenizers.Tokenizer.encode(text, add_special_tokens=False).ids`."""
        lib = self._library
        return (lambda text: lib.encode(text, add_special_tokens=False).ids), "tokenizers"

    def locality(self) -> PipelineSplits | None:
        """The pre-tokenizer's regex splits, when the pipeline is only those (each Isolated, not
        inverted) and then a plain ByteLevel step, on a byte-level BPE model with no normaliser
        and no prepended space; None for any other pipeline."""
        spec = self.pre_tokenizer_state
        if spec is None or self.normalizes or not self.byte_level or self.model_type != "BPE" or self._prepends:
            return None
        if self.normalizer_state not in (None, {"type": "Sequence", "normalizers": []}):
            return None
        steps = spec.get("pretokenizers", []) if spec.get("type") == "Sequence" else []
        splits, last = steps[:-1], steps[-1] if steps else {}
        if not splits or not all(
            st.get("type") == "Split" and st.get("behavior") == "Isolated" and not st.get("invert")
            and isinstance(st.get("pattern", {}).get("Regex"), str) for st in splits
        ):
            return None
        if last.get("type") != "ByteLevel" or last.get("add_prefix_space") or last.get("use_regex"):
            return None
        # (the file spells \r and \n inside a character class as the characters themselves)
        patterns = tuple(st["pattern"]["Regex"].replace("\r", r"\r").replace("\n", r"\n") for st in splits)
        added = frozenset(content for content, _ in self.added_tokens.values() if content)
        return PipelineSplits(patterns, self.encode_words, self.tokens_bytes, added)

    def encode_words(self, words: list[str], allowed: set[str]) -> list[list[int]] | None:
        """Each of `words` encoded on its own (ids, as `encode` finds them), or None if the
        pre-tokenizer splits one of them further: for re-encoding a few chunks of a text.
        `allowed`: the special tokens the text may spell, as resolved for the whole text."""
        out = []
        for run in self._runs(words, not allowed, False):
            w = run.words
            if len(w) and (w.min() < 0 or w.max() != w.min()):
                return None
            out.append(run.ids.tolist())
        return out

    def tokens_bytes(self, ids: list[int]) -> list[bytes]:
        """Each token's bytes (unchecked ids: for ids this tokenizer made)."""
        return self._bytes_of(ids)

    def encode_ids(self, text: str, *, allowed_special: AllowedSpecial | None = None) -> list[int]:
        """Ids only, at the library's speed."""
        text = clean_text(text)
        allowed = resolve_special(self._special, allowed_special, text)
        # With no special token allowed, the library must read special-token text as plain text.
        # With some allowed, the text spells no refused one (resolve_special checked), so the
        # library's own matching of added tokens is exactly the policy.
        return self._encodings([text], not allowed)[0].ids

    def encode(self, text: str, *, allowed_special: AllowedSpecial | None = None) -> Encoding:
        import numpy as np

        from tokexplorer.core.encoding import Encoding, LazyTokenBytes, TokenIds

        text = clean_text(text)
        allowed = resolve_special(self._special, allowed_special, text)
        run = self._runs([text], not allowed, self._needs_offsets)[0]
        id_array = run.ids
        ids = TokenIds(id_array)  # an array: no Python int per id (a book has 300,000)
        special_mask = np.isin(id_array, self._special_ids) if allowed and len(self._special_ids) else None
        byte_mask = self._is_byte[id_array] if self.byte_fallback and ids else None
        token_bytes = LazyTokenBytes(ids, self._bytes_of)
        chunk_finder = _WordChunks(run.words) if self.pre_tokenizer_state is not None else None
        raw = text.encode("utf-8")
        lead = self._lead(id_array, raw)
        if lead is not None:  # the tokens' bytes are the text: lay them out byte by byte
            enc = Encoding.from_byte_lengths(
                text, ids, token_bytes, lengths=self._lengths[id_array], special_mask=special_mask,
                byte_fallback_mask=byte_mask, chunk_finder=chunk_finder, lead=lead, id_array=id_array,
            )
        else:
            offsets = run.offsets
            if offsets is None:  # rare: a byte-level model whose tokens are not the text
                offsets = self._runs([text], not allowed, True)[0].offsets
            starts, ends, changed = _place(text, raw, offsets, self._bytes_of(ids), self._prepends)
            enc = Encoding(text, ids, token_bytes, starts, ends, special_mask, byte_mask,
                           chunk_finder, changed)
            enc.__dict__["id_array"] = id_array
        if chunk_finder is not None:
            chunk_finder.encoding = enc
        return enc

    def _lead(self, id_array: np.ndarray, raw: bytes) -> int | None:
        """0 if the tokens' bytes are the text's, 1 if they are the text after a prepended space,
        else None."""
        for lead in (b"", b" ") if self._prepends else (b"",):
            if self._table.spells(id_array, raw, lead):
                return len(lead)
        return None

    def _runs(self, texts: list[str], special_as_text: bool, offsets: bool) -> list["Run"]:
        """The library's encodings of `texts` (`_encodings`) as arrays."""
        import numpy as np

        return [Run(np.array(r.ids, dtype=np.int64),
                    np.array([-1 if w is None else w for w in r.word_ids], dtype=np.int64),
                    np.array(r.offsets, dtype=np.int64).reshape(-1, 2) if offsets else None)
                for r in self._encodings(texts, special_as_text)]

    def _encodings(self, texts: list[str], special_as_text: bool) -> list[tokenizers.Encoding]:
        """The library's encodings of `texts` (`add_special_tokens=False`: a post-processor's
        BOS is not the user's text); `special_as_text`: read special-token text as plain text.

        subtle: Tokenizer.encode runs in this thread; encode_batch hands its texts to the
        library's thread pool. For a handful of short words (the ones around an edit) waking
        those threads costs more than the work (~150 us against ~35 us for five words, and
        milliseconds while the other cores are busy), so those are encoded in this thread.
        """
        small = len(texts) <= SMALL_BATCH and sum(map(len, texts)) <= SMALL_BATCH * 16
        with self._library_lock, native_errors(self.source):
            self._library.encode_special_tokens = special_as_text
            try:
                if small:
                    results = [self._library.encode(t, add_special_tokens=False) for t in texts]
                else:
                    results = self._library.encode_batch(texts, add_special_tokens=False)
            except Exception as exc:  # noqa: BLE001 - the library's errors are bare Exceptions
                # e.g. a WordPiece or Unigram model without its unknown token meets a character
                # it lacks: the file cannot encode this text
                reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise TokexplorerError(f"{self.source}: tokenizers cannot encode this text with "
                                       f"this file's model: {reason}") from None
        return results

    def _bytes_of(self, ids: list[int]) -> list[bytes]:
        return list(map(self._bytes.__getitem__, ids))

    def decode_bytes(self, ids: list[int]) -> bytes:
        """Byte-level models: the tokens' bytes (a piece of a character stays a piece). Others:
        the model's decoder's text (it restores spaces WordPiece and Metaspace models drop)."""
        self._check_ids(ids)
        if self.byte_level:
            return b"".join(self._bytes_of(ids))
        return self._library.decode(ids, skip_special_tokens=False).encode("utf-8")

    def decode(self, ids: list[int]) -> str:
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    def token_bytes(self, token_id: int) -> bytes:
        self._check_ids([token_id])
        return self._bytes[token_id]

    def token_string(self, token_id: int) -> str:
        """The vocabulary entry as the file spells it ('Ġhello', '▁the', '##ing')."""
        self._check_ids([token_id])
        return self._strings[token_id]

    def _check_ids(self, ids: list[int]) -> None:
        n = self._n_vocab
        for i in ids:
            if not (0 <= i < n and self._valid[i]):
                raise TokexplorerError(f"token id {i} is not in {self.name} (valid ids: 0..{n - 1})")

    # --- merge trees (BPE) --------------------------------------------------------------

    def merge_tree(self, token_id: int) -> MergeNode:
        """The tree of the file's merges that builds a token: each token is made by the first
        merge in the file whose two parts join to it."""
        if not self.has_merges:
            raise TokexplorerError(
                f"{self.name} is a {self.model_type} model: its tokens are not built by merges, "
                "so it has no merge trees"
            )
        self._check_ids([token_id])
        if token_id in self.added_tokens:
            raise TokexplorerError(f"token {token_id} is an added token: it was added, not merged")
        from tokexplorer.core.analysis.merge_tree import MergeNode, check_depth
        from tokexplorer.core.backends.tiktoken_family import gpt2_byte_decoder

        parts = self._made_by()
        vocab_id = {s: i for i, s in enumerate(self._strings)}

        def build(token: str, depth: int = 0) -> MergeNode:
            i = vocab_id.get(token)
            data = self._bytes[i] if i is not None else self._to_bytes(token, gpt2_byte_decoder()
                                                                       if self.byte_level else None)[0]
            pair = parts.get(token)
            if pair is None:
                return MergeNode(i, data)
            check_depth(token_id, depth)
            return MergeNode(i, data, build(pair[0], depth + 1), build(pair[1], depth + 1))

        return build(self._strings[token_id])

    def _made_by(self) -> dict[str, tuple[str, str]]:
        """merged token -> the first merge (left, right) that makes it, read once from the file."""
        with self._lock:
            if not isinstance(self._merges_source, dict):
                parts: dict[str, tuple[str, str]] = {}
                for merge in self._merges_source or []:
                    pair = merge.split(" ", 1) if isinstance(merge, str) else merge
                    if len(pair) == 2:
                        left, right = pair
                        if right.startswith(self._prefix) and self._prefix:
                            right = right[len(self._prefix):]
                        parts.setdefault(left + right, (pair[0], pair[1]))
                self._merges_source = parts
            return self._merges_source


class Run(NamedTuple):
    """One text's encoding by the library, as arrays."""

    ids: np.ndarray  # int64 [n]
    words: np.ndarray  # int64 [n]: the pre-tokenizer's word each token came from, -1 for none
    offsets: np.ndarray | None  # int64 [n, 2]: character offsets, when asked for


def _state(part) -> dict | None:
    """A pipeline part as the library writes it to a file."""
    return None if part is None else json.loads(part.__getstate__())


class _WordChunks:
    """The pre-tokenizer's chunks ("words") as code-point spans: each run of tokens the library
    says came from one word covers one chunk (normaliser applied, special tokens alone), so the
    split is the pipeline's own, and needs no second pass over the text.

    >>> import numpy as np
    >>> from tokexplorer.core.encoding import Encoding
    >>> enc = Encoding.from_byte_lengths("ab c", [0, 1, 2], [b"a", b"b", b" c"])
    >>> chunks = _WordChunks(np.array([0, 0, 1])); chunks.encoding = enc
    >>> chunks("ab c")
    [(0, 2), (2, 4)]
    """

    def __init__(self, words: np.ndarray):
        self.words = words  # int64 [n]: the word each token came from, -1 for none
        self.encoding: Encoding | None = None

    def __call__(self, text: str) -> list[tuple[int, int]]:
        starts, ends = self.spans()
        return list(zip(starts.tolist(), ends.tolist()))

    def spans(self) -> tuple[np.ndarray, np.ndarray]:
        """The chunks' code-point starts and ends, as int64 arrays."""
        import numpy as np

        words, enc = self.words, self.encoding
        if not len(words):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        first = np.flatnonzero(np.concatenate([[True], (words[1:] != words[:-1]) | (words[1:] < 0)]))
        starts = enc.starts[first]
        ends = np.maximum.reduceat(enc.ends, first)
        keep = ends > starts
        return starts[keep].astype(np.int64), ends[keep].astype(np.int64)


def _place(text: str, raw: bytes, offsets, token_bytes: list[bytes],
           prepends: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Byte ranges in the user's text from the library's character offsets, and which tokens are
    not the text under them.

    Tokens whose spans overlap form a group (the pieces of one character, or a prepended '▁' and
    the token after it); a group whose bytes are the text under it, or that text after one
    prepended space, is laid out byte by byte.
    """
    import numpy as np

    n = len(token_bytes)
    # Character -> byte offsets, for every character boundary.
    cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    widths = 1 + (cps >= 0x80).astype(np.int64) + (cps >= 0x800) + (cps >= 0x10000)
    to_byte = np.concatenate([[0], np.cumsum(widths)])
    char_offsets = np.asarray(offsets, dtype=np.int64).reshape(n, 2)
    np.clip(char_offsets, 0, len(text), out=char_offsets)
    starts = to_byte[char_offsets[:, 0]]
    ends = to_byte[char_offsets[:, 1]]
    changed = np.zeros(n, dtype=bool)
    # A token starts a group unless it starts before an earlier token's end.
    reach = np.maximum.accumulate(ends) if n else ends
    first = np.ones(n, dtype=bool)
    first[1:] = starts[1:] >= reach[:-1]
    group_starts = np.flatnonzero(first)
    group_ends = np.append(group_starts[1:], n)
    # Most groups are one token that is the text under it: find those without a Python loop.
    lengths = np.fromiter(map(len, token_bytes), dtype=np.int64, count=n)
    single = group_ends - group_starts == 1
    candidates = group_starts[single & (lengths[group_starts] == ends[group_starts] - starts[group_starts])]
    exact = np.zeros(n, dtype=bool)
    if len(candidates):
        sizes = lengths[candidates]
        ours = np.frombuffer(b"".join([token_bytes[k] for k in candidates.tolist()]), dtype=np.uint8)
        at = np.cumsum(sizes) - sizes
        where = np.arange(int(sizes.sum())) - np.repeat(at - starts[candidates], sizes)
        differs = np.frombuffer(raw, dtype=np.uint8)[where] != ours
        bad = np.zeros(len(candidates), dtype=bool)
        hits = np.searchsorted(at, np.flatnonzero(differs), side="right") - 1
        bad[hits] = True
        exact[candidates[~bad]] = True
    for i, j in zip(group_starts.tolist(), group_ends.tolist()):
        if exact[i]:
            continue
        group_end = int(reach[j - 1])
        under = raw[starts[i]:group_end]
        joined = b"".join(token_bytes[i:j])
        lead = 0 if joined == under else 1 if (prepends and joined == b" " + under) else None
        if lead is not None:
            begin = int(starts[i])
            pos = begin - lead
            for k in range(i, j):
                size = len(token_bytes[k])
                starts[k], ends[k] = max(pos, begin), max(pos + size, begin)
                pos += size
        else:
            for k in range(i, j):
                tb, span = token_bytes[k], raw[starts[k]:ends[k]]
                changed[k] = tb != span and not (prepends and tb == b" " + span)
    return starts, ends, changed


def _model_vocab(model: dict) -> dict[str, int]:
    """token -> id from a tokenizer.json "model": a mapping (BPE, WordPiece, WordLevel) or a list
    of [piece, score] in id order (Unigram)."""
    vocab = model.get("vocab") or {}
    if isinstance(vocab, list):
        return {entry[0]: i for i, entry in enumerate(vocab)}
    return dict(vocab)


@functools.cache
def _byte_level_alphabet() -> tuple[dict[int, str], re.Pattern]:
    """GPT-2's byte alphabet as a str.translate table to Latin-1, and a regex of what is outside it."""
    from tokexplorer.core.backends.tiktoken_family import gpt2_byte_decoder

    byte_level = {char: chr(byte) for char, byte in gpt2_byte_decoder().items()}
    return str.maketrans(byte_level), re.compile("[^" + "".join(map(re.escape, byte_level)) + "]")


def _byte_level_bytes(strings: list[str]) -> list[bytes]:
    """Each entry's bytes with GPT-2's byte alphabet undone; an entry with a character outside
    that alphabet is its own UTF-8 text.

    >>> _byte_level_bytes(["Ġhi", "ðŁĳĭ", "<｜end｜>"])
    [b' hi', b'\\xf0\\x9f\\x91\\x8b', b'<\\xef\\xbd\\x9cend\\xef\\xbd\\x9c>']
    """
    to_latin1, outside = _byte_level_alphabet()
    return [token.encode("utf-8") if outside.search(token)
            else token.translate(to_latin1).encode("latin-1") for token in strings]


def _add_config_tokens(tok: tokenizers.Tokenizer, config: dict) -> None:
    """Special tokens a tokenizer_config.json names (bos_token, eos_token, ..., its
    added_tokens_decoder, additional_special_tokens) that the tokenizer.json lacks."""
    names: list[tuple[str, bool]] = []
    for key in ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token",
                "mask_token"):
        value = config.get(key)
        content = value.get("content") if isinstance(value, dict) else value
        if isinstance(content, str) and content:
            names.append((content, True))
    for value in (config.get("added_tokens_decoder") or {}).values():
        if isinstance(value, dict) and isinstance(value.get("content"), str):
            names.append((value["content"], bool(value.get("special", True))))
    for value in config.get("additional_special_tokens") or []:
        content = value.get("content") if isinstance(value, dict) else value
        if isinstance(content, str) and content:
            names.append((content, True))
    missing = [tokenizers.AddedToken(c, special=s, normalized=False) for c, s in dict(names).items()
               if tok.token_to_id(c) is None]  # in neither the vocabulary nor the added tokens
    if missing:
        tok.add_tokens(missing)


def _check_file_ids(spec: dict, model: dict, source: str) -> None:
    """Refuse ids that are not whole numbers from 0, or beyond what the file lists (the entries
    and a gap, `file_budget.id_limit`): the tables built from them are indexed by id."""
    from tokexplorer.core.files.file_budget import check_id, check_token_count

    vocab = model.get("vocab") or {}
    added = spec.get("added_tokens") or []
    if not isinstance(added, list):
        return  # the library refuses it with its own message
    n_entries = len(vocab) + len(added) if isinstance(vocab, (dict, list)) else len(added)
    check_token_count(n_entries, source=source, what="tokens and added tokens")
    named = [(t.get("content"), t.get("id")) for t in added if isinstance(t, dict)]
    if isinstance(vocab, dict):
        named += list(vocab.items())
    for token, token_id in named:
        if not isinstance(token_id, int) or isinstance(token_id, bool) or token_id < 0:
            raise TokexplorerError(f"{source}: the token {str(token)[:40]!r} has id "
                                   f"{json.dumps(token_id)[:40]}; ids are whole numbers from 0")
        check_id(token_id, n_entries, source=source, what=f"the token {str(token)[:40]!r}")


def _check_normalizer(node, source: str) -> None:
    """Refuse the normalisers `tokenizers`' core panics on (an index out of bounds, with three lines
    of its own on stderr) once it encodes: a Replace whose pattern matches the empty string, a
    Prepend of nothing.

    >>> _check_normalizer({"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": ""}]}, "t.json")
    Traceback (most recent call last):
    ...
    tokexplorer.core.tokenizer.TokexplorerError: t.json: its normalizer prepends an empty string, which the tokenizers library fails on; the file is corrupt or crafted
    """
    import regex

    if not isinstance(node, dict):
        return
    kind = node.get("type")
    why = None
    if kind == "Sequence":
        for part in node.get("normalizers") or []:
            _check_normalizer(part, source)
    elif kind == "Prepend" and node.get("prepend") == "":
        why = "prepends an empty string"
    elif kind == "Replace" and isinstance(node.get("pattern"), dict):
        pattern = node["pattern"]
        if pattern.get("String") == "":
            why = "replaces an empty string"
        elif isinstance(pattern.get("Regex"), str):
            try:
                empty = any(m.start() == m.end() for m in regex.finditer(pattern["Regex"], "a b 1"))
            except (regex.error, TypeError):
                empty = False  # the library says what is wrong with it
            if empty:
                why = f"replaces matches of {pattern['Regex']!r}, which matches the empty string"
    if why:
        raise TokexplorerError(f"{source}: its normalizer {why}, which the tokenizers library fails "
                               "on; the file is corrupt or crafted")


def load_tokenizer_json(path: Path, data: bytes) -> TokenizersTokenizer:
    """A user's tokenizer.json, with the tokenizer_config.json beside it if there is one."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TokexplorerError(f"{path}: not a tokenizer.json (not UTF-8 text)") from None
    config = None
    beside = path.with_name("tokenizer_config.json")
    if beside.exists() and beside != path:
        from tokexplorer.core.files.file_budget import parse_json, read_limited

        data = read_limited(beside, what="tokenizer_config.json")  # a device or FIFO refused
        try:
            config = parse_json(data, source=str(beside), kind="tokenizer_config.json")
        except TokexplorerError as exc:
            why = str(exc).removeprefix(f"{beside}: ")
            raise TokexplorerError(
                f"{beside} is not valid JSON ({why}); fix it or move it away to open {path.name} alone"
            ) from None
    name = path.parent.name if path.name == "tokenizer.json" and path.parent.name else path.stem
    return TokenizersTokenizer(text, name=name, source=str(path), config=config if isinstance(config, dict) else None)


def _config_token(value) -> str:
    """A tokenizer_config.json token entry: a string, or an AddedToken object with "content"."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else ""
