"""Chat templates counted exactly: `conversation` renders a conversation to the text a model
receives (the tokenizer's Jinja template or a named format) and counts its tokens per message;
`sandbox` is the Jinja environment whose operators, filters and loops are bounded; `process` runs
each render in a short-lived child with a time and memory limit, which `limits` sets by platform
(rlimits, a Windows Job object, or the parent's memory guard).

Nothing here tokenizes beyond counting a rendered text; the chat view and `tokexplorer chat` show it.
"""
