#!/usr/bin/env bash
# Regenerate the README's pictures: one per view, each in its workspace, drawn offscreen by
# `tokexplorer --screenshot` on the welcome text (resources/welcome.txt, shown as at a first start)
# in a window of 1600x1000,
# plus the plots the command line draws.
#   docs/screenshots.sh            (from a checkout, with tokexplorer importable)
set -euo pipefail
cd "$(dirname "$0")/.."
export QT_QPA_PLATFORM=offscreen
welcome=resources/welcome.txt
at() {  # the code-point offset of a string in the welcome text
    python3 -c "import sys; t = open('$welcome', encoding='utf-8').read(); print(t.index(sys.argv[1]))" "$1"
}
shot() {  # shot NAME VIEW [options...]
    local name=$1 view=$2
    shift 2
    QT_QPA_PLATFORM="offscreen:configfile=$screen" \
        python -m tokexplorer --screenshot "docs/$name.png" --view "$view" "$@" > /dev/null
    echo "docs/$name.png"
}
screen=$(mktemp)  # a described 2000x1250 screen: the first window takes 80 %, 1600x1000
trap 'rm -f "$screen"' EXIT
echo '{"screens": [{"name": "docs", "x": 0, "y": 0, "width": 2000, "height": 1250, "logicalDpi": 96}]}' > "$screen"
hello=$(at "Hello")
emoji=$(at "👋🏽")
greet=$(at " greet")
shot editor editor -t cl100k_base --select "$hello:$((hello + 5))"
shot compare compare -t gpt2 -t cl100k_base -t o200k_base -t llama-sp
shot inspector inspector -t gpt2 --select "$emoji:$((emoji + 2))"
shot merges merges -t gpt2 --select "$((greet + 1))"
shot trace trace -t cl100k_base --select "$((greet + 1))"
shot vocab vocab -t o200k_base --select "$hello"
shot chat chat -t cl100k_base
shot training training -t cl100k_base
shot learn learn -t cl100k_base
shot bpe bpe -t cl100k_base --select "$hello:$((hello + 5))"
python -m tokexplorer report languages --plot docs/languages.png > /dev/null && echo docs/languages.png
