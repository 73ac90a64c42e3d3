"""Widgets and helpers shared by several views: colours and palettes, the figures drawn with
pyqtgraph, the one-line fitting label, the dialogs the window asks through, the About box.

No view lives here; each view is a module of `gui.panels` or `gui.editor`.
"""
