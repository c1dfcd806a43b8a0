#!/usr/bin/env bash
# Side by side with Nsight Systems (docs/ACCURACY.md): GPU run 1's probe workload recorded by nsys
# (its SQLite export) and by slack, one after the other on the H200 (tests/data/nsys-run1/).
# scripts/compare_nsys.py classifies both with slack's rules: every kernel name has the same count
# in both, and no class's share of the step differs by more than the 2-point bar.
set -u
cd "$(dirname "$0")/.." || exit 1
SLACK=${BUILD:-build}/slack
D=tests/data/nsys-run1
command -v xz > /dev/null || { echo "test_nsys_side: skipped (no xz)"; exit 77; }
python3 -c 'import sqlite3' 2> /dev/null || { echo "test_nsys_side: skipped (no sqlite3)"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
xz -dc "$D/nsys-probe-h200-run1.sqlite.xz" > "$T/nsys.sqlite" || exit 1
python3 scripts/compare_nsys.py "$T/nsys.sqlite" "$D/probe-h200-run1.slk" --slack "$SLACK" \
  > "$T/out.md" 2>&1 || { cat "$T/out.md"; echo "test_nsys_side: compare_nsys.py failed"; exit 1; }
fail=0
check() { # PATTERN WHAT
  if grep -qE "$1" "$T/out.md"; then echo "ok: $2"; else echo "FAIL: $2"; fail=1; fi
}
check '^## Kernels: ([0-9]+) in nsys, \1 in slack; ([0-9]+) names, \2 with identical counts' \
  "the same kernels, name by name"
check '^Largest per-step difference: .*\(within the 2-point bar\)' "every class within 2 points"
check '^Steps: nsys capture ([0-9]+) \(pattern\), slack capture \1 \(pattern\)' "the same steps"
[ $fail = 0 ] || { sed -n '1,3p;/^Steps/,$p' "$T/out.md"; exit 1; }
echo "test_nsys_side: 3 checks passed"
