#!/usr/bin/env bash
# GPU checks of the exit probe (runtime/probe.c), the call-site stacks and the hooks' cost, in
# one call on the H200 (about 3 minutes):
#   1. the tiny-op loop (scripts/workloads/calibrate.py) untraced and traced, PAIRS interleaved
#      pairs (A B A B): per traced process, its exit probe's launch call with CUPTI's records
#      on and off, on - off (what `slack report` takes as CUPTI's cost per launch), the probe's
#      own time, and the process's exit time against the untraced one;
#   2. the probe workload (probe_train.py) traced: `slack report` with its call-site stacks;
#   3. `make bench` (the hooks' cost per call over the nop build, in-process).
# $OUT gets gpu-probe.log, probe-calib.tsv, probe-train-report.txt, probe-train.slk, bench.txt.
# Usage: bash scripts/gpu-probe.sh   (PAIRS=6; STAGES="1 2 3" picks stages)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/slack-gpu-probe}
PAIRS=${PAIRS:-6}
STAGES=${STAGES:-1 2 3}
want() { case " $STAGES " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$OUT"
exec > >(tee -a "$OUT/gpu-probe.log") 2>&1
export PYTHONUNBUFFERED=1
echo "== machine ($(date -u))"
nvidia-smi -L 2>&1 | head -2
make -j"$(nproc)" all > "${OUT:-/tmp}/build.log" 2>&1 || { tail -20 "${OUT:-/tmp}/build.log"; exit 1; }
LIB=$PWD/build/libslack.so
W=/tmp/slack-gpu-probe-work
rm -rf "$W" && mkdir -p "$W"

if want 1; then
echo "== 1. tiny-op loop, $PAIRS interleaved pairs (untraced, traced)"
printf 'pair\tuntraced_us_per_op\ttraced_us_per_op\tadded_us\tprobe_on_ns\tprobe_off_ns\tprobe_diff_ns\tprobe_ms\tuntraced_s\ttraced_s\trecords_off_ns\toff\ttraced_rc\n' > "$OUT/probe-calib.tsv"
for i in $(seq "$PAIRS"); do
  t0=$(date +%s.%N)
  u=$(N=20000 timeout 60 python3 scripts/workloads/calibrate.py 2>>"$W/err" | grep -o 'us_per_op=[0-9.]*' | cut -d= -f2)
  t1=$(date +%s.%N)
  rm -rf "$W/tr" && mkdir -p "$W/tr"
  tr=$(SLACK_OUTPUT=$W/tr LD_PRELOAD=$LIB N=20000 timeout 60 python3 scripts/workloads/calibrate.py 2>>"$W/err" | grep -o 'us_per_op=[0-9.]*' | cut -d= -f2; exit "${PIPESTATUS[0]}")
  trc=$?
  t2=$(date +%s.%N)
  p=$(build/slack dump "$W"/tr/*.slk 2>/dev/null | grep '^probe ' | head -1)
  on=$(echo "$p" | grep -o ' on_ns=[0-9]*' | cut -d= -f2)
  off=$(echo "$p" | grep -o ' off_ns=[0-9]*' | cut -d= -f2)
  s=$(echo "$p" | grep -o ' start=[0-9]*' | cut -d= -f2)
  e=$(echo "$p" | grep -o ' end=[0-9]*' | cut -d= -f2)
  ro=$(echo "$p" | grep -o 'records_off_ns=[0-9]*' | cut -d= -f2)
  how=$(echo "$p" | grep -o ' off=[a-z_]*' | cut -d= -f2)
  python3 - "$i" "${u:-nan}" "${tr:-nan}" "${on:-0}" "${off:-0}" "${s:-0}" "${e:-0}" "$t0" "$t1" "$t2" "${ro:-0}" "${how:-none}" "$trc" >> "$OUT/probe-calib.tsv" <<'PY'
import sys
i, u, t, on, off, s, e, t0, t1, t2, ro, how, trc = sys.argv[1:]
u, t = float(u), float(t)
on, off, s, e = int(on), int(off), int(s), int(e)
print(f"{i}\t{u:.3f}\t{t:.3f}\t{t - u:.3f}\t{on}\t{off}\t{on - off}\t{(e - s) / 1e6:.1f}\t"
      f"{float(t1) - float(t0):.2f}\t{float(t2) - float(t1):.2f}\t{ro}\t{how}\t{trc}")
PY
  tail -1 "$OUT/probe-calib.tsv"
done
cp "$(ls "$W"/tr/*.slk | head -1)" "$OUT/calib-traced-last.slk" 2>/dev/null
build/slack report "$OUT/calib-traced-last.slk" 2>&1 | grep "tracer's own cost"
fi

if want 2; then
echo "== 2. probe_train.py traced: call-site stacks"
rm -rf "$W/pt" && mkdir -p "$W/pt"
SLACK_OUTPUT=$W/pt LD_PRELOAD=$LIB STEPS=40 timeout 120 python3 scripts/workloads/probe_train.py 2>&1 | tail -2
cp "$W"/pt/*.slk "$OUT/probe-train.slk"
build/slack report --sites 2 "$OUT/probe-train.slk" > "$OUT/probe-train-report.txt" 2>&1
grep -c '^ *<' "$OUT/probe-train-report.txt" | sed 's/^/stack lines in the report: /'
sed -n '/where the time comes from/,$p' "$OUT/probe-train-report.txt" | head -40
fi

if want 3; then
echo "== 3. make bench (hooks over nop)"
make bench > "$OUT/bench.txt" 2>&1
grep -E "hot path|^make bench" "$OUT/bench.txt"
fi

echo "================ summary ================"
tr '\t' ' ' < "$OUT/probe-calib.tsv"
python3 - "$OUT/probe-calib.tsv" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
add = [float(r[3]) * 1000 for r in rows if r[3] != "nan"]
diff = [int(r[6]) for r in rows if int(r[4])]
rdiff = [int(r[4]) - int(r[10]) for r in rows if int(r[4])]
pm = [float(r[7]) for r in rows if int(r[4])]
ex = [float(r[9]) - float(r[8]) for r in rows]
if add: print(f"added per op, traced - untraced (cross-process): median {statistics.median(add):.0f} ns ({min(add):.0f}-{max(add):.0f})")
if diff: print(f"exit probe on - off (in-process):               median {statistics.median(diff)} ns ({min(diff)}-{max(diff)}), {len(diff)} of {len(rows)} traces")
if rdiff: print(f"exit probe on - records disabled (in-process):  median {statistics.median(rdiff)} ns ({min(rdiff)}-{max(rdiff)})")
print("traced exit status: " + " ".join(r[12] for r in rows))
if pm: print(f"exit probe's own time: median {statistics.median(pm):.1f} ms ({min(pm):.1f}-{max(pm):.1f}); process wall traced - untraced: median {statistics.median(ex):.2f} s")
PY
