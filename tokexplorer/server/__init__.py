"""The tokenizing server: the core behind a process boundary, for the window.

The server's half: `protocol` (every request and answer), `columns` (tokens as arrays and their
splice), `documents` (each open text and its incremental encoder), `handlers` (one function per
request), `tokenizers` (the registered tokenizers), `process` (its threads). The window's half,
Qt-free as well: `client` (starts the process and talks over the pipe), `catalog` (the tokenizers
the picker offers), `document_tokens` and `tokenized` (the window's copy of a document's tokens,
spliced from each answer).

The window's process paints and asks; this package's process (`process.serve`, started with the
`spawn` method by `client.ServerProcess`) owns every tokenizer the window uses, each open
document's text and its incremental encoder, and answers the requests of `protocol`. It imports
no Qt. The command line and the library call the core in process instead: the server is not a
second implementation, only where the window's calls into the core run.
"""
