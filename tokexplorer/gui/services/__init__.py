"""The window's services, Qt-side: the link to the tokenizing server, the editor's tokenize service
and background jobs, files in and out, autosave, training in a child process, and the handler of
uncaught errors.

No widget lives here; services emit Qt signals that `AppState` and the views observe.
"""
