"""`python -m tokexplorer`, the same as the `tokexplorer` command."""

import sys

if __name__ == "__main__":
    if getattr(sys, "frozen", False):  # a frozen app (PyInstaller) starts the trainer's process here
        import multiprocessing  # (only then: the import costs every command a few tens of ms)

        multiprocessing.freeze_support()
    # A Ctrl-C while the command line imports is an interrupt, said in one line. (cli.main imports
    # no library: numpy, which turns a Ctrl-C during its import into an ImportError, is imported
    # by the commands, inside main(), which says so too.)
    try:
        from tokexplorer.cli.main import main
    except KeyboardInterrupt:
        print("tokexplorer: interrupted", file=sys.stderr)
        sys.exit(130)
    sys.exit(main())
