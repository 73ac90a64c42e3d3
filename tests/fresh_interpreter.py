"""Run code in a fresh Python and see which packages it imported: what a start-up or a load leaves
in sys.modules, which an in-process test cannot see (pytest has imported everything already)."""

from __future__ import annotations

import subprocess
import sys


def imported(code: str, packages: tuple[str, ...], *, timeout: float = 300) -> list[str]:
    """The modules of `packages` (top-level names) that `code` leaves imported, sorted."""
    probe = code + f"\nimport sys\nprint(sorted(m for m in sys.modules if m.split('.')[0] in {packages!r}))\n"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return eval(proc.stdout.strip().splitlines()[-1])  # a list of module names, printed by us
