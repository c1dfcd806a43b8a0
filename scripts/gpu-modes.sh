#!/usr/bin/env bash
# Why the seed's loader forms run at two paces (issue 11): the machine's topology, then
# scripts/workloads/loader_modes.py in ROUNDS interleaved rounds of each variant (VARIANTS,
# NAME or NAME:VAR=VALUE...): the loader form as is, the DataLoader alone (no GPU work), torch's
# thread pool cut (OMP_NUM_THREADS), the main thread pinned to one CPU (SCENARIO_PIN_CPU).
# Per step: host interval, time in the loader, CPU, involuntary switches, machine-wide busy share.
# $OUT gets modes-summary.txt (median, p10, p90 and the share of steps in the slow plateau per
# process) and every process's output.
# Usage: bash scripts/gpu-modes.sh   (ROUNDS=2, STEPS=40, FORM=l, BUDGET_S=240)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-modes}
ROUNDS=${ROUNDS:-2}
STEPS=${STEPS:-40}
FORM=${FORM:-l}
BUDGET_S=${BUDGET_S:-240}
VARIANTS=${VARIANTS:-default loader:MODE=loader omp4:OMP_NUM_THREADS=4 pin:SCENARIO_PIN_CPU=3 omp1:OMP_NUM_THREADS=1}
T0=$(date +%s)
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{
  echo "== topology"
  lscpu 2>&1 | grep -E '^(CPU\(s\)|Thread|Core|Socket|NUMA|Model name|CPU MHz|Hypervisor)'
  lscpu -e 2>&1 | head -20
  cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null
  uptime
} > "$OUT/topology.txt" 2>&1
cat "$OUT/topology.txt"
S=$OUT/modes-summary.txt
: > "$S"
for r in $(seq 1 "$ROUNDS"); do
  for v in $VARIANTS; do
    [ $(($(date +%s) - T0 + 30)) -gt "$BUDGET_S" ] && { echo "skip $v round $r: budget"; continue; }
    name=${v%%:*}
    vars=()
    [ "$v" != "$name" ] && IFS=: read -r -a vars <<< "${v#*:}"
    env "${vars[@]}" FORM=$FORM STEPS=$STEPS timeout 120 python3 scripts/workloads/loader_modes.py \
      > "$OUT/$name.r$r.out" 2> "$OUT/$name.r$r.err"
    rc=$?
    line=$(python3 - "$OUT/$name.r$r.out" <<'PY'
import re, statistics, sys
ms = [float(m.group(1)) for m in re.finditer(r"^STEP \d+ ms=([\d.]+)", open(sys.argv[1]).read(), re.M)]
if not ms:
    print("no steps"); sys.exit()
lo = min(ms)
slow = sum(1 for x in ms if x > lo * 1.25)
print(f"n={len(ms)} median={statistics.median(ms):.1f} min={lo:.1f} max={max(ms):.1f} "
      f"slow(>1.25 min)={slow}/{len(ms)}")
PY
)
    echo "$name.r$r (exit $rc): $line" | tee -a "$S"
  done
done
