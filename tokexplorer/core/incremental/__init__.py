"""Re-tokenizing after an edit: the encoder that re-encodes only a window around the edit, exactly
as a full encode would.

The tokenizing server holds one per open document (`server.documents`); nothing here knows about
processes or the window.
"""
