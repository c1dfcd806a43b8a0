#!/usr/bin/env bash
# Every GPU check in one call (device time is scarce): a probe trace, the NVTX check
# (scripts/gpu-nvtx.sh), the accuracy suite (scripts/accuracy.sh) and the overhead benchmark
# (scripts/bench/run.sh), each within its own time budget. The full accuracy run and the bench
# want about 9 minutes each: with the device's 10-minute limit per call, run them as separate
# calls (`bash scripts/accuracy.sh`, `bash scripts/bench/run.sh`) and this with small budgets.
# Usage: bash scripts/gpu-final.sh   ($OUT: files to bring back)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/slack-gpu}
mkdir -p "$OUT"
make -j16 all > /tmp/build.log 2>&1 || { tail -20 /tmp/build.log; exit 1; }
echo "== probe trace (format $(build/slack --version | sed 's/.*format //; s/)//'))"
rm -rf /tmp/probe && mkdir -p /tmp/probe
SLACK_OUTPUT=/tmp/probe LD_PRELOAD=$PWD/build/libslack.so STEPS=60 python3 scripts/workloads/probe_train.py
cp /tmp/probe/*.slk "$OUT/probe-h200.slk"
build/slack info --json "$OUT/probe-h200.slk" | grep -E '"(kernels|memcpys|memsets|dropped|bytes_per_gpu_event|kernels_with_launch)"'
echo "== nvtx"
bash scripts/gpu-nvtx.sh > /tmp/nvtx.log 2>&1
tail -12 /tmp/nvtx.log
echo "== accuracy"
REPEATS=${REPEATS:-5} CALIB_PAIRS=${CALIB_PAIRS:-2} BUDGET_S=${ACC_BUDGET_S:-270} bash scripts/accuracy.sh > /tmp/accuracy.log 2>&1
tail -5 /tmp/accuracy.log
echo "== bench"
BENCH_T0=$(date +%s.%N) BENCH_BUDGET_S=${BENCH_BUDGET_S:-230} bash scripts/bench/run.sh > /tmp/bench.log 2>&1
tail -3 /tmp/bench.log
echo "================ accuracy table ================"
cat "$OUT/accuracy-table.md" 2>/dev/null | head -60
echo "================ bench summary ================"
cat "$OUT/summary.md" 2>/dev/null | head -80
ls -la "$OUT"
