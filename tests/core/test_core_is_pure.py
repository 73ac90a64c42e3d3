"""tokexplorer.core imports no Qt and no pyqtgraph."""

import pkgutil
import subprocess
import sys

import tokexplorer.core


def test_core_imports_no_qt():
    modules = [m.name for m in pkgutil.iter_modules(tokexplorer.core.__path__, "tokexplorer.core.")]
    assert len(modules) >= 8
    script = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6'))\n"
        "print(','.join(bad))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""
