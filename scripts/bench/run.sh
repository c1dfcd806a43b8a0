#!/usr/bin/env bash
# slack's overhead benchmark on the GPU machine, in one call (docs/PERFORMANCE.md):
#   bash scripts/bench/run.sh
# builds libslack.so, libslack-nop.so, the slack command, empty_launch (nvcc -cudart shared) and
# bare_cupti, then runs interleaved rounds of an empty-kernel launch loop, of the Python
# workloads (conv net, tiny ops, small transformer) and of a host-bound loader (ResNet-50,
# resnet_seed.py --form l) under no profiler, the nop build, hooks only, the full trace,
# production windows (SLACK_WINDOW=$BENCH_WINDOW, 500ms/5s), bare CUPTI, torch.profiler and nsys,
# within BENCH_BUDGET_S (default 570 s) of its start. Results: $OUT/summary.md (printed last),
# $OUT/results.csv, $OUT/bench-logs.tgz.
# Settings: see scripts/bench/gpu_bench.py (BENCH_REPEATS, BENCH_CONFIGS, BENCH_PROCS...);
# BENCH_DRYRUN=1 tries the whole script on a CPU (tests/stub, a fake torch suite and loader).
set -u
export BENCH_T0=${BENCH_T0:-$(date +%s.%N)}
cd "$(dirname "$0")/../.." || exit 2
exec python3 scripts/bench/gpu_bench.py "$@"
