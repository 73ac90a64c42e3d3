"""The desktop application: PySide6 widgets and pyqtgraph plots, painting what the tokenizing
server answers.

The root holds the app (`app.run_gui(argv)`), the main window (which only creates and wires), the
one `AppState` the views observe, and the settings. `editor/` is the editor pane, `panels/` every
other view (one module or package each), `widgets/` what several views share, `services/` the
work behind the views (the server link, files, autosave, training), `bench/` the drivers of
`tokexplorer bench --gui`. This package is the only place Qt lives; it runs no tokenizer (it asks
`tokexplorer.server`) and never imports the command line.
"""
