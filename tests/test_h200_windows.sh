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
#   run165-tail-default-h100.slk  SLACK_DURATION_MS=6000 and no SLACK_TAIL_MS (GPU run 165, an
#                          H100): the default tail, 3 s of host calls timed without CUPTI
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
# A window without SLACK_TAIL_MS gets the default tail (3 s) on the GPU too: holdout_gc's fixed
# form, whose untraced step its own rounds measured at 12.29 ms (GPU run 164, the same H100
# kind): the step without the tracer at the tail's pace within 2% of it
out=$("$BUILD/slack" report --json tests/data/windows/run165-tail-default-h100.slk | python3 -c '
import json, sys
d = json.load(sys.stdin)
g = d["gpus"][0]
t = g["tracer"].get("untraced_tail") or {}
bad = []
if not 2.9e9 <= t.get("span_ns", 0) <= 3.1e9: bad.append("tail span %s" % t.get("span_ns"))
if t.get("calls", 0) < 100000: bad.append("tail calls %s" % t.get("calls"))
if not 1.1 <= t.get("host_slowdown", 0) <= 2: bad.append("slowdown %s" % t.get("host_slowdown"))
step = g["replay"]["corrected_step_ns"]
if abs(step / 12.29e6 - 1) > 0.02: bad.append("step without the tracer %d ns" % step)
print("; ".join(bad) or "ok")')
[ "$out" = ok ] && ok || bad "run165 default tail: $out"
"$BUILD/slack" info tests/data/windows/run165-tail-default-h100.slk | grep -q "setting.SLACK_TAIL_MS 3000" &&
  ok || bad "run165: the trace does not hold the default tail's setting"
finish
