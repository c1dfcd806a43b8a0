#!/usr/bin/env bash
# Where the traced steps' spikes come from (session 41): holdout_io's main-thread loader ran its
# traced steps at 180 ms with one of 230-280 ms every second or so (GPU run 126: 6 of 29 steps
# over 1.25x the median; its untraced rounds 1 of 100), and the spikes lie in the loader's host
# work, which slack keeps at its traced pace: the data starvation it reports and its step
# without the tracer carry them. The writer thread flushes CUPTI's buffers every SLACK_FLUSH_MS
# (1000), compresses chunks at SLACK_ZSTD_LEVEL and samples Python every SLACK_PY_SAMPLE_MS;
# the interpreter's collector may run more often traced. One traced process per variant, each
# with GC_LOG=1 (scenario_common.gc_log: the collections in the traced steps and in each round):
#
#   default   slack's defaults
#   nosample  SLACK_PY_SAMPLE_MS=0 (no Python samples)
#   noflush   SLACK_FLUSH_MS=600000 (no periodic CUPTI flush inside the window)
#   zstd1     SLACK_ZSTD_LEVEL=1
#   flush200  SLACK_FLUSH_MS=200 (the periodic flush five times as often, each a fifth as big)
#   buf256    SLACK_CUPTI_BUFFER_KB=256 (CUPTI's buffers a sixteenth as big)
#
# Usage: OUT=DIR BUDGET_S=300 bash scripts/gpu-spikes.sh   (SPIKES="workload:form:steps:window_ms"
# sets the loop, default holdout_io:m:30:12000; VARIANTS a subset of the names above)
# Writes OUT/VARIANT/ (gpu-holdout.sh's files) and OUT/spikes-summary.txt. GPU run 144 (H100):
# the spikes came untraced too, in every variant (2 to 4 of 29 traced steps, 0 to 4 of 12 in
# each untraced round), and the collector ran no full collection in the steps: nothing of the
# tracer's; docs/gpu-runs/2026-12-05-run144-holdout-table.md.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-spikes}
BUDGET_S=${BUDGET_S:-300}
SPIKES=${SPIKES:-holdout_io:m:30:12000}
VARIANTS=${VARIANTS:-default nosample noflush zstd1}
T0=$(date +%s)
mkdir -p "$OUT"
IFS=: read -r w f steps window <<< "$SPIKES"
set -- $VARIANTS
n=$#
for v in "$@"; do
  left=$((BUDGET_S - ($(date +%s) - T0)))
  share=$((left / n))
  n=$((n - 1))
  # (gpu-holdout.sh starts a form only with the window and 50 s left: GPU run 143 gave its
  # variants 30 s each and three of them ran nothing)
  [ "$share" -lt $((window / 1000 + 55)) ] && { echo "skip $v: $share s"; continue; }
  case $v in
    default) envs=() ;;
    nosample) envs=(SLACK_PY_SAMPLE_MS=0) ;;
    noflush) envs=(SLACK_FLUSH_MS=600000) ;;
    zstd1) envs=(SLACK_ZSTD_LEVEL=1) ;;
    flush200) envs=(SLACK_FLUSH_MS=200) ;;
    buf256) envs=(SLACK_CUPTI_BUFFER_KB=256) ;;
    *) echo "unknown variant $v"; continue ;;
  esac
  echo "== $v (${envs[*]:-defaults}, $share s)"
  env "${envs[@]}" GC_LOG=1 OUT="$OUT/$v" BUDGET_S="$share" REPEATS=2 BENCH_REUSE=1 \
    HOLDOUT="$w:$f:$steps:$window:$f:12:2" bash scripts/gpu-holdout.sh > "$OUT/$v.log" 2>&1
done
python3 - "$OUT" $VARIANTS << 'EOF' | tee "$OUT/spikes-summary.txt"
import glob, os, re, statistics, sys
out = sys.argv[1]
print("| variant | phase | steps | median ms | mean ms | over 1.25x median | gc: gen:n:total_ms:max_ms |")
print("|---|---|---|---|---|---|---|")
for v in sys.argv[2:]:
    for f in glob.glob(os.path.join(out, v, "*.out")):
        for ln in open(f):
            m = re.search(r"phase=(\w+) steps_ms=([0-9.,]+)", ln)
            if not m or "RESULT" not in ln:
                continue
            x = [float(s) for s in m.group(2).split(",")]
            x = x[1:] if m.group(1) == "traced" else x  # the traced first step: the model's set-up
            if not x:
                continue
            med = statistics.median(x)
            gc = re.search(r"gc_steps=(\S*)", ln)
            rep = re.search(r"repeat=(\d+)", ln)
            phase = m.group(1) + (f" {rep.group(1)}" if rep else "")
            print(f"| {v} | {phase} | {len(x)} | {med:.1f} | {statistics.mean(x):.1f} | "
                  f"{sum(s > 1.25 * med for s in x)} | {gc.group(1) if gc else '-'} |")
EOF
