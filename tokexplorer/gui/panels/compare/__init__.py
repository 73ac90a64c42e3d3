"""The compare view: the window's text in 2 to 4 tokenizers side by side.

`view` lays the columns out and keeps them in step (the central widget, `CompareView`); `pane` is
one pane after the first (a token view of the editor's document with its own tokenize service);
`header` the texts above each pane; `marks` the boundaries a pane has and others lack. The shared
token view and the editor itself are in `gui.editor`; the counting is `core.analysis.compare`'s.
"""

from tokexplorer.gui.panels.compare.view import CompareView

__all__ = ["CompareView"]
