"""The tokenizing server: the core behind a process boundary, for the window.

The window's process paints and asks; this package's process (`process.serve`, started with the
`spawn` method by `client.ServerProcess`) owns every tokenizer the window uses, each open
document's text and its incremental encoder, and answers the requests of `protocol`. It imports
no Qt. The command line and the library call the core in process instead: the server is not a
second implementation, only where the window's calls into the core run.
"""
