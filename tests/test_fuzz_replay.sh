#!/usr/bin/env bash
# The fuzz targets' committed corpora and every past finding (tests/fuzz/corpus/TARGET and
# tests/fuzz/regressions/TARGET) replayed through the targets' own LLVMFuzzerTestOneInput, built
# with the normal compiler by tests/fuzz/replay.c (no clang, no libFuzzer; with SAN=... the
# sanitizers check them too). A crash or a failed check of a target fails the test and names the
# input. docs/RELIABILITY.md. Run from the repository root; BUILD = build folder.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
TEST_NAME=fuzz-replay
. tests/tools/harness.sh
# a sanitized build (SAN=address,undefined) stops at the first report instead of going on; the
# open findings in code owned elsewhere are in tests/fuzz/ubsan.supp
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$PWD/tests/fuzz/ubsan.supp
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

targets="reader commands config"
[ -f /usr/include/sqlite3.h ] && targets="$targets import" # as the Makefile's HAVE_SQLITE
for t in $targets; do
  bin=$BUILD/fuzz/replay-$t
  if [ ! -x "$bin" ] && ! make -s BUILD="$BUILD" "$bin" > /dev/null; then
    bad "$t: cannot build $bin"
    continue
  fi
  dirs=""
  for d in tests/fuzz/corpus/$t tests/fuzz/regressions/$t; do
    [ -d "$d" ] && dirs="$dirs $d"
  done
  [ -n "$dirs" ] || { bad "$t: no corpus and no regression inputs"; continue; }
  # shellcheck disable=SC2086
  if out=$(timeout 120 "$bin" $dirs 2>&1); then
    ok
    echo "$t: ${out##*$'\n'}"
  else
    # again, naming each input before it runs: the last one named is the culprit
    # shellcheck disable=SC2086
    culprit=$(timeout 120 "$bin" -v $dirs 2>&1 | grep '^replay: ' | tail -n 1)
    bad "$t: ${culprit:-?}: $(tail -n 15 <<< "$out")"
  fi
done
finish
