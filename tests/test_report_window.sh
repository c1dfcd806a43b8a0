#!/usr/bin/env bash
# slack report on a long trace by windows (analyzer/report_window.c, docs/slack-report.md "Long
# traces"): a generated trace of 500 k records (tests/tools/gen_trace) reported whole
# (--window-records 0) and in windows of 50 k records (SLACK_REPORT_WINDOW_RECORDS=50000). The
# windowed run's peak RSS stays under a bound that the whole run exceeds; each GPU's window, busy
# and idle time, kernel counts, top kernels and host calls are the whole run's exactly; the class
# totals are within 1% of the window; the step count within the number of windows; the windowed
# text the same bytes with its memory in pages of 4 KiB (SLACK_HUGEPAGES=0) and with the records
# carried from window to window in blocks of 256 bytes (SLACK_REPORT_CARRY_BLOCK). A recorded trace
# (tiny ops, then a training loop) keeps its steps and verdict in windows. A trace under the
# threshold gives byte-identical output either way, as does a long one cut short by a damaged
# chunk; a malformed record in a chunk whose checksum holds stops the reading as a bad checksum
# there does; a progress line counts the windows; bad values are refused.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
SLACK=$BUILD/slack
GEN=$BUILD/tools/gen_trace
WRITER=$BUILD/tests/test_reader
make -s BUILD="$BUILD" "$SLACK" "$GEN" "$WRITER" > /dev/null || exit 1
TEST_NAME=report_window
. tests/tools/harness.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$GEN" "$work/long.slk" --events 500000 --threads 4 --devices 2 --streams 4 > /dev/null || exit 1
"$GEN" "$work/short.slk" --events 20000 --threads 2 --devices 2 --streams 2 > /dev/null || exit 1

# peak RSS (KiB) of a command whose stdout goes to a file: python's getrusage of the child
rss() {
  local out=$1
  shift
  python3 - "$out" "$@" << 'PY'
import resource, subprocess, sys
with open(sys.argv[1], "w") as f:
    rc = subprocess.run(sys.argv[2:], stdout=f).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if rc == 0 else -rc)
PY
}
whole_kb=$(rss "$work/whole.json" "$SLACK" report --json --window-records 0 "$work/long.slk")
win_kb=$(SLACK_REPORT_WINDOW_RECORDS=50000 rss "$work/win.json" "$SLACK" report --json "$work/long.slk")
BOUND_KB=70000
[ "$whole_kb" -gt "$BOUND_KB" ] && ok || bad "the whole-trace report took ${whole_kb} KiB, not over the bound ${BOUND_KB} KiB: the bound tests nothing"
[ "$win_kb" -gt 0 ] && [ "$win_kb" -lt "$BOUND_KB" ] && ok || bad "the windowed report took ${win_kb} KiB (bound ${BOUND_KB} KiB; whole: ${whole_kb} KiB)"

if out=$(python3 - "$work/whole.json" "$work/win.json" << 'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
bad = []
n = b.get("analysis_windows", 0)
if "analysis_windows" in a:
    bad.append("the whole-trace report says analysis_windows")
if n < 5:
    bad.append("analysis_windows %r: expected about 10" % n)
if (a["start_ns"], a["end_ns"]) != (b["start_ns"], b["end_ns"]):
    bad.append("window %r-%r, whole %r-%r" % (b["start_ns"], b["end_ns"], a["start_ns"], a["end_ns"]))
if len(a["gpus"]) != len(b["gpus"]) or len(a["gpus"]) != 2:
    bad.append("gpus: %d and %d" % (len(a["gpus"]), len(b["gpus"])))
for ga, gb in zip(a["gpus"], b["gpus"]):
    d = ga["device"]
    for k in ("device", "window_ns", "busy_ns", "idle_ns", "kernels", "memcpys", "memsets", "kernel_ns"):
        if ga[k] != gb[k]:
            bad.append("GPU %d %s: %r windowed, %r whole" % (d, k, gb[k], ga[k]))
    for c, v in ga["time_ns"].items():
        if abs(gb["time_ns"][c] - v) > ga["window_ns"] / 100:
            bad.append("GPU %d %s: %d windowed, %d whole" % (d, c, gb["time_ns"][c], v))
    sa, sb = ga["steps"]["count"], gb["steps"]["count"]
    if sa < 100 or abs(sa - sb) > n:
        bad.append("GPU %d steps: %d windowed, %d whole (%d windows)" % (d, sb, sa, n))
    if abs(ga["steps"]["step_ns"] - gb["steps"]["step_ns"]) > ga["steps"]["step_ns"] / 20:
        bad.append("GPU %d step: %d windowed, %d whole" % (d, gb["steps"]["step_ns"], ga["steps"]["step_ns"]))
    if ga["top_kernels"] != gb["top_kernels"]:
        bad.append("GPU %d top kernels differ" % d)
    sites = lambda g: {s["site"]: s["ns"] for s in g["callsites"]["compute"]}
    top = ga["callsites"]["compute"][0]
    if abs(sites(gb).get(top["site"], 0) - top["ns"]) > ga["window_ns"] / 100:
        bad.append("GPU %d compute site %s: %r windowed, %d whole" % (d, top["site"], sites(gb).get(top["site"]), top["ns"]))
if a["host"] != b["host"]:
    bad.append("host calls differ")
if a["launch_join"]["kernels"] != b["launch_join"]["kernels"]:
    bad.append("launch join kernels: %d windowed, %d whole" % (b["launch_join"]["kernels"], a["launch_join"]["kernels"]))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
); then ok; else bad "windowed against whole: $out"; fi

# a recorded trace (H200, tests/data) with a phase of tiny ops before the training loop: in
# windows of 10,000 records the steps are still the loop's (not the tiny ops' pattern), and the
# verdict is the whole-trace one
"$SLACK" report --json --window-records 0 tests/data/probe-h200.slk > "$work/p0.json"
"$SLACK" report --json --window-records 10000 tests/data/probe-h200.slk > "$work/p1.json"
if out=$(python3 - "$work/p0.json" "$work/p1.json" << 'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ga, gb = a["gpus"][0], b["gpus"][0]
n = b.get("analysis_windows", 0)
bad = []
if n < 3:
    bad.append("analysis_windows %r" % n)
if gb["verdict"]["class"] != ga["verdict"]["class"]:
    bad.append("verdict %s, whole %s" % (gb["verdict"]["class"], ga["verdict"]["class"]))
sa, sb = ga["steps"], gb["steps"]
if abs(sa["count"] - sb["count"]) > 2 * n or abs(sa["step_ns"] - sb["step_ns"]) > sa["step_ns"] / 20:
    bad.append("steps %d of %d ns, whole %d of %d ns" % (sb["count"], sb["step_ns"], sa["count"], sa["step_ns"]))
for c, v in ga["time_ns"].items():
    if abs(gb["time_ns"][c] - v) > ga["window_ns"] / 100:
        bad.append("%s: %d, whole %d" % (c, gb["time_ns"][c], v))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
); then ok; else bad "probe-h200 in windows against whole: $out"; fi

# the text says so
SLACK_REPORT_WINDOW_RECORDS=50000 "$SLACK" report "$work/long.slk" > "$work/win.txt"
grep -qE '^read in [0-9]+ windows' "$work/win.txt" && ok || bad "no 'read in N windows' line: $(head -3 "$work/win.txt")"
"$SLACK" report --window-records 0 "$work/long.slk" | grep -q '^read in' && bad "the whole-trace text says windows" || ok
# the windows' memory in pages of 4 KiB (SLACK_HUGEPAGES=0) or in huge pages where the kernel has
# them: the same bytes
SLACK_HUGEPAGES=0 SLACK_REPORT_WINDOW_RECORDS=50000 "$SLACK" report "$work/long.slk" > "$work/win4k.txt"
cmp -s "$work/win.txt" "$work/win4k.txt" && ok || bad "SLACK_HUGEPAGES=0 changed the windowed report"
# the records a window carries to the next in blocks of 256 bytes (SLACK_REPORT_CARRY_BLOCK: a
# block every record or two, each block's rest skipped) or of 256 KiB: the same bytes
SLACK_REPORT_CARRY_BLOCK=256 SLACK_REPORT_WINDOW_RECORDS=50000 "$SLACK" report "$work/long.slk" > "$work/win256.txt"
cmp -s "$work/win.txt" "$work/win256.txt" && ok || bad "SLACK_REPORT_CARRY_BLOCK=256 changed the windowed report"
"$SLACK" report --json --window-records 3000 tests/data/probe-loader-h200.slk > "$work/pl.json"
SLACK_REPORT_CARRY_BLOCK=300 "$SLACK" report --json --window-records 3000 tests/data/probe-loader-h200.slk > "$work/pl300.json"
cmp -s "$work/pl.json" "$work/pl300.json" && ok || bad "SLACK_REPORT_CARRY_BLOCK=300 changed a recorded trace's windowed report"

# under the threshold: byte-identical, whatever the threshold
"$SLACK" report --window-records 0 "$work/short.slk" > "$work/s0.txt"
"$SLACK" report "$work/short.slk" > "$work/s1.txt"
SLACK_REPORT_WINDOW_RECORDS=1000000 "$SLACK" report --json "$work/short.slk" > "$work/s1.json"
"$SLACK" report --json --window-records 0 "$work/short.slk" > "$work/s0.json"
cmp -s "$work/s0.txt" "$work/s1.txt" && cmp -s "$work/s0.json" "$work/s1.json" && ok ||
  bad "a short trace's report changed with the threshold"
# the same trace in windows does differ (the check above can fail)
"$SLACK" report --window-records 5000 "$work/short.slk" > "$work/s2.txt"
cmp -s "$work/s0.txt" "$work/s2.txt" && bad "5000-record windows changed nothing on a 20 k trace" || ok

# a trace whose chunk headers announce many records (read as long from the start) but whose
# reading stops early at a damaged chunk, under the threshold: read again as short, the same
# report as the whole-trace one
cp "$work/long.slk" "$work/damaged.slk"
python3 - "$work/damaged.slk" << 'PY'
import os, sys
with open(sys.argv[1], "r+b") as f:
    at = os.path.getsize(sys.argv[1]) // 5
    f.seek(at)
    b = f.read(1)
    f.seek(at)
    f.write(bytes([b[0] ^ 0xFF]))
PY
"$SLACK" report --window-records 150000 "$work/damaged.slk" > "$work/d1.txt" 2> "$work/d1.err"
"$SLACK" report --window-records 0 "$work/damaged.slk" > "$work/d0.txt" 2> "$work/d0.err"
grep -q 'unreadable' "$work/d1.err" && cmp -s "$work/d0.txt" "$work/d1.txt" &&
  cmp -s "$work/d0.err" "$work/d1.err" && ! grep -q '^read in' "$work/d1.txt" && ok ||
  bad "a long trace cut short by a damaged chunk: not the whole-trace report ($(head -c 200 "$work/d1.err"))"

# a malformed record in the middle chunk, its checksum right: the first pass, which checks the
# records as it decodes them, had read part of that chunk; it reads again, checking each chunk
# first: the report of the same trace whose chunk fails its checksum (none of its records read)
"$WRITER" --malform "$work/long.slk" "$work/bad.slk" "$work/crc.slk" || bad "test_reader --malform"
"$SLACK" report --window-records 150000 "$work/bad.slk" 2> "$work/bad.err" |
  sed 's/bad\.slk/X.slk/' > "$work/bad.txt"
"$SLACK" report --window-records 150000 "$work/crc.slk" 2> /dev/null | sed 's/crc\.slk/X.slk/' > "$work/crc.txt"
grep -q 'malformed record' "$work/bad.err" && grep -q '^read in' "$work/bad.txt" &&
  cmp -s "$work/bad.txt" "$work/crc.txt" && ok ||
  bad "a malformed record in a checksummed chunk: not the report of a bad checksum there ($(head -c 200 "$work/bad.err"))"

# chained causes read in windows keep the loader's shared time per step (the seed's lcs form on
# the H200, 73,387 records in windows of 30,000)
"$SLACK" report --json --window-records 30000 tests/data/diagnosis/run45/resnet_seed-lcs.slk |
  python3 -c 'import json, sys
s = json.load(sys.stdin)["gpus"][0]["steps"]
sys.exit(0 if s["count"] and s["per_step_shared_ns"]["data_starvation"] > 0.05 * s["step_ns"] else 1)' &&
  ok || bad "the windowed report lost the shared time of a chained form"

# the windows' progress line (SLACK_PROGRESS: every ms, one line each)
SLACK_PROGRESS=1 SLACK_REPORT_WINDOW_RECORDS=50000 "$SLACK" report "$work/long.slk" 2> "$work/progress.err" > /dev/null
grep -qE '^slack report: window [0-9]+ of [0-9]+ classified$' "$work/progress.err" && ok ||
  bad "no window progress line with SLACK_PROGRESS=1: $(head -c 300 "$work/progress.err")"
expect bad-option 2 'window-records wants a count' -- "$SLACK" report --window-records x "$work/short.slk"
SLACK_REPORT_WINDOW_RECORDS=x expect bad-env 0 'SLACK_REPORT_WINDOW_RECORDS=x is not a count' -- "$SLACK" report "$work/short.slk"
# windows too small for the loop's steps (the seed's 430 ms steps, about 1,200 records each, in
# windows of 3,000 records read as 3 steps of 52 ms and no stall): read again in larger windows,
# said on stderr, and the verdict the whole trace gives
seed=tests/data/diagnosis/resnet_seed-lcs.slk
"$SLACK" report --window-records 3000 "$seed" > "$work/seed-small.txt" 2> "$work/seed-small.err"
"$SLACK" report --window-records 0 "$seed" > "$work/seed-whole.txt"
if grep -q 'reading again in windows of 6000' "$work/seed-small.err" &&
  grep -q 'verdict: data starvation' "$work/seed-small.txt" &&
  grep -q 'verdict: data starvation' "$work/seed-whole.txt"; then ok; else
  bad "small windows on the seed's trace: $(head -c 300 "$work/seed-small.err") $(grep verdict "$work/seed-small.txt")"
fi
# windows too short for the loop's iterations, that find steps inside them (a ViT's 12 identical
# layers: 565 steps in windows of 5,000 records for 60 iterations; GPU run 108, a detector's 68 k
# operations an iteration in windows of 250 k: 763 k steps of one GEMM for 12): the optimizer
# steps' ends say so, and the report reads the trace again whole (said on stderr) with the whole
# trace's iterations; windows that hold the iterations are kept (no such line)
vit=tests/data/holdout/run93/holdout_vit-s.slk
whole_it=$("$SLACK" report --json --window-records 0 "$vit" | python3 -c 'import json, sys; print(json.load(sys.stdin)["gpus"][0]["steps"]["iterations"])')
"$SLACK" report --json --window-records 5000 "$vit" > "$work/vit5k.json" 2> "$work/vit5k.err"
win_it=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["gpus"][0]["steps"]["iterations"])' "$work/vit5k.json")
if [ "$whole_it" = 60 ] && [ "$win_it" = 60 ] &&
  grep -q 'the windows found [0-9]* steps where the trace has 60 optimizer steps.*reading it again whole' "$work/vit5k.err"; then ok; else
  bad "windows shorter than the ViT's iterations: whole $whole_it, windowed $win_it iterations; $(head -c 300 "$work/vit5k.err")"
fi
"$SLACK" report --window-records 20000 "$vit" > /dev/null 2> "$work/vit20k.err"
grep -q 'optimizer steps' "$work/vit20k.err" && bad "windows that hold the ViT's iterations read again: $(cat "$work/vit20k.err")" || ok
# the default's windows holding a few iterations each count them badly at their edges: a generated
# loop of 25,000 launches an iteration (about 75 k records; 702 k records, 10 iterations, which
# windows of 250,000 count as 7) is read again whole, said on stderr, with the whole trace's
# count; a window size given is kept (and counts 7)
"$GEN" "$work/loop.slk" --events 700000 --threads 1 --devices 1 --streams 1 --step 0 --loop 25000 > /dev/null || exit 1
"$SLACK" report --json "$work/loop.slk" > "$work/loop.json" 2> "$work/loop.err"
loop_it=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["gpus"][0]["steps"]["iterations"])' "$work/loop.json")
loop_whole=$("$SLACK" report --json --window-records 0 "$work/loop.slk" | python3 -c 'import json, sys; print(json.load(sys.stdin)["gpus"][0]["steps"]["iterations"])')
if [ "$loop_whole" = 10 ] && [ "$loop_it" = 10 ] &&
  grep -q 'held [0-9]* iterations in [0-9]* (fewer than 12 each.*reading it again whole' "$work/loop.err"; then ok; else
  bad "a loop of few iterations a window: $loop_it iterations (whole $loop_whole); $(head -c 300 "$work/loop.err")"
fi
"$SLACK" report --window-records 250000 "$work/loop.slk" > /dev/null 2> "$work/loop-given.err"
[ ! -s "$work/loop-given.err" ] && ok || bad "a given window size read again: $(cat "$work/loop-given.err")"
# launch overhead's point at the untraced tail's pace in windows: the window that holds the tail
# gives it (it read as 0 in windows before: the verdict lost its launch overhead)
ls_trace=tests/data/accuracy/run30/launch_storm-inproc.r1.slk
out=$("$SLACK" report --json --window-records 20000 "$ls_trace" 2> /dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
v = d["gpus"][0]["verdict"]
ok = d.get("analysis_windows", 0) > 1 and v["class"] == "launch_overhead" and v.get("basis") == "untraced_tail" and v["per_step_ns"] > 1000000
print("ok" if ok else v)')
[ "$out" = ok ] && ok || bad "windowed launch storm verdict: $out"
finish
