"""`python -m tokexplorer`, the same as the `tokexplorer` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
