"""The tokenizer families behind the `Tokenizer` protocol: tiktoken, SentencePiece, Hugging Face
`tokenizer.json`, GGUF metadata and the byte-level BPE trained here, plus the normalisation map a
family applies before splitting.

Each module adapts one library's own core; none implements another's algorithm. Where a tokenizer
comes from (built-in or file) is `core.registry`'s business, not theirs.
"""
