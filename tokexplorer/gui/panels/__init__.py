"""The window's views, one module each: every panel takes the `AppState` (and the services it
needs), observes the state's signals and never imports another panel."""
