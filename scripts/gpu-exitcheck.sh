#!/usr/bin/env bash
# Does the traced program exit? (docs/DESIGN.md: never hang its exit.) Each workload form runs
# under `slack record` on its whole process with a deadline (EXIT_S); one still alive then gets
# its threads' states written to $OUT/NAME.hang (each thread's name, wait channel and kernel
# stack from /proc, the native stacks by gdb or eu-stack where the machine has one, the Python
# stacks by faulthandler on SIGABRT), then is killed. GPU run 98 found holdout_gpt's `t` alive
# 525 s after its last step under slack record (its trace finished by SIGTERM, no exit probe).
#
# Usage: OUT=DIR bash scripts/gpu-exitcheck.sh   (EXIT_FORMS="holdout_gpt:t holdout_gpt:fixed",
#        EXIT_S=90, EXIT_STEPS=10; a form may name slack settings for its run after it, e.g.
#        holdout_gpt:t:SLACK_PROBE=0 or holdout_gpt:t:SLACK_PROBE_DETACH=0,SLACK_PY_SAMPLE_MS=0)
# The device has no gdb: `bash scripts/exittools.sh` here unpacks Debian's eu-stack into
# .exittools (git-ignored) for the device call to carry (carry [".exittools"]).
# Before and after a change: EXIT_OLD=DIR (a git-ignored source tree of the earlier commit,
# carried: `bash scripts/exittools.sh old REV` makes .exitold) builds DIR there and runs each form
# with its slack and with this one in turn, EXIT_REPEATS times (default 1), interleaved.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-exitcheck}
EXIT_FORMS=${EXIT_FORMS:-holdout_gpt:t holdout_gpt:fixed}
EXIT_S=${EXIT_S:-90}
EXIT_STEPS=${EXIT_STEPS:-10}
mkdir -p "$OUT"
[ -x build/slack ] && [ -f build/libslack.so ] || make -j"$(nproc)" all > "$OUT/build.log" 2>&1 || {
  tail -20 "$OUT/build.log"
  exit 1
}
EXIT_OLD=${EXIT_OLD:-}
BINS=build/slack
if [ -n "$EXIT_OLD" ]; then
  make -C "$EXIT_OLD" -j"$(nproc)" all > "$OUT/build-old.log" 2>&1 || {
    tail -20 "$OUT/build-old.log"
    exit 1
  }
  BINS="$EXIT_OLD/build/slack build/slack"
fi
runs=()
for r in $(seq 1 "${EXIT_REPEATS:-1}"); do
  for spec in $EXIT_FORMS; do
    for bin in $BINS; do runs+=("$r|$bin|$spec"); done
  done
done
for run in "${runs[@]}"; do
  IFS='|' read -r rep bin spec <<< "$run"
  IFS=: read -r w f envs <<< "$spec"
  name=$w-$f${envs:+-${envs//[=,]/-}}
  [ "$bin" != build/slack ] && name=old-$name
  [ "${EXIT_REPEATS:-1}" -gt 1 ] && name=$name-r$rep
  t0=$(date +%s)
  # shellcheck disable=SC2086
  env ${envs//,/ } PYTHONFAULTHANDLER=1 TRACED_STEPS=$EXIT_STEPS INPROC_FORMS=none \
    "$bin" record -o "$OUT/tr/$name" -- python3 "scripts/workloads/$w.py" --inproc 1 --form "$f" \
    > "$OUT/$name.out" 2> "$OUT/$name.err" &
  rec=$!
  while kill -0 $rec 2> /dev/null && [ $(($(date +%s) - t0)) -lt "$EXIT_S" ]; do sleep 1; done
  if ! kill -0 $rec 2> /dev/null; then
    wait $rec
    echo "$name: exit $? in $(($(date +%s) - t0)) s"
    # what slack said of its own problems (a bounded CUPTI call that did not return, since
    # session 27: "CUPTI's cuptiFinalize did not return within N ms")
    grep '^slack: ' "$OUT/$name.err" | grep -v 'tracing to' | sed 's/^/    /' | head -5
    continue
  fi
  pid=$(pgrep -f -n "scripts/workloads/$w.py --inproc 1 --form $f")
  echo "$name: alive after $EXIT_S s (python pid ${pid:-?}): $OUT/$name.hang"
  {
    echo "== $(grep -c . "$OUT/$name.out") lines of output; its last: $(tail -c 300 "$OUT/$name.out")"
    for t in /proc/"$pid"/task/*; do
      echo "== task ${t##*/} $(cat "$t/comm" 2> /dev/null) wchan=$(cat "$t/wchan" 2> /dev/null) state=$(awk '/^State/ {print $2}' "$t/status" 2> /dev/null)"
      cat "$t/stack" 2> /dev/null | head -12
    done
    if [ -x .exittools/usr/bin/eu-stack ]; then
      LD_LIBRARY_PATH=.exittools/usr/lib/x86_64-linux-gnu timeout 60 .exittools/usr/bin/eu-stack \
        -p "$pid" 2>&1 | head -600
    elif command -v gdb > /dev/null; then
      timeout 60 gdb -batch -p "$pid" -ex "thread apply all bt 25" 2>&1 | tail -400
    elif command -v eu-stack > /dev/null; then
      timeout 60 eu-stack -p "$pid" 2>&1 | head -400
    else
      echo "(no gdb or eu-stack here)"
    fi
  } > "$OUT/$name.hang" 2>&1
  kill -ABRT "$pid" 2> /dev/null # faulthandler: every Python thread's stack on stderr
  sleep 3
  kill -KILL "$pid" 2> /dev/null
  wait $rec
  tail -60 "$OUT/$name.err" >> "$OUT/$name.hang"
  head -60 "$OUT/$name.hang"
done
