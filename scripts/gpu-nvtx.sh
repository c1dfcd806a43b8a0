#!/usr/bin/env bash
# NVTX on the H200: the probe's conv net with NVTX ranges (scripts/workloads/nvtx_probe.py),
# untraced and under libslack; the ranges recorded (slack dump), the steps slack takes from them
# (slack report --json), and the NVTX functions' cost (steps/s, untraced vs traced, 3 pairs).
# Usage: bash scripts/gpu-nvtx.sh   ($OUT gets nvtx-h200.slk and nvtx-summary.txt)
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/slack-nvtx}
mkdir -p "$OUT"
W=/tmp/slack-nvtx-work
rm -rf "$W" && mkdir -p "$W/tr"
S=$OUT/nvtx-summary.txt
make -j"$(nproc)" all > "$W/build.log" 2>&1 || { tail -20 "$W/build.log"; exit 1; }
{
  echo "== $(date -u) $(nvidia-smi -L | head -1)"
  for k in 1 2 3; do
    echo "untraced: $(STEPS=20 python3 scripts/workloads/nvtx_probe.py 2>&1 | grep RESULT)"
    rm -rf "$W/tr" && mkdir -p "$W/tr"
    echo "traced:   $(SLACK_OUTPUT=$W/tr LD_PRELOAD=$PWD/build/libslack.so STEPS=20 \
      python3 scripts/workloads/nvtx_probe.py 2>&1 | grep RESULT)"
  done
  t=$(ls -1 "$W"/tr/*.slk | head -1)
  cp "$t" "$OUT/nvtx-h200.slk"
  echo "ranges recorded by name:"
  build/slack dump "$t" | grep '^marker' | grep -o 'name="[^"]*"' | sort | uniq -c
  build/slack report --json "$t" | python3 -c '
import json, sys
g = max(json.load(sys.stdin)["gpus"], key=lambda g: g.get("busy_ns", 0))
s = g["steps"]
print("steps: count %d source %s (%s), %.2f ms per step" % (s["count"], s["source"], s["detail"], s["step_ns"] / 1e6))'
  build/slack info "$t" | head -12
} 2>&1 | tee "$S"
