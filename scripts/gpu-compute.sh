#!/usr/bin/env bash
# Compute hints on the H200 (analyzer/hints.c), in one call: scripts/workloads/compute_pairs.py's
# pairs (fp32 vs bf16 autocast ResNet-50; eager vs torch.compile of an elementwise-heavy stack):
# each form traced once under libslack (STEPS steps), then REPEATS interleaved untraced repeats of
# every form in one process (the truth: the step each fix gives). $OUT gets compute-traces.tgz,
# compute-truth.txt and compute-summary.txt; `python3 scripts/compute_table.py` puts slack's
# hints next to the measured steps.
# Usage: bash scripts/gpu-compute.sh   (REPEATS=5 STEPS=20 BUDGET_S=300)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-compute}
REPEATS=${REPEATS:-5}
STEPS=${STEPS:-20}
BUDGET_S=${BUDGET_S:-300}
T0=$(date +%s)
W=/tmp/slack-compute-work
rm -rf "$W" && mkdir -p "$W/tr" "$W/flat" "$OUT"
exec > >(tee -a "$W/compute.log") 2>&1
export PYTHONUNBUFFERED=1
left() { echo $((BUDGET_S - ($(date +%s) - T0))); }
make -j"$(nproc)" build/libslack.so > "$W/build.log" 2>&1 || { tail -20 "$W/build.log"; exit 1; }
for f in fp32 amp eager compiled; do
  [ "$(left)" -lt 60 ] && { echo "skip traced $f: budget"; continue; }
  mkdir -p "$W/tr/$f"
  SLACK_OUTPUT=$W/tr/$f LD_PRELOAD=$ROOT/build/libslack.so STEPS=$STEPS WARMUP=5 timeout 180 \
    python3 scripts/workloads/compute_pairs.py --form $f > "$W/$f.out" 2> "$W/$f.err"
  echo "traced $f: exit $?; $(grep RESULT "$W/$f.out")"
  tr=$(ls -1 "$W/tr/$f"/*.slk 2> /dev/null | head -1)
  [ -n "$tr" ] && cp "$tr" "$W/flat/compute_pairs-$f.slk"
done
tar -C "$W/flat" -czf "$OUT/compute-traces.tgz" .
if [ "$(left)" -gt 60 ]; then
  STEPS=$STEPS WARMUP=5 timeout $(($(left) - 15)) python3 scripts/workloads/compute_pairs.py \
    --bench "$REPEATS" > "$W/bench.out" 2> "$W/bench.err"
  echo "bench: exit $?"
  grep -E '^(RESULT|MEDIAN)' "$W/bench.out" > "$OUT/compute-truth.txt"
fi
{
  echo "== untraced step ms (medians of $REPEATS interleaved repeats)"
  grep MEDIAN "$OUT/compute-truth.txt" 2> /dev/null
  ls -la "$W/flat"
  # the hints are read from the traces afterwards: python3 scripts/compute_table.py
} | tee "$OUT/compute-summary.txt"
tar -C "$W" --exclude=tr --exclude=flat -czf "$OUT/compute-logs.tgz" .
echo "elapsed $(($(date +%s) - T0)) s"
