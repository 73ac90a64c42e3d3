"""The lecture as a guided path: chapters of steps that follow "Let's build the GPT tokenizer" and
its notebooks (Unicode and UTF-8, BPE by hand, decoding and encoding, the regex pre-split, GPT-2 vs
GPT-4, special tokens, SentencePiece, vocab size, the quirks).

`step` holds the records (a step says what to load, which tokenizer and view, and which numbers
the lecture printed), `numbers` the functions that compute each number the way the app does,
`chapters` the chapters themselves as data, and `check` what a step's numbers come to on a text:
the app's value beside the lecture's, and whether they agree. The Learn view shows them and the
tokenizing server computes them (`protocol.LessonCheck`); nothing here imports Qt, and no tokenizer
library is imported before a number asks for a tokenizer.
"""
