#!/usr/bin/env bash
# Build the one-folder application with PyInstaller in a fresh venv, then smoke-test it.
#   packaging/build.sh            # -> build/packaging/dist/tokexplorer/tokexplorer
# PyInstaller: the standard freezer for PySide6 apps (Qt's own pyside6-deploy wraps Nuitka, which
# compiles for many minutes); a one-folder bundle starts fast and needs no unpacking.
set -euo pipefail
cd "$(dirname "$0")/.."
work="${TOKEXPLORER_BUILD_DIR:-build/packaging}"
rm -rf "$work/venv"
python3 -m venv "$work/venv"
. "$work/venv/bin/activate"
# Editable: the compiled merge loop of training is built beside its source (tokexplorer/core),
# where the spec's Analysis (pathex: the checkout) finds the package.
pip install --quiet -e . "pyinstaller>=6,<7"
pyinstaller --noconfirm --log-level WARN --distpath "$work/dist" --workpath "$work/build" \
    packaging/tokexplorer.spec
du -sh "$work/dist/tokexplorer"
packaging/smoke_test.sh "$work/dist/tokexplorer/tokexplorer"
