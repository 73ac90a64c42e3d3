"""Training tokenizers: byte-level BPE with minbpe's exact merges (a compiled merge loop or pure
Python), SentencePiece with the Llama 2 recipe, and the runner that trains in a child process with
progress for the window.

Saving a trained tokenizer is in `core.files`; what vocab size buys (sweeps) is in `core.analysis`.
"""
