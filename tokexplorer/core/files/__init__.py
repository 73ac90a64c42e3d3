"""Files on disk: text read and written exactly and atomically, recovery files of unsaved text,
minbpe / `.tiktoken` / GPT-2 files of trained tokenizers, and the size budget of what the window
opens.

Reading a tokenizer file into a Tokenizer is `core.registry`'s and the backends' business.
"""
