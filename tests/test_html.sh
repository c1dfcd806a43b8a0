#!/usr/bin/env bash
# slack report --html and slack diff --html: the pages of the committed H200 traces (the probe,
# the call-site traces, the seed's forms of GPU run 21, the accuracy suite's launch storm), of a
# synthetic 100,000-event trace and of a two-GPU one, checked by tests/tools/check_html.py:
# self-contained (nothing fetched, no external script), elements nested, every section present;
# in headless Chromium: no console error, every chart drawn with its text alternative, the window
# chart zooms, the page prints; a screenshot of each page saved (SLACK_HTML_SHOTS=DIR keeps them).
# Each page is under 2 MB; the two-GPU page has one row per GPU. Without chromium, chromedriver or
# python3-selenium (.ci/run installs them) the browser checks are skipped with a message and the
# rest still runs. Run from the repository root; BUILD = build folder.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
SLACK=$BUILD/slack
GEN=$BUILD/tools/gen_trace
[ -x "$SLACK" ] && [ -x "$GEN" ] || make -s BUILD="$BUILD" "$SLACK" "$GEN" > /dev/null || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
TEST_NAME=html
. tests/tools/harness.sh
MAX=$((2 * 1024 * 1024))
REPORT_SECTIONS=verdict,ranks,breakdown,timeline,steps,sites,hints,whatif,tracer
DIFF_SECTIONS=summary,breakdown,changes,verdict
shots=${SLACK_HTML_SHOTS:-$work/shots}
mkdir -p "$shots"

# the python that has selenium (Debian's python3-selenium is for /usr/bin/python3)
PY=
for p in python3 /usr/bin/python3; do
  if command -v "$p" > /dev/null && "$p" -c 'import selenium' 2> /dev/null; then
    PY=$p
    break
  fi
done
browser=1
if [ -z "$PY" ]; then
  why="python3-selenium is not installed"
elif ! command -v chromium > /dev/null && ! command -v chromium-browser > /dev/null; then
  why="chromium is not installed"
elif ! command -v chromedriver > /dev/null; then
  why="chromedriver (chromium-driver) is not installed"
fi
if [ -n "${why:-}" ]; then
  browser=0
  PY=python3
  echo "html: browser checks skipped: $why (apt-get install chromium chromium-driver" \
    "python3-selenium; .ci/run does); the static checks run"
fi
check() { # SECTIONS [--zoom] PAGE... (the browser part when there is one)
  local sections=$1
  shift
  if [ $browser = 1 ]; then
    "$PY" tests/tools/check_html.py --sections "$sections" --max-bytes $MAX --shots "$shots" "$@"
  else
    "$PY" tests/tools/check_html.py --sections "$sections" --max-bytes $MAX --static-only "$@"
  fi
}

# ---- slack report --html ----
pages=()
for t in tests/data/probe-h200.slk tests/data/callsites/*.slk tests/data/diagnosis/run21/*.slk \
  tests/data/accuracy/launch_storm-broken.slk; do
  [ -f "$t" ] || continue
  b=$(basename "$(dirname "$t")")-$(basename "$t" .slk)
  expect "report $b" 0 "slack report: wrote $work/$b.html" -- "$SLACK" report --html "$work/$b.html" "$t"
  pages+=("$work/$b.html")
done
[ ${#pages[@]} -ge 10 ] && ok || bad "only ${#pages[@]} H200 traces found"

# ~100,000 events: the page stays small (the timeline is drawn for one step, the window in
# columns); two GPUs: one row each
"$GEN" "$work/gen100k.slk" --events 100000 > /dev/null || bad "gen_trace"
"$GEN" "$work/gen2gpu.slk" --events 100000 --devices 2 --threads 3 --streams 3 > /dev/null || bad "gen_trace"
for b in gen100k gen2gpu; do
  expect "report $b" 0 'wrote' -- "$SLACK" report --html "$work/$b.html" "$work/$b.slk"
  pages+=("$work/$b.html")
done
size=$(wc -c < "$work/gen100k.html")
[ "$size" -gt 20000 ] && [ "$size" -lt $MAX ] && ok || bad "gen100k.html: $size bytes"
echo "html: probe page $(wc -c < "$work/data-probe-h200.html") bytes, 100,000-event page $size bytes"
rows=$(python3 -c '
import re, sys
s = open(sys.argv[1]).read()
ranks = s[s.index("<section id=\"ranks\">"):s.index("<section id=\"breakdown\">")]
bars = s[s.index("<svg id=\"breakdown-chart\""):s.index("</svg>", s.index("<svg id=\"breakdown-chart\""))]
print(len(re.findall(r"<tr><td>GPU ", ranks)), len(re.findall(r">GPU \d+</text>", bars)))' "$work/gen2gpu.html")
[ "$rows" = "2 2" ] && ok || bad "two GPUs: rows in the ranks table and bars: $rows"

out=$(check $REPORT_SECTIONS --zoom "${pages[@]}" 2>&1)
rc=$?
if [ $rc = 0 ] || { [ $rc = 3 ] && [ $browser = 0 ]; }; then ok; else bad "check_html: $out"; fi
if [ $browser = 1 ]; then
  n=$(ls "$shots"/*.png 2> /dev/null | wc -l)
  [ "$n" -ge ${#pages[@]} ] && ok || bad "$n screenshots for ${#pages[@]} pages"
fi

# ---- slack diff --html: the seed's form and its fixed form (run 21), an accuracy pair ----
expect "diff lcs-fixed" 0 'slack diff: wrote' -- "$SLACK" diff --samples 64 --html "$work/diff-seed.html" \
  tests/data/diagnosis/run21/resnet_seed-lcs.slk tests/data/diagnosis/run21/resnet_seed-fixed.slk
expect "diff serialization" 0 'slack diff: wrote' -- "$SLACK" diff --html "$work/diff-ser.html" \
  tests/data/accuracy/serialization-broken.slk tests/data/accuracy/serialization-fixed.slk
out=$(check $DIFF_SECTIONS "$work/diff-seed.html" "$work/diff-ser.html" 2>&1)
rc=$?
if [ $rc = 0 ] || { [ $rc = 3 ] && [ $browser = 0 ]; }; then ok; else bad "check_html: $out"; fi
expect "diff 3.90x" 0 '3.90x faster' -- cat "$work/diff-seed.html"

# ---- the checker itself fails on a broken page ----
sed 's|</section>||' "$work/diff-ser.html" > "$work/broken.html"
expect "broken page" 1 'do not nest' -- "$PY" tests/tools/check_html.py --static-only "$work/broken.html"
sed 's|<main>|<main><script src="https://example.com/x.js"></script>|' "$work/diff-ser.html" > "$work/net.html"
expect "network" 1 'loads a script' -- "$PY" tests/tools/check_html.py --static-only "$work/net.html"

# ---- options and errors ----
expect "stdout" 0 '^<!DOCTYPE html>' -- sh -c "'$SLACK' report --html - tests/data/probe-h200.slk | head -1"
expect "json and html" 2 'one at a time' -- "$SLACK" report --json --html "$work/x.html" tests/data/probe-h200.slk
expect "unwritable" 1 'cannot write' -- "$SLACK" report --html "$work/no/dir/x.html" tests/data/probe-h200.slk
expect "no value" 2 "wants a value" -- "$SLACK" report tests/data/probe-h200.slk --html

finish
