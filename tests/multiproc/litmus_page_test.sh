#!/usr/bin/env bash
# The page iso-litmus draws, rendered by headless Chromium: a run of SB on 3 nodes as HTML
# and Chrome trace JSON; Chromium's DOM must hold the 3 lifelines, the isochron boxes and
# the verdict; the screenshot stays in the output folder as the test's artifact.
#   litmus_page_test.sh <isorun> <iso-litmus> <output folder>
set -euo pipefail
isorun=$1
litmus=$2
out=$3
mkdir -p "$out"
rm -f "$out"/litmus-SB.*

"$isorun" -n 3 --timeout 60 -- "$litmus" --iterations 20 --html "$out/litmus-SB.html" \
  --chrome-trace "$out/litmus-SB.json" SB | tail -1

if command -v python3 >/dev/null; then
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["traceEvents"]' \
    "$out/litmus-SB.json"
  echo "chrome trace: valid JSON"
fi

chromium=$(command -v chromium-headless-shell || true)
if [ -z "$chromium" ]; then
  echo "SKIPPED: chromium-headless-shell is not installed (tools/install-deps.sh installs it)"
  exit 77
fi
dom=$("$chromium" --no-sandbox --disable-gpu --dump-dom "file://$out/litmus-SB.html" 2>/dev/null)
lifelines=$(grep -o 'class="lifeline"' <<<"$dom" | wc -l)
boxes=$(grep -o '<g class="isochron"' <<<"$dom" | wc -l)
verdict=$(grep -o '<p id="verdict">[^<]*' <<<"$dom" | sed 's/.*>//')
echo "rendered: $lifelines lifelines, $boxes isochrons, verdict '$verdict'"
[ "$lifelines" -eq 3 ] || { echo "FAIL: expected 3 lifelines"; exit 1; }
[ "$boxes" -ge 4 ] || { echo "FAIL: expected at least the 4 isochrons of SB"; exit 1; }
[[ "$verdict" == outcome*": allowed under SC" ]] || { echo "FAIL: verdict"; exit 1; }
"$chromium" --no-sandbox --disable-gpu --screenshot="$out/litmus-SB.png" --window-size=900,900 \
  "file://$out/litmus-SB.html" >/dev/null 2>&1
[ -s "$out/litmus-SB.png" ] || { echo "FAIL: no screenshot"; exit 1; }
echo "page: OK (screenshot $out/litmus-SB.png)"
