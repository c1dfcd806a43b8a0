#!/usr/bin/env bash
# What `slack record` costs a loop's first iterations, across processes (GPU run 110: the
# detector's DataLoader in the main thread ran its first 24 iterations at a median 306 ms recorded
# whole against 193 in an untraced process; run 109's window, later in its process, +7%). One
# process per CONFIGS entry and round, interleaved (A B C A B C ...): the program's own timer of
# each of its TRACED_STEPS iterations (the first, the model's first step, left out), bare or under
# `slack record` (NAME:record[:VAR=VALUE...] runs it under slack record with those variables).
# $OUT gets recordcost-summary.txt (a row per process, then the median and range per
# configuration) and each process's output.
# Usage: bash scripts/gpu-recordcost.sh  (after `make all`; WORKLOAD=holdout_detect FORM=l
#        TRACED_STEPS=24 ROUNDS=3 CONFIGS="bare record nosample:record:SLACK_PY_SAMPLE_MS=0"
#        BUDGET_S=300; KEEP_TRACES=1 keeps the traces; a VAR=VALUE of a bare configuration goes to
#        the program: IDLE_THREADS=48, scripts/workloads/scenario_common.py)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-recordcost}
WORKLOAD=${WORKLOAD:-holdout_detect}
FORM=${FORM:-l}
TRACED_STEPS=${TRACED_STEPS:-24}
ROUNDS=${ROUNDS:-3}
CONFIGS=${CONFIGS:-bare record nosample:record:SLACK_PY_SAMPLE_MS=0}
BUDGET_S=${BUDGET_S:-300}
T0=$(date +%s)
mkdir -p "$OUT"
S=$OUT/recordcost-summary.txt
printf 'round\tconfig\tmedian_step_ms\tmin_ms\tmax_ms\tsteps\n' > "$S"
for r in $(seq 1 "$ROUNDS"); do
  for cfg in $CONFIGS; do
    [ $(($(date +%s) - T0 + 45)) -gt "$BUDGET_S" ] && { echo "skip $cfg round $r: budget"; continue; }
    IFS=: read -r -a parts <<< "$cfg"
    name=${parts[0]}
    mode=${parts[1]:-$name}
    vars=("${parts[@]:2}")
    tag=$name.r$r
    if [ "$mode" = record ]; then
      env "${vars[@]}" TRACED_STEPS="$TRACED_STEPS" INPROC_FORMS=none timeout 120 \
        build/slack record -o "$OUT/tr-$tag" -- python3 "scripts/workloads/$WORKLOAD.py" --inproc 1 \
        --form "$FORM" > "$OUT/$tag.out" 2> "$OUT/$tag.err"
    else
      env "${vars[@]}" TRACED_STEPS="$TRACED_STEPS" INPROC_FORMS=none timeout 120 \
        python3 "scripts/workloads/$WORKLOAD.py" --inproc 1 --form "$FORM" > "$OUT/$tag.out" 2> "$OUT/$tag.err"
    fi
    echo "$tag: exit $? ($(($(date +%s) - T0)) s)"
    python3 - "$OUT/$tag.out" "$r" "$name" >> "$S" << 'PY'
import re, statistics, sys
m = re.search(r"phase=traced steps_ms=([0-9.,]+)", open(sys.argv[1]).read())
v = [float(x) for x in m.group(1).split(",")][1:] if m else []
if v:
    print(f"{sys.argv[2]}\t{sys.argv[3]}\t{statistics.median(v):.1f}\t{min(v):.1f}\t{max(v):.1f}\t{len(v)}")
PY
  done
done
python3 - "$S" >> "$S" << 'PY'
import collections, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
by = collections.defaultdict(list)
for r in rows:
    by[r[1]].append(float(r[2]))
base = statistics.median(by["bare"]) if by.get("bare") else None
print("\nconfig\tprocesses\tmedian of medians ms\trange\tagainst bare")
for k, v in by.items():
    m = statistics.median(v)
    rel = f"{(m / base - 1) * 100:+.1f}%" if base else "-"
    print(f"{k}\t{len(v)}\t{m:.1f}\t{min(v):.1f}..{max(v):.1f}\t{rel}")
PY
cat "$S"
[ "${KEEP_TRACES:-0}" = 1 ] || rm -rf "$OUT"/tr-* # KEEP_TRACES=1: the recorded traces stay
echo "elapsed $(($(date +%s) - T0)) s"
