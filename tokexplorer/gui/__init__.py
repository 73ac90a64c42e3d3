"""The desktop application: PySide6 widgets, panels and workers over `tokexplorer.core`.

This package is the only place Qt lives. `app.run_gui(argv)` starts it; the core never imports it.
"""
