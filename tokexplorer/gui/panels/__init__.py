"""The window's views, one module each; each observes the AppState and never imports another."""
