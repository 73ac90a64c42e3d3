"""tokexplorer: explore how LLM tokenizers turn text into tokens, offline.

`tokexplorer.core` is the library (no Qt); `tokexplorer.gui` the desktop app; `tokexplorer.cli.main`
the command line.
"""

__version__ = "0.1.0"
