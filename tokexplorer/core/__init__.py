"""tokexplorer's core: tokenizers, encodings with spans and flags, split patterns, Unicode
inspection and BPE training. Pure Python: imports no Qt and no pyqtgraph.

>>> from tokexplorer.core import load_tokenizer
>>> load_tokenizer("cl100k_base").encode("hello world").ids
[15339, 1917]
"""
