#!/usr/bin/env bash
# Smoke-test a tokexplorer executable (the bundle's, or the one a pip install put on PATH):
# --version, list, encode, and a --screenshot of every view, offscreen, from a scratch directory
# and without network when `unshare -n` is allowed.
#   packaging/smoke_test.sh build/packaging/dist/tokexplorer/tokexplorer
set -euo pipefail
app="$(realpath "${1:-$(command -v tokexplorer)}")"
out="$(mktemp -d)"
cd "$out"
export QT_QPA_PLATFORM=offscreen
offline=()
if unshare -n true 2>/dev/null; then offline=(unshare -n); fi
run() { echo "\$ tokexplorer $*"; "${offline[@]}" "$app" "$@"; }
run --version
run list
run encode -t cl100k_base "hello world"
printf 'Hello, world! 1234567 + 89 = ?\n    if x:\n        return "emoji 👋🏽 and 한국어"\n' > sample.txt
for view in editor compare inspector merges trace vocab chat training plots; do
    start=$(date +%s.%N)
    run --screenshot "$out/$view.png" --view "$view" --open sample.txt --settings-dir "$out/settings"
    end=$(date +%s.%N)
    test -s "$out/$view.png"
    echo "  $view: $(python3 -c "print(f'{$end - $start:.1f} s')") $(stat -c %s "$out/$view.png") bytes"
done
echo "smoke test passed: screenshots in $out"
