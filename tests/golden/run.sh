#!/usr/bin/env bash
# Golden tests of the slack command: runs every case of tests/golden/cases and compares stdout,
# stderr and the exit code with tests/golden/NAME.out. SLACK_GOLDEN_UPDATE=1 rewrites the .out
# files instead (review the diff before committing). File sizes, which depend on the zstd
# version, are masked. Also checks that `slack record` prepends libslack.so to LD_PRELOAD.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
SLACK=$BUILD/slack
WRITER=$BUILD/tests/test_reader
if [ ! -x "$SLACK" ] || [ ! -x "$WRITER" ]; then
  make -s BUILD="$BUILD" "$SLACK" "$WRITER" > /dev/null || exit 1
fi
GOLDEN=$ROOT/tests/golden
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$WRITER" --write-sample sample.slk || { echo "golden: cannot write the sample trace"; exit 1; }
body_len=$(od -An -tu4 -j12 -N4 sample.slk | tr -d ' ')
head -c $((16 + body_len + 20)) sample.slk > cut.slk
echo "hello, not a trace" > junk.txt
ln -s "$ROOT/tests/data" data # recorded traces, for the cases that read them

mask() {
  sed -E -e 's/("file_bytes": )[0-9]+/\1N/' -e 's/("bytes_per_gpu_event": )[0-9.e+]+/\1N/' \
    -e 's/^(size +)[0-9]+ bytes, [0-9.]+ bytes/\1N bytes, N bytes/' \
    -e 's/^(size +)[0-9]+ bytes$/\1N bytes/' -e "s|$BUILD|BUILD|g"
}

pass=0 fail=0
while IFS='|' read -r name args; do
  case "$name" in '' | '#'*) continue ;; esac
  # shellcheck disable=SC2086 # ARGS are split on purpose
  "$SLACK" $args > out.txt 2> err.txt < /dev/null
  rc=$?
  { echo "\$ slack${args:+ $args}"; cat out.txt; echo "--- stderr"; cat err.txt; echo "--- exit $rc"; } |
    mask > "$name.actual"
  # a --json case that succeeds must print one JSON document (a golden of broken JSON once
  # passed for a release: the diff only compares with what was accepted)
  if [[ " $args " == *" --json "* ]] && [ $rc = 0 ] && [ -s out.txt ] &&
    ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))' out.txt 2> /dev/null; then
    echo "golden: $name: stdout is not valid JSON (slack $args)"
    fail=$((fail + 1))
    continue
  fi
  if [ "${SLACK_GOLDEN_UPDATE:-0}" = 1 ]; then
    cp "$name.actual" "$GOLDEN/$name.out"
    pass=$((pass + 1))
  elif diff -u "$GOLDEN/$name.out" "$name.actual" > diff.txt 2>&1; then
    pass=$((pass + 1))
  else
    echo "golden: $name differs (slack $args):"
    head -40 diff.txt
    fail=$((fail + 1))
  fi
done < "$GOLDEN/cases"

# record (stdout and exit code only: libslack.so, preloaded into the child, owns its stderr)
check() { # NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then
    pass=$((pass + 1))
  else
    echo "golden: $1: expected '$2', got '$3'"
    fail=$((fail + 1))
  fi
}
if [ -f "$BUILD/libslack.so" ]; then
  got=$(LD_PRELOAD=/nonexistent/first.so "$SLACK" record -o out -- printenv LD_PRELOAD 2>/dev/null)
  check "record: LD_PRELOAD" "$BUILD/libslack.so:/nonexistent/first.so" "$got"
  got=$(env -u LD_PRELOAD "$SLACK" record -o out -- printenv LD_PRELOAD 2>/dev/null)
  check "record: LD_PRELOAD when unset" "$BUILD/libslack.so" "$got"
  got=$("$SLACK" record -o "out dir" -- printenv SLACK_OUTPUT 2>/dev/null)
  check "record: -o sets SLACK_OUTPUT" "out dir" "$got"
  got=$("$SLACK" record --output=o2 printenv SLACK_OUTPUT 2>/dev/null)
  check "record: --output=DIR, no --" "o2" "$got"
  got=$("$SLACK" record --duration 60000 --tail=3000 --delay 5 -- sh -c \
    'echo $SLACK_DURATION_MS $SLACK_TAIL_MS $SLACK_DELAY_MS' 2>/dev/null)
  check "record: --duration, --tail=MS, --delay" "60000 3000 5" "$got"
  "$SLACK" record -- sh -c 'exit 7' 2>/dev/null
  check "record: exit status of the command" 7 $?
  "$SLACK" record -- /nonexistent/program 2> err.txt
  check "record: command not found" "127 slack record: cannot run /nonexistent/program: No such file or directory" "$? $(cat err.txt)"
else
  echo "golden: $BUILD/libslack.so is missing: slack record not checked"
  fail=$((fail + 1))
fi

echo "golden: $pass passed, $fail failed"
[ "$fail" = 0 ]
