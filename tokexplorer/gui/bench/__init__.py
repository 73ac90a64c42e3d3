"""Drivers of the real window for `tokexplorer bench --gui` and friends, and the editing soak.

Each drives a real `MainWindow` and returns numbers; `tokexplorer/bench` formats them beside their
peers. Nothing in the application imports these.
"""
