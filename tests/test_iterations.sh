#!/usr/bin/env bash
# steps.iterations against the known loop counts of every H200 trace under tests/data
# (scripts/iterations_check.py; docs/CLASSIFICATION.md, "Iterations"): one check per trace.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
make -s BUILD="$BUILD" "$BUILD/slack" > /dev/null || exit 1
TEST_NAME=iterations
. tests/tools/harness.sh
out=$(python3 scripts/iterations_check.py "$BUILD/slack")
while read -r verdict rest; do
  case $verdict in
    ok) ok ;;
    MISS) bad "$rest" ;;
  esac
done <<< "$out"
n=$(grep -cE '^(ok|MISS) ' <<< "$out")
[ "$n" -ge 70 ] && ok || bad "only $n traces with a known loop count found"
finish
