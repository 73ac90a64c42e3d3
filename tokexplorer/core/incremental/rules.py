"""Which locality rule an encoder uses: the one that a tokenizer's declared `locality()` proves
exact, or None (then every edit re-encodes the whole text: correct, not fast).

A rule is chosen only for the ways of encoding whose full encode the rules reproduce (ids, masks,
chunks); tests/core/test_incremental.py checks each against it. No family is named here: the
tokenizer says how it cuts the text.
"""

from __future__ import annotations

import threading
import weakref
from typing import Callable

from tokexplorer.core.backends.gguf_model import DEEPSEEK_V3_PATTERNS
from tokexplorer.core.incremental.line_rule import LineRule, line_rule
from tokexplorer.core.incremental.regex_rule import LOCAL_PATTERNS, RegexRule
from tokexplorer.core.incremental.splits_rule import SplitsRule, added_tokens
from tokexplorer.core.tokenizer import PipelineSplits, RegexChunks, SentencePieceModel, Tokenizer

Rule = RegexRule | SplitsRule | LineRule

# SentencePiece rules load two processors, and DeepSeek's regex of its 1,283 added tokens takes a
# second to compile, so they are built once per tokenizer. (The other rules are cheap, and refer to
# their tokenizer, which a weak-keyed cache would then keep alive.)
_cached_rules: "weakref.WeakKeyDictionary[object, object]" = weakref.WeakKeyDictionary()
_cached_rules_lock = threading.Lock()


def _cached(tokenizer, build: Callable[[], object]):
    """build(), once per tokenizer."""
    with _cached_rules_lock:
        try:
            if tokenizer not in _cached_rules:
                _cached_rules[tokenizer] = build()
            return _cached_rules[tokenizer]
        except TypeError:  # not hashable or not weakly referable: build it for this encoder
            return build()


def local_rule(tokenizer: Tokenizer) -> Rule | None:
    """The rule that re-encodes a window around an edit exactly for `tokenizer`, or None."""
    locality = tokenizer.locality()
    if isinstance(locality, RegexChunks):
        return RegexRule(tokenizer, locality) if locality.pattern in LOCAL_PATTERNS else None
    if isinstance(locality, PipelineSplits):
        added = _cached(tokenizer, lambda: added_tokens(locality)
                        if list(locality.patterns) == DEEPSEEK_V3_PATTERNS else None)
        return None if added is None else SplitsRule(tokenizer, locality, added)
    if isinstance(locality, SentencePieceModel):
        return _cached(tokenizer, lambda: line_rule(tokenizer, locality.model_proto))
    return None
