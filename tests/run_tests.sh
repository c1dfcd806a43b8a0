#!/bin/bash
# Runs every CPU-only test (from `make test`): the unit test binaries ($1, space-separated), the
# shell tests ($2), then the end-to-end scenarios of tests/e2e/e2e.py (one result each).
# Prints PASS/FAIL per test with its time, a failing test's last output lines, and last the line
# "N passed, M failed, K skipped" (a skipped test could not run on this machine: it exits 77,
# the automake convention, or 0 with a SKIP line; it neither passed nor failed). Exit status 0
# only when nothing failed.
set -u
cd "$(dirname "$0")/.." || exit 2
export BUILD=${BUILD:-build}
TIMEOUT=${TEST_TIMEOUT:-300}
pass=0
fail=0
skip=0
T_ALL=$(date +%s.%N)
secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }'; }
declare -A seen

run_one() {
  local name=$1 out rc t0
  shift
  t0=$(date +%s.%N)
  out=$(timeout "$TIMEOUT" "$@" 2>&1 </dev/null)
  rc=$?
  if [ $rc -eq 77 ] || { [ $rc -eq 0 ] && grep -q '^SKIP' <<< "$out"; }; then
    echo "SKIP $name ($(secs "$t0")): $(grep -m1 '^SKIP' <<< "$out")"
    skip=$((skip + 1))
  elif [ $rc -eq 0 ]; then
    echo "PASS $name ($(secs "$t0"))"
    pass=$((pass + 1))
  else
    [ $rc -eq 124 ] && out="$out
(timed out after ${TIMEOUT}s)"
    echo "FAIL $name (exit $rc, $(secs "$t0"))"
    printf '%s\n' "$out" | tail -n 25 | sed 's/^/    /'
    fail=$((fail + 1))
  fi
}

for t in $1; do
  [ -n "${seen[$t]:-}" ] && continue
  seen[$t]=1
  run_one "$(basename "$t")" "$t"
done

for t in $2; do
  [ -n "${seen[$t]:-}" ] && continue
  seen[$t]=1
  run_one "$t" bash "$t"
done

if command -v python3 >/dev/null 2>&1; then
  e2e_fail=0
  while IFS= read -r line; do
    case $line in
    "E2E_EXIT "*)
      # a crash of the runner itself, with no scenario reported failed, is a failure too
      if [ "${line#E2E_EXIT }" != 0 ] && [ $e2e_fail -eq 0 ]; then
        echo "FAIL e2e (tests/e2e/e2e.py exit ${line#E2E_EXIT })"
        fail=$((fail + 1))
      fi
      continue
      ;;
    "PASS "*) pass=$((pass + 1)) ;;
    "SKIP "*) skip=$((skip + 1)) ;;
    "FAIL "*) fail=$((fail + 1)) e2e_fail=$((e2e_fail + 1)) ;;
    esac
    printf '%s\n' "$line"
  done < <(timeout "$TIMEOUT" python3 tests/e2e/e2e.py 2>&1; echo "E2E_EXIT $?")
else
  echo "FAIL e2e (python3 not found)"
  fail=$((fail + 1))
fi

echo "$pass passed, $fail failed, $skip skipped ($(secs "$T_ALL"))"
[ $fail -eq 0 ]
