#!/usr/bin/env bash
# The whole shared nsys sample (../shared/data/nsys-probe-2025.3.1.sqlite.xz, beside the
# repository: shared/ in CI), imported: 28,410 kernels, 189 memcpys and 654 memsets, and every
# report of `slack stats` identical to nsys's definitions computed from the SQLite
# (tests/tools/nsys_stats_ref.py), whose sums are printed. Without the sample it prints SKIP and
# exits 77 (tests/issue6.mk leaves it out of `make test` then). Run from the repository root.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
SLACK=$BUILD/slack
[ -x "$SLACK" ] || make -s BUILD="$BUILD" "$SLACK" > /dev/null || exit 1
sample=$(git rev-parse --show-toplevel 2> /dev/null || pwd)/../shared/data/nsys-probe-2025.3.1.sqlite.xz
if [ ! -f "$sample" ]; then
  echo "SKIP stats-sample: $sample not found"
  exit 77
fi
if ! "$SLACK" --version --build-options | grep -q 'sqlite: yes'; then
  echo "SKIP stats-sample: this slack is built without SQLite"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
xz -dc "$sample" > "$work/probe.sqlite" || { echo "stats-sample: FAIL: cannot decompress $sample"; exit 1; }
out=$("$SLACK" import nsys "$work/probe.sqlite" -o "$work/probe.slk" 2> /dev/null) ||
  { echo "stats-sample: FAIL: import: $out"; exit 1; }
echo "stats-sample: $out"
grep -q ' 28410 kernels, 189 memcpys, 654 memsets,' <<< "$out" ||
  { echo "stats-sample: FAIL: expected 28410 kernels, 189 memcpys, 654 memsets"; fail=1; }
for r in cuda_api_sum cuda_gpu_kern_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum; do
  python3 tests/tools/nsys_stats_ref.py "$work/probe.sqlite" $r > "$work/ref.csv"
  "$SLACK" stats --report $r --format csv --output "$work/out" "$work/probe.slk" 2> /dev/null
  if cmp -s "$work/ref.csv" "$work/out_$r.csv"; then
    echo "stats-sample: $r: $(($(wc -l < "$work/ref.csv") - 1)) rows identical to the reference"
  else
    echo "stats-sample: FAIL: $r differs ('<' reference, '>' slack):"
    diff "$work/ref.csv" "$work/out_$r.csv" | head -8
    fail=1
  fi
done
python3 - "$work" << 'EOF2' || fail=1
import csv, json, subprocess, sys
w = sys.argv[1]
t = json.loads(subprocess.run([sys.executable, "tests/tools/nsys_stats_ref.py", w + "/probe.sqlite",
                               "--totals"], check=True, capture_output=True, text=True).stdout)
rows = lambda r: list(csv.DictReader(open("%s/out_%s.csv" % (w, r))))
k, m, s = rows("cuda_gpu_kern_sum"), rows("cuda_gpu_mem_time_sum"), rows("cuda_gpu_mem_size_sum")
got = {"kernels": (sum(int(x["Instances"]) for x in k), sum(int(x["Total Time (ns)"]) for x in k)),
       "memcpys": (sum(int(x["Count"]) for x in m if "memcpy" in x["Operation"]),
                   sum(int(x["Total Time (ns)"]) for x in m if "memcpy" in x["Operation"])),
       "memsets": (sum(int(x["Count"]) for x in m if "memset" in x["Operation"]),
                   sum(int(x["Total Time (ns)"]) for x in m if "memset" in x["Operation"]))}
bad = 0
for key, (n, ns) in got.items():
    want = (t[key]["count"], t[key]["ns"])
    print("stats-sample: %s: slack stats %d, %d ns; SQLite count(*) %d, sum(end - start) %d ns"
          % (key, n, ns, want[0], want[1]))
    bad |= (n, ns) != want
mb = {op: float(x["Total (MB)"]) for x in s for op in [x["Operation"]]}
print("stats-sample: bytes: memcpy %.3f MB (SQLite %d B), memset %.3f MB (SQLite %d B)" % (
    sum(v for o, v in mb.items() if "memcpy" in o), t["memcpys"]["bytes"],
    mb.get("[CUDA memset]", 0), t["memsets"]["bytes"]))
sys.exit(bad)
EOF2
[ $fail -eq 0 ] && echo "stats-sample: PASS" || echo "stats-sample: FAIL"
exit $fail
