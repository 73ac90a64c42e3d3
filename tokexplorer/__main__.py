"""`python -m tokexplorer`, the same as the `tokexplorer` command."""

import sys

from .cli import main

if __name__ == "__main__":
    import multiprocessing

    multiprocessing.freeze_support()  # a frozen app (PyInstaller) starts the trainer's process here
    sys.exit(main())
