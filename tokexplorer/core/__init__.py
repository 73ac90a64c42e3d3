"""tokexplorer's core: tokenizers, encodings with spans and flags, split patterns, Unicode
inspection and BPE training. Pure Python: imports no Qt and no pyqtgraph.

>>> from tokexplorer.core import load_tokenizer
>>> load_tokenizer("cl100k_base").encode("hello world").ids
[15339, 1917]
"""

from .encoding import Encoding, Token, TokenFlag
from .patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, O200K_SPLIT_PATTERN, resolve_pattern, split
from .registry import builtin_names, get_builtin, load_tokenizer
from .tokenizer import DisallowedSpecialError, Tokenizer, TokexplorerError
from .unicode_info import inspect_text

__all__ = [
    "Encoding", "Token", "TokenFlag", "GPT2_SPLIT_PATTERN", "GPT4_SPLIT_PATTERN",
    "O200K_SPLIT_PATTERN", "resolve_pattern", "split", "builtin_names", "get_builtin",
    "load_tokenizer", "DisallowedSpecialError", "Tokenizer", "TokexplorerError", "inspect_text",
]
