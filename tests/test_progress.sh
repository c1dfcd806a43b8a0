#!/usr/bin/env bash
# The progress line of long reads (format/reader.c, docs/PERFORMANCE.md "Analyzer
# throughput"): SLACK_PROGRESS=MS prints "slack CMD: P% read, N M records" every MS while a
# trace is read, whatever stderr is; SLACK_PROGRESS=0 and a stderr that is not a terminal print
# nothing (what every other test and the goldens capture); stdout is the same either way. Run
# from the repository root; BUILD = build folder.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
SLACK=$BUILD/slack
GEN=$BUILD/tools/gen_trace
[ -x "$SLACK" ] && [ -x "$GEN" ] || make -s BUILD="$BUILD" "$SLACK" "$GEN" > /dev/null || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
TEST_NAME=progress
. tests/tools/harness.sh

# several chunks of 1 MB raw: a line can come at each chunk boundary
"$GEN" "$work/t.slk" --events 400000 --threads 2 --devices 1 --streams 2 > /dev/null ||
  bad "gen_trace"
for cmd in info stats report; do
  SLACK_PROGRESS=1 "$SLACK" $cmd "$work/t.slk" > "$work/on.out" 2> "$work/on.err"
  "$SLACK" $cmd "$work/t.slk" > "$work/off.out" 2> "$work/off.err"
  SLACK_PROGRESS=0 "$SLACK" $cmd "$work/t.slk" > "$work/zero.out" 2> "$work/zero.err"
  if grep -qE "^slack $cmd: [0-9]+% read, [0-9.]+ M records$" "$work/on.err"; then ok; else
    bad "$cmd: no progress line with SLACK_PROGRESS=1: $(head -c 300 "$work/on.err")"
  fi
  # the percentages grow
  if grep -oE '[0-9]+% read' "$work/on.err" | tr -d '% read' | sort -n -c 2> /dev/null; then ok
  else bad "$cmd: percentages out of order"; fi
  grep -q '% read' "$work/off.err" && bad "$cmd: stderr not a terminal, yet a progress line" || ok
  grep -q '% read' "$work/zero.err" && bad "$cmd: SLACK_PROGRESS=0, yet a progress line" || ok
  # the rest of stderr (notes) is the same with the line on
  grep -v '% read' "$work/on.err" | cmp -s - "$work/off.err" && ok || bad "$cmd: notes differ"
  cmp -s "$work/on.out" "$work/off.out" && ok || bad "$cmd: stdout differs with the progress line"
done
finish
