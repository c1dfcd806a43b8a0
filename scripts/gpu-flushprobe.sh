#!/usr/bin/env bash
# The writer's flush against the traced program's calls (session 51), one device call: the same
# paced launch loop (scripts/workloads/flush_probe.py) untraced and under slack with each
# setting below, in turn, ROUNDS times (interleaved: A B C ... A B C ...). Prints each run's
# FLUSHPROBE line and a table: per setting, the median over its rounds of the iterations over
# 1 ms and 5 ms and of the longest iteration.
#
#   untraced  no slack
#   default   slack's defaults (SLACK_FLUSH_MS=1000, SLACK_CUPTI_BUFFER_KB=4096)
#   noflush   SLACK_FLUSH_MS=600000 (no periodic flush: CUPTI hands buffers over as they fill)
#   flush200  SLACK_FLUSH_MS=200
#   buf256    SLACK_CUPTI_BUFFER_KB=256 (CUPTI's buffers a sixteenth as big)
#   prev      build-prev/libslack.so with slack's defaults: another build carried to the device
#             (GPU run 197: 2f01793's runtime, against a build with a CUPTI buffer pool since
#             taken out; docs/PERFORMANCE.md, "CUPTI's buffers")
#
# Usage: OUT=DIR bash scripts/gpu-flushprobe.sh   (SECS=6 a run, ROUNDS=2, SETTINGS a subset)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-flushprobe}
SECS=${SECS:-6}
ROUNDS=${ROUNDS:-2}
SETTINGS=${SETTINGS:-untraced default noflush flush200 buf256}
mkdir -p "$OUT"
make -j"$(nproc)" all > "$OUT/build.log" 2>&1 || {
  tail -20 "$OUT/build.log"
  exit 1
}
PY=${PYTHON:-python3}
for r in $(seq "$ROUNDS"); do
  for s in $SETTINGS; do
    case $s in
      untraced) pre=() ;;
      default) pre=(LD_PRELOAD="$ROOT/build/libslack.so") ;;
      noflush) pre=(LD_PRELOAD="$ROOT/build/libslack.so" SLACK_FLUSH_MS=600000) ;;
      flush200) pre=(LD_PRELOAD="$ROOT/build/libslack.so" SLACK_FLUSH_MS=200) ;;
      buf256) pre=(LD_PRELOAD="$ROOT/build/libslack.so" SLACK_CUPTI_BUFFER_KB=256) ;;
      prev) pre=(LD_PRELOAD="$ROOT/build-prev/libslack.so") ;;
      *) echo "unknown setting $s"; continue ;;
    esac
    env "${pre[@]}" SLACK_OUTPUT="$OUT/$s-$r" SLACK_PACE_PROBE=0 SECS="$SECS" PROBE_TAG="$s" \
      timeout 120 "$PY" scripts/workloads/flush_probe.py > "$OUT/$s-$r.log" 2>&1
    grep -h FLUSHPROBE "$OUT/$s-$r.log" || { echo "$s round $r: no result"; tail -3 "$OUT/$s-$r.log"; }
  done
done
python3 - "$OUT" $SETTINGS <<'PY'
import glob, os, re, statistics, sys
out = sys.argv[1]
print("\n| setting | rounds | iterations | over 1 ms | over 5 ms | longest ms |")
print("|---|---|---|---|---|---|")
for s in sys.argv[2:]:
    rows = []
    for f in sorted(glob.glob(os.path.join(out, f"{s}-*.log"))):
        m = re.search(r"iters=(\d+) over1ms=(\d+) over5ms=(\d+) longest_ms=([0-9.]+)", open(f).read())
        if m:
            rows.append([float(x) for x in m.groups()])
    if not rows:
        print(f"| {s} | 0 | - | - | - | - |")
        continue
    med = [statistics.median(c) for c in zip(*rows)]
    print(f"| {s} | {len(rows)} | {med[0]:.0f} | {med[1]:.0f} | {med[2]:.0f} | {med[3]:.2f} |")
PY
