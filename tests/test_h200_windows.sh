#!/usr/bin/env bash
# The windowed H200 traces under tests/data/windows, read as a user would: every kernel joined to
# its launch call by the stream map (no CUPTI API record after a re-attach, or none asked for),
# only to calls made while CUPTI's kernel records were on (SLK_HOST_CUPTI_ON: a kernel paired
# with a call from the detached stretch before it would read its gap as "queued"), and the
# tiny-op loop they recorded read as launch overhead; each class's call sites add up to the
# class (only the time inside the windows: GPU run 44's long host phases between windows were
# listed at 906 ms under a class of 37 ms).
#   run43-noapi-h200.slk   SLACK_API_RECORDS=0, one window (GPU run 43)
#   run44-detach-h200.slk  SLACK_WINDOW=100ms/1s, CUPTI detached between windows (GPU run 44)
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
make -s BUILD="$BUILD" "$BUILD/slack" > /dev/null || exit 1
TEST_NAME=h200_windows
. tests/tools/harness.sh
check() { # TRACE MIN_WINDOWS
  local out
  out=$("$BUILD/slack" report --json "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
j, g = d["launch_join"], d["gpus"][0]
bad = []
if j["kernels"] < 1000: bad.append("only %d kernels" % j["kernels"])
if j["with_launch_by_order"] < 0.999 * j["kernels"]:
    bad.append("%d of %d kernels joined by order" % (j["with_launch_by_order"], j["kernels"]))
if len(d.get("windows", [])) < int(sys.argv[1]): bad.append("%d windows" % len(d.get("windows", [])))
if g["other_ns"]["queued"] > 0.001 * g["idle_ns"]:
    bad.append("queued %d ns of %d idle" % (g["other_ns"]["queued"], g["idle_ns"]))
for c, v in g["time_ns"].items():  # sites count only time inside the windows, as the classes
    s = sum(x["ns"] for x in g["callsites"].get(c, []))
    if abs(s - v) > 0.001 * v + 1000:
        bad.append("%s: sites %d ns, class %d ns" % (c, s, v))
if g["verdict"]["class"] != "launch_overhead" or g["verdict"]["share"] < 0.5:
    bad.append("verdict %s %.2f" % (g["verdict"]["class"], g["verdict"]["share"]))
print("; ".join(bad) or "ok")' "$2")
  [ "$out" = ok ] && ok || bad "$1: $out"
}
check tests/data/windows/run43-noapi-h200.slk 0
check tests/data/windows/run44-detach-h200.slk 3
finish
