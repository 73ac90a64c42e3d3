"""A split pattern that does not match everywhere ("[a-z]+" skips spaces and punctuation): the ids
stay minbpe's (the text between matches has no token), every span is where its bytes are in the
text, and the text left out is reported as dropped; checked against a slow reference, through
tiktoken's core and through the Python encoder."""

from __future__ import annotations

import pytest
import regex
from hypothesis import given, strategies as st

from tokexplorer.core.backends.trained_bpe import BPETokenizer
from tokexplorer.core.training.bpe import train
from tokexplorer.core.encoding import TokenFlag

from .. import reference_bpe
from .test_spans import reference_spans

CORPUS = "hi there, the other thing there! héllo wörld 😀😀 12 345 " * 30
PATTERNS = ["[a-z]+", r"\p{L}+", r"[a-z]+(?= )|\d", r"(?:😀|[éö])+"]


class PythonBPE(BPETokenizer):
    """The same tokenizer, always through the Python encoder (minbpe's merge-by-pair loop)."""

    def _fast_encoder(self):
        return None


@pytest.fixture(scope="module", params=PATTERNS)
def pair(request):
    fast = train(CORPUS, 300, pattern=request.param)
    slow = PythonBPE(fast.merges, fast.split_pattern)
    return fast, slow


def reference(text: str, tok: BPETokenizer):
    """(ids, (start, end, partial) per token, dropped spans): chunk by chunk, as minbpe finds them."""
    ids, spans, dropped, pos = [], [], [], 0
    for m in regex.finditer(tok.split_pattern, text):
        if m.start() == m.end():
            continue
        if m.start() > pos:
            dropped.append((pos, m.start()))
        chunk = reference_bpe.encode_chunk(m.group().encode("utf-8"), tok.merges)
        ids += chunk
        spans += [(s + m.start(), e + m.start(), p)
                  for s, e, p in reference_spans(m.group(), [tok.vocab[i] for i in chunk], 0)]
        pos = m.end()
    if pos < len(text):
        dropped.append((pos, len(text)))
    return ids, spans, tuple(dropped)


def test_the_issue_case_places_there_after_the_comma():
    tok = train(CORPUS, 300, pattern="[a-z]+")
    enc = tok.encode("hi, there!")
    assert enc.dropped == ((2, 4), (9, 10))
    assert [enc.text[s:e] for s, e in enc.spans] == [t.text for t in enc]  # every token over its text
    assert enc.spans[0][1] <= 2 and enc.spans[1][0] >= 4


@given(st.text(alphabet="ab hi,thre!1😀éö\n", max_size=40))
def test_spans_and_dropped_text_equal_the_reference(pair, text):
    for tok in pair:
        enc = tok.encode(text)
        ids, spans, dropped = reference(text, tok)
        assert enc.ids == ids
        assert [(s, e, bool(f & TokenFlag.PARTIAL)) for (s, e), f in zip(enc.spans, enc.flags)] == spans
        assert enc.dropped == dropped
