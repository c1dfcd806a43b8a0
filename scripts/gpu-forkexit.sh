#!/usr/bin/env bash
# Children that leave by os._exit keep their traces (interpose/exit.c): scripts/workloads/
# fork_exit.py under `slack record` with no periodic flush in the children's lives
# (SLACK_FLUSH_MS=60000): each child's trace must hold at least the kernels it says it launched,
# and read whole (`slack info`). Writes $OUT/forkexit-summary.txt.
#
# Usage: OUT=DIR bash scripts/gpu-forkexit.sh   (CHILDREN=2, STEPS=50)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-forkexit}
mkdir -p "$OUT"
[ -x build/slack ] || make -j"$(nproc)" all > "$OUT/build.log" 2>&1 || exit 1
SLACK_FLUSH_MS=60000 build/slack record -o "$OUT/tr" -- python3 scripts/workloads/fork_exit.py \
  > "$OUT/run.out" 2> "$OUT/run.err"
rc=$?
{
  echo "fork_exit under slack record: exit $rc; $(grep -c '^CHILD' "$OUT/run.out") children said they ran"
  grep '^CHILD' "$OUT/run.out" | while read -r _ pidkv _ kkv; do
    pid=${pidkv#pid=}
    want=${kkv#kernels_at_least=}
    f=$(ls "$OUT"/tr/*-"$pid".slk 2> /dev/null | head -1)
    if [ -z "$f" ]; then
      echo "child $pid: FAIL no trace"
      continue
    fi
    got=$(build/slack info --json "$f" 2> /dev/null |
      python3 -c 'import json, sys; print(json.load(sys.stdin).get("kernels", 0))' 2> /dev/null)
    if [ "${got:-0}" -ge "$want" ]; then
      echo "child $pid: ok, $got kernels (at least $want)"
    else
      echo "child $pid: FAIL ${got:-no} kernels, launched at least $want"
    fi
  done
} | tee "$OUT/forkexit-summary.txt"
