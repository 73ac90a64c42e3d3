"""tokexplorer: explore how LLM tokenizers turn text into tokens, offline.

Five parts, each a package, each importing only those before it:

- `core`: the library, pure Python, no Qt: tokenizer families, encodings, training, analysis, files.
- `server`: the core behind a process boundary for the window (a tokenizing server and its client).
- `gui`: the desktop app (PySide6 + pyqtgraph); it paints and asks the server, it tokenizes nothing.
- `cli`: the `tokexplorer` command; it calls the core in process and never imports the window.
- `bench`: `tokexplorer bench`, each measurement beside its peer in the same run.

`tests/test_layers.py` holds the parts to these rules.
"""

__version__ = "0.1.0"
