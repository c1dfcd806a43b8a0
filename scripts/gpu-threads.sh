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
# twice: as glibc comes, then with its large blocks kept in the heap (no mmap/munmap per block,
# no trimming): whether the loader threads' frees of their images' memory (munmap, madvise: a
# TLB shootdown on every CPU that runs a thread of the process) slow the launching threads
half=$(((${BUDGET_S:-240} - 15) / 2))
timeout "$half" python3 scripts/workloads/threads_probe.py > "$OUT/threads.log" 2>&1
echo "exit $?" >> "$OUT/threads.log"
MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=17179869184 MALLOC_TOP_PAD_=268435456 \
  timeout "$half" python3 scripts/workloads/threads_probe.py > "$OUT/threads-heap.log" 2>&1
echo "exit $?" >> "$OUT/threads-heap.log"
{
  echo "threads_probe (untraced; ROUNDS=${ROUNDS:-4} of ${ROUND_STEPS:-12} steps): per step"
  grep -E "^MEDIAN|^exit|^SETUP|Error" "$OUT/threads.log"
  echo "glibc's large blocks kept in the heap (MALLOC_MMAP_THRESHOLD_=32 MB, no trim):"
  grep -E "^MEDIAN|^exit|^SETUP|Error" "$OUT/threads-heap.log"
} > "$OUT/threads-summary.txt"
