#!/usr/bin/env bash
# Why a loader in threads slows the training thread's own work (scripts/workloads/threads_probe.py):
# holdout_threads' loop fed by 4 loader threads with torch's intra-op threads as they come (t),
# the same threads with one intra-op thread each (t1, the DataLoader workers' setting), 12 worker
# processes (fixed), and t1 with each batch built before its step (t1w), untraced, interleaved
# rounds in one process. Writes $OUT/threads-summary.txt (the MEDIAN lines; RESULT lines in
# $OUT/threads.log).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-threads}
mkdir -p "$OUT"
timeout $((${BUDGET_S:-240} - 15)) python3 scripts/workloads/threads_probe.py > "$OUT/threads.log" 2>&1
echo "exit $?" >> "$OUT/threads.log"
{
  echo "threads_probe (untraced; ROUNDS=${ROUNDS:-4} of ${ROUND_STEPS:-12} steps): per step"
  grep -E "^MEDIAN|^exit|^SETUP|Error" "$OUT/threads.log"
} > "$OUT/threads-summary.txt"
