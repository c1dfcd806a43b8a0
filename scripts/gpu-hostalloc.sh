#!/usr/bin/env bash
# Whether cudaMallocHost, cudaHostAlloc and cudaFreeHost hold the host while the GPU is busy
# (scripts/workloads/hostalloc_probe.py): untraced, then under libslack, which hooks them since
# session 38 (format.h records cudaFreeHost as synchronizing, as cudaFree, by the CUDA guide's
# list; this is the measurement that list stands in for): the traced run's records of the calls
# (their count and their median time, by function) come after. Writes $OUT/hostalloc-summary.txt.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-hostalloc}
mkdir -p "$OUT/tr"
{
  echo "untraced:"
  timeout 60 python3 scripts/workloads/hostalloc_probe.py 2>&1 | grep -E "RESULT|Error|error"
  echo "traced (LD_PRELOAD=libslack.so):"
  SLACK_OUTPUT=$OUT/tr SLACK_QUIET=1 LD_PRELOAD=$ROOT/build/libslack.so timeout 60 \
    python3 scripts/workloads/hostalloc_probe.py 2>&1 | grep -E "RESULT|Error|error"
  echo "the traced run's records of the pinned calls (fn: count, median us):"
  for f in "$OUT"/tr/*.slk; do
    [ -f "$f" ] || continue
    build/slack dump --kind host "$f" | python3 -c '
import re, statistics, sys
by = {}
for ln in sys.stdin:
    m = re.search(r"fn=(cudaMallocHost|cudaHostAlloc|cudaFreeHost|cuMem\w*Host\w*) ", ln)
    if m:
        s, e = (int(re.search(k + r"=(\d+)", ln).group(1)) for k in (" start", " end"))
        by.setdefault(m.group(1), []).append((e - s) / 1e3)
for k, v in sorted(by.items()):
    print(f"  {k}: {len(v)}, {statistics.median(v):.1f} us")
print("  (none)" if not by else "", end="")'
  done
} | tee "$OUT/hostalloc-summary.txt"
