#!/usr/bin/env bash
# The tracer's cost on host work that makes no CUDA call, inside one process (issue 13; the
# seed's case, docs/ACCURACY.md): resnet_seed's loader form under libslack with SLACK_WINDOW
# (2 s traced every 4 s by default), the loader's time per step inside the windows against
# outside them (scripts/workloads/window_pace.py, scripts/hostpace.py), one process per
# configuration, ROUNDS interleaved rounds. Configurations (CONFIGS, NAME or NAME:VAR=VALUE...):
# default; nice (the writer thread reniced to 19 from outside once it exists: does its CPU time
# next to the program's threads cost the loader?); nosample (SLACK_PY_SAMPLE_MS=0).
# $OUT gets hostpace-summary.txt (a line per process) and hostpace-logs.tgz.
# Usage: bash scripts/gpu-hostpace.sh   (after `make all`; CONFIGS, ROUNDS=2, STEPS=150,
#        WINDOW=2s/4s, FORM=l, BUDGET_S=300)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-hostpace}
CONFIGS=${CONFIGS:-default nice nosample:SLACK_PY_SAMPLE_MS=0}
ROUNDS=${ROUNDS:-2}
STEPS=${STEPS:-150}
WINDOW=${WINDOW:-2s/4s}
FORM=${FORM:-l}
BUDGET_S=${BUDGET_S:-300}
T0=$(date +%s)
W=/tmp/slack-hostpace-work
rm -rf "$W"
mkdir -p "$W" "$OUT"
export PYTHONUNBUFFERED=1
S=$OUT/hostpace-summary.txt
: > "$S"
renice_writer() { # the writer thread of process $1, once it exists, to nice 19
  local i t
  for i in $(seq 100); do
    [ -d /proc/"$1" ] || return
    for t in /proc/"$1"/task/*; do
      [ "$(cat "$t/comm" 2>/dev/null)" = slack-writer ] && { renice -n 19 -p "${t##*/}" > /dev/null; return; }
    done
    sleep 0.05
  done
}
for r in $(seq 1 "$ROUNDS"); do
  for cfg in $CONFIGS; do
    [ $(($(date +%s) - T0 + 60)) -gt "$BUDGET_S" ] && { echo "skip $cfg round $r: budget"; continue; }
    name=${cfg%%:*}
    vars=()
    [ "$cfg" != "$name" ] && IFS=: read -r -a vars <<< "${cfg#*:}"
    tag=$name.r$r
    mkdir -p "$W/$tag"
    env "${vars[@]}" SLACK_WINDOW=$WINDOW SLACK_OUTPUT=$W/$tag LD_PRELOAD=$ROOT/build/libslack.so \
      FORM=$FORM STEPS=$STEPS timeout 200 python3 scripts/workloads/window_pace.py \
      > "$W/$tag.out" 2> "$W/$tag.err" &
    pid=$!
    # `env` became `timeout`, whose child is the program
    [ "$name" = nice ] && { sleep 1; for p in $(pgrep -P "$pid") "$pid"; do renice_writer "$p"; done; }
    wait "$pid"
    rc=$?
    t=$(ls -1 "$W/$tag"/*.slk 2>/dev/null | head -1)
    line="no trace (exit $rc)"
    [ -n "$t" ] && line=$(python3 scripts/hostpace.py build/slack "$W/$tag.out" "$t" 2>&1)
    echo "$tag: $line" | tee -a "$S"
  done
done
tar -C "$W" -czf "$OUT/hostpace-logs.tgz" --exclude='*.slk' . 2>/dev/null
