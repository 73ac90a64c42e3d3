"""Re-tokenizing after an edit: the encoder that re-encodes only a window around the edit, exactly
as a full encode would.

`encoder` holds `IncrementalEncoder` (and `text_edit`); `rules` picks a locality rule from what
the tokenizer declares (`Tokenizer.locality`); `regex_rule`, `splits_rule` and `line_rule` are the
three rules; `splice` builds the new Encoding from the old one and a window's tokens; `state`
holds what an encoder keeps between edits. The tokenizing server holds one encoder per open
document (`server.documents`); nothing here knows about processes or the window, nor about a
tokenizer's family.
"""
