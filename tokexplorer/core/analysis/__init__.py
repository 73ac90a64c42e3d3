"""What the views and commands show about a text or a tokenizer, computed here: comparisons, tokens
per language, sweeps, token lengths, merge trees, encode traces, the vocabulary, Unicode facts,
selections, id look-ups and the quirks gallery.

Each module returns plain result objects; drawing them is the window's or the command line's job.
"""
