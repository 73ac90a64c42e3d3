"""The command line: `main.main` parses `tokexplorer COMMAND ...` (or starts the window), each
group of sub-commands is a module of `commands`, and `arguments` / `output` are what they share.

The command line calls the core in process; it never imports the window, and the window never
imports it.
"""
