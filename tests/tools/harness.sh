# The checks harness of the command tests (test_import.sh, test_stats.sh, test_timeline.sh).
# Source it after setting TEST_NAME; then `expect`, `ok`, `bad`, and `finish` at the end.
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() {
  echo "$TEST_NAME: FAIL: $*"
  fail=$((fail + 1))
}
# expect NAME RC PATTERN -- CMD...: exit code RC and PATTERN (grep -E) in stdout+stderr
expect() {
  local name=$1 rc=$2 pat=$3 out got
  shift 4
  out=$("$@" 2>&1)
  got=$?
  if [ "$got" != "$rc" ]; then
    bad "$name: exit $got, expected $rc: $(head -c 1500 <<< "$out")"
  elif [ -n "$pat" ] && ! grep -qE -- "$pat" <<< "$out"; then
    bad "$name: no /$pat/ in: $(head -c 1500 <<< "$out")"
  else
    ok
  fi
}
# Prints the count line and exits with the verdict.
finish() {
  echo "$TEST_NAME: $pass checks passed, $fail failed"
  [ $fail -eq 0 ]
  exit $?
}
