#!/usr/bin/env bash
# slack timeline: the Chrome trace JSON of a synthetic trace (tests/tools/gen_trace: 3 threads,
# 2 GPUs, 3 streams, out of time order in the file), of the real H200 traces in tests/data and of
# the imported nsys fixture loads with json.load and passes tests/tools/check_timeline.py (phases
# and fields, named tracks, nesting, every launch-to-GPU flow bound at both ends, idle gaps
# disjoint from GPU work), with the counts the generator wrote; the stall track (each idle stretch
# named by its class) adds up to the idle gaps and names the seed's data starvation; --from/--to
# cut a window; errors exit 1 or 2. Run from the repository root; BUILD = build folder.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
SLACK=$BUILD/slack
GEN=$BUILD/tools/gen_trace
[ -x "$SLACK" ] && [ -x "$GEN" ] || make -s BUILD="$BUILD" "$SLACK" "$GEN" > /dev/null || exit 1
command -v python3 > /dev/null || { echo "timeline: FAIL: python3 not found"; exit 1; }
CHECK="python3 tests/tools/check_timeline.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
TEST_NAME=timeline
. tests/tools/harness.sh

# ---- synthetic: every record drawn, every launch linked to its GPU work ----
"$GEN" "$work/gen.slk" --events 200000 --threads 3 --devices 2 --streams 3 > "$work/gen.json" ||
  bad "gen_trace"
want=$(python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))
gpu = g["kernels"] + g["memcpys"] + g["memsets"]
print(" ".join("--expect %s=%d" % kv for kv in [("kernels", g["kernels"]), ("memcpys", g["memcpys"]),
      ("memsets", g["memsets"]), ("host", g["host"]), ("api", g["api"]), ("nvtx", g["markers"]),
      ("flows", gpu)]))' "$work/gen.json")
expect gen 0 'slack timeline: .*events' -- "$SLACK" timeline "$work/gen.slk" -o "$work/gen-tl.json"
# shellcheck disable=SC2086 # $want holds several arguments
expect gen-valid 0 '"stalls": [1-9]' -- $CHECK "$work/gen-tl.json" $want --stalls-match-idle
expect gen-names 0 'Synthetic GPU 1' -- grep -o '"GPU 1: Synthetic GPU 1"' "$work/gen-tl.json"
expect gen-escaped 0 'kernel \\"with\\" quotes' -- grep -o 'kernel \\"with\\" quotes\\\\and\\tcontrol' "$work/gen-tl.json"

# GPU records all at the end of the file: the idle track is still right
"$GEN" "$work/late.slk" --events 100000 --batch 1000000 > /dev/null || bad "gen_trace --batch"
expect late 0 '' -- "$SLACK" timeline "$work/late.slk" -o "$work/late.json"
expect late-valid 0 '"idle": [1-9]' -- $CHECK "$work/late.json"

# a window: 5 ms to 20 ms after the start
expect window 0 '' -- "$SLACK" timeline "$work/gen.slk" -o "$work/win.json" --from 5 --to 20
expect window-valid 0 '' -- $CHECK "$work/win.json" --window 5 20
n_all=$(grep -c '"ph":"X"' "$work/gen-tl.json")
n_win=$(grep -c '"ph":"X"' "$work/win.json")
[ "$n_win" -gt 0 ] && [ "$n_win" -lt "$n_all" ] && ok || bad "window: $n_win of $n_all slices"
expect stdout 0 '' -- sh -c "'$SLACK' timeline '$work/gen.slk' -o - --to 1 > '$work/out.json' && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' '$work/out.json'"
expect min-idle 0 '"idle": 0, "stalls": 0' -- sh -c "'$SLACK' timeline '$work/gen.slk' -o '$work/mi.json' --min-idle 1e12 && $CHECK '$work/mi.json'"
expect no-stalls 0 '"stalls": 0' -- sh -c "'$SLACK' timeline '$work/gen.slk' -o '$work/ns.json' --no-stalls && $CHECK '$work/ns.json'"
expect stalls 0 '"stalls": [1-9]' -- sh -c "'$SLACK' timeline '$work/gen.slk' -o '$work/st.json' --no-stalls --stalls && $CHECK '$work/st.json'"

# the stall track of the seed's broken form (H200): its data starvation is on the timeline
t=tests/data/callsites/resnet_seed-lcs.slk
expect lcs 0 'stall slices' -- "$SLACK" timeline "$t" -o "$work/lcs.json"
expect lcs-valid 0 '"stalls": [1-9]' -- $CHECK "$work/lcs.json" --stalls-match-idle
expect lcs-starvation 0 '' -- grep -q '"cat":"stall_class","name":"data starvation","args":{"class":"data_starvation"' "$work/lcs.json"

# ---- real traces: H200 (slack), the nsys fixture imported ----
for t in tests/data/probe-h200.slk tests/data/probe-loader-h200.slk tests/data/probe-compile-h200.slk; do
  [ -f "$t" ] || continue
  b=$(basename "$t" .slk)
  expect "$b" 0 '' -- "$SLACK" timeline "$t" -o "$work/$b.json"
  expect "$b-valid" 0 '"flows": [1-9]' -- $CHECK "$work/$b.json" --stalls-match-idle
done
if "$SLACK" --version --build-options | grep -q 'sqlite: yes'; then
  "$SLACK" import nsys tests/data/nsys-small.sqlite -o "$work/small.slk" > /dev/null 2>&1 || bad "import"
  expect nsys 0 '' -- "$SLACK" timeline "$work/small.slk" -o "$work/small.json"
  expect nsys-valid 0 '"kernels": 2000' -- $CHECK "$work/small.json"
fi

# ---- errors ----
expect help 0 'usage: slack timeline' -- "$SLACK" timeline --help
expect no-output 2 'no output file' -- "$SLACK" timeline "$work/gen.slk"
expect no-file 2 'no trace file' -- "$SLACK" timeline -o "$work/x.json"
expect bad-from 2 '--from needs a number' -- "$SLACK" timeline "$work/gen.slk" -o "$work/x.json" --from soon
expect backwards 2 '--to is before --from' -- "$SLACK" timeline "$work/gen.slk" -o "$work/x.json" --from 5 --to 1
expect bad-option 2 "unknown option '--svg'" -- "$SLACK" timeline "$work/gen.slk" --svg
expect missing 1 'cannot open' -- "$SLACK" timeline "$work/none.slk" -o "$work/x.json"
expect unwritable 1 'cannot write' -- "$SLACK" timeline "$work/gen.slk" -o "$work/no/dir/x.json"

finish
