"""The editor pane and what lives on it: painting tokens under the text, the find bar, the message
banner above it, the repaint pacer and the selection as the core counts it.

The docked views are in `gui.panels`; the document's tokens come from `gui.services`.
"""
