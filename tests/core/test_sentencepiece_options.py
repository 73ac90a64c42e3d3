"""The dummy-prefix flag read from a SentencePiece model's wire format (so that encoding does not
import protobuf's model classes) agrees with protobuf's own parse, and encoding follows it."""

from __future__ import annotations

import io

import pytest
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2

from tokexplorer.core.backends.sentencepiece_family import SentencePieceTokenizer, adds_dummy_prefix
from tokexplorer.core.registry import LLAMA_SP

TEXT = "\n".join(["the quick brown fox jumps over the lazy dog", "numbers 12345 and emoji 😀",
                  "naïve café résumé", "東京 と 大阪"] * 40)


def _trained(**options) -> bytes:
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(TEXT.splitlines()), model_writer=out,
                                   vocab_size=400, hard_vocab_limit=False,
                                   character_coverage=1.0, **options)
    return out.getvalue()


def _protobuf_flag(model: bytes) -> bool:
    m = sentencepiece_model_pb2.ModelProto()
    m.ParseFromString(model)
    return m.normalizer_spec.add_dummy_prefix


@pytest.mark.parametrize("options", [{}, {"add_dummy_prefix": False}, {"add_dummy_prefix": True},
                                     {"model_type": "bpe", "add_dummy_prefix": False, "byte_fallback": True}])
def test_the_wire_reading_agrees_with_protobuf(options):
    model = _trained(**options)
    assert adds_dummy_prefix(model) == _protobuf_flag(model) == options.get("add_dummy_prefix", True)
    tok = SentencePieceTokenizer(model, name="toy")
    assert tok.options["add_dummy_prefix"] == adds_dummy_prefix(model)
    enc = tok.encode("the fox")
    # Without the dummy prefix the first token spells "the" from the text's first character.
    assert tok.decode(enc.ids) == "the fox"
    assert (enc.spans[0][0], tok.token_bytes(enc.ids[0]).startswith(b" ")) == (0, adds_dummy_prefix(model))


def test_llama_sp_adds_the_dummy_prefix():
    assert adds_dummy_prefix(LLAMA_SP.read()) is True is _protobuf_flag(LLAMA_SP.read())


def test_a_proto_the_reader_cannot_follow_counts_as_the_default():
    assert adds_dummy_prefix(b"\x1a\x05\x18") is True  # cut inside the normaliser spec
    assert adds_dummy_prefix(b"\x1f") is True  # wire type 7 does not exist
