"""The window's views other than the editor, one module each; each observes the AppState."""
