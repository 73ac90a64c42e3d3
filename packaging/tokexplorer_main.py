"""The bundled application's entry point: the same `tokexplorer` command as a pip install."""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()  # training may run in a spawned process
    from tokexplorer.cli.main import main

    sys.exit(main())
