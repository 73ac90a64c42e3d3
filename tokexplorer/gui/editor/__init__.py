"""The editor and what lives on it.

`token_view` is a text with one tokenizer's tokens painted under it (soft breaks, hover, marks),
shared by the editor and the compare panes; `line_tokens` says which tokens a laid-out line shows;
`token_paint` draws them. `editor` is the window's text: loading, following edits in its
`SourceMap`, the one accessor of the user's text (`TokenEditor.user_text`), and its requests to
the tokenize service through `sync`. Beside it: the find bar, the message banner, the repaint
pacer and the selection as the core counts it.

The docked views (and the compare view) are in `gui.panels`; the document's tokens come from
`gui.services`.
"""
