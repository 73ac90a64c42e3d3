"""Training tokenizers: byte-level BPE with minbpe's exact merges (a compiled merge loop or pure
Python, `bpe`), SentencePiece with the Llama 2 recipe (`sentencepiece`), the one run that reads a
corpus, trains and reports progress for both the command line and the window (`runner`), and the
window's trainer process that sends that progress over a pipe (`child`).

Saving a trained tokenizer is in `core.files`; what vocab size buys (sweeps) is in `core.analysis`.
It holds no Qt and no command-line parsing.
"""
