"""`python -m tokexplorer`, the same as the `tokexplorer` command."""

import signal
import sys

if __name__ == "__main__":
    if getattr(sys, "frozen", False):  # a frozen app (PyInstaller) starts the trainer's process here
        import multiprocessing  # (only then: the import costs every command a few tens of ms)

        multiprocessing.freeze_support()
    # subtle: a Ctrl-C while numpy imports becomes an ImportError with a page of advice; hold it
    # until the command line has imported, then stop as an interrupt. main() catches later ones.
    pressed = []
    previous = signal.signal(signal.SIGINT, lambda *_: pressed.append(True))
    from tokexplorer.cli.main import main

    signal.signal(signal.SIGINT, previous)
    if pressed:
        print("tokexplorer: interrupted", file=sys.stderr)
        sys.exit(130)
    sys.exit(main())
