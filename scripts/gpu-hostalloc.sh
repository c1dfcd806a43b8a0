#!/usr/bin/env bash
# Whether cudaMallocHost, cudaHostAlloc and cudaFreeHost hold the host while the GPU is busy
# (scripts/workloads/hostalloc_probe.py): untraced, then under libslack (which does not hook
# them; their time is host work outside CUDA in its traces). Writes $OUT/hostalloc-summary.txt.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-hostalloc}
mkdir -p "$OUT"
{
  echo "untraced:"
  timeout 60 python3 scripts/workloads/hostalloc_probe.py 2>&1 | grep -E "RESULT|Error|error"
  echo "traced (LD_PRELOAD=libslack.so):"
  SLACK_OUTPUT=$OUT SLACK_QUIET=1 LD_PRELOAD=$ROOT/build/libslack.so timeout 60 \
    python3 scripts/workloads/hostalloc_probe.py 2>&1 | grep -E "RESULT|Error|error"
} | tee "$OUT/hostalloc-summary.txt"
