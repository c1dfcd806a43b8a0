#!/usr/bin/env bash
# A smoke run of the sanitizer builds inside make test (the whole suite under them: make
# test-asan, make test-tsan, tests/robust.mk). Each build (build/asan: AddressSanitizer and
# UndefinedBehaviorSanitizer; build/tsan: ThreadSanitizer) runs a few end-to-end scenarios that
# cover the hooks, the writer, the exits and fork: the runtime workload, an _exit child without a
# periodic flush, exec, a trigger signal, the exit paths. Session 35 found make test-tsan dead at
# every scenario's start (TSan resolving its interceptors through libslack's dlsym, libunwind's
# cache freed after TSan let go of the thread) and a data race on the trigger signal's flag:
# nothing ran it. Skipped inside a sanitizer build's own make test, and where the compiler has no
# sanitizer runtime.
set -u
cd "$(dirname "$0")/.." || exit 2
[ "${BUILD:-build}" = build ] || {
  echo "SKIP sanitizers: run from the plain build's make test (BUILD=${BUILD})"
  exit 77
}
for san in address thread; do
  printf 'int main(void){return 0;}\n' | cc -x c -fsanitize=$san -o /tmp/slack-san-probe-$$ - \
    2> /dev/null || {
    echo "SKIP sanitizers: cc -fsanitize=$san does not link here"
    exit 77
  }
done
rm -f /tmp/slack-san-probe-$$
SCEN="e2e_workload_runtime robust_fork_cold_exit_noflush e2e_exec win_trigger_signal robust_exit_paths"
fail=0
run() { # BUILD-DIR SAN ENV...
  local dir=$1 san=$2
  shift 2
  make -s -j"$(nproc)" BUILD="$dir" SAN="$san" all stub progs > "$dir.log" 2>&1 || {
    echo "FAIL build $dir: $(tail -5 "$dir.log")"
    fail=1
    return
  }
  for s in $SCEN; do
    out=$(env "$@" BUILD="$dir" ROBUST_KILL_LAG_MS=1500 python3 tests/e2e/e2e.py -k "$s" 2>&1)
    # -k is a substring: the scenario itself must pass, whatever else its name matched
    if grep -q "^PASS $s\$" <<< "$out"; then
      echo "ok $dir $s"
    else
      echo "FAIL $dir $s"
      printf '%s\n' "$out" | grep -A6 "^FAIL" | head -20
      fail=1
    fi
  done
}
mkdir -p build
run build/asan address,undefined UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0
run build/tsan thread TSAN_OPTIONS=halt_on_error=0:exitcode=66:die_after_fork=0
exit $fail
