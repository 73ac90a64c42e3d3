"""The window's views, one module each; each takes the AppState (and the services it needs)."""
