#!/usr/bin/env bash
# The GPU benchmark's script (scripts/bench/run.sh, gpu_bench.py) on the CPU: BENCH_DRYRUN=1 runs
# every process kind (c through the stand-in, py and hb through fake Python workloads that spin)
# under every configuration, so the script that only the H200 runs for real does not rot in CI.
# Checks that each kind's rows carry numbers from 2 rounds, the windows and host-bound targets
# are judged, and results.csv has a row per process and workload. The numbers are made up.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
TEST_NAME=bench-dryrun
. tests/tools/harness.sh
[ "$BUILD" = build ] || { echo "bench-dryrun: SKIP (the bench builds into build/)"; exit 0; }

OUT=$work/out BENCH_WORK=$work/work BENCH_DRYRUN=1 BENCH_BUDGET_S=120 BENCH_REPEATS=2 \
  BENCH_PROCS=c,py,hb bash scripts/bench/run.sh > "$work/log" 2>&1
rc=$?
[ $rc -eq 0 ] && ok || bad "run.sh exit $rc: $(tail -5 "$work/log")"
S=$work/out/summary.md
[ -s "$S" ] && ok || bad "no summary.md"
for row in '\| empty_launch \| libslack full trace \| 2 \| [0-9.]+' \
  '\| convnet \| libslack production windows [^|]* \| 2 \| [0-9.]+' \
  '\| loader \| no profiler \| 2 \| [0-9.]+ \([0-9.]+-[0-9.]+\) ms/step' \
  '\| loader \| libslack full trace \| 2 \| [0-9.]+' \
  '\| loader \| libslack production windows [^|]* \| 2 \| [0-9.]+'; do
  grep -qE -- "$row" "$S" && ok || bad "no row /$row/ in the summary"
done
grep -qE -- '^- production windows against no profiler .*(MET|MISSED|no average)' "$S" && ok ||
  bad "the windows target is not judged"
grep -qE -- '^- host-bound loader .*(MET|MISSED)' "$S" && ok || bad "the host-bound target is not judged"
grep -q 'not built yet' "$S" && bad "a row still says not built yet" || ok
# results.csv: one row per process and workload (c 1, py 3, hb 1 workloads; 2 rounds each)
python3 - "$work/out/results.csv" << 'PY' && ok || bad "results.csv: $(cat "$work/csv.err" 2>/dev/null)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault((r["proc"], r["config"]), 0)
    by[(r["proc"], r["config"])] += 1
need = {("c", "full"): 2, ("py", "full"): 6, ("hb", "full"): 2, ("hb", "windows"): 2}
bad = {k: (by.get(k), v) for k, v in need.items() if by.get(k) != v}
if bad or any(not r["value"] for r in rows if r["proc"] == "hb"):
    print(bad, file=sys.stderr)
    sys.exit(1)
PY
[ -s "$work/out/bench-logs.tgz" ] && ok || bad "no bench-logs.tgz"
finish
