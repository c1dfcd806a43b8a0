#!/usr/bin/env bash
# make bench-analyzer: every analyzer command on synthetic traces of N records each (arguments;
# default 1, 10 and 50 million), printing per size and command the wall time, the CPU time (user
# + system), records per CPU second (one core: every command is single-threaded) and peak RSS (GNU
# time, else python's getrusage of the child). The traces come from
# tests/tools/gen_trace (4 host threads launching kernels, copies and memsets onto 4 streams of 2
# GPUs, each call joined to its CUPTI API record and its GPU work by correlation id, stream
# synchronizations and NVTX steps). Commands: info, stats, dump (to /dev/null), timeline (to a
# file), report, report --json. BENCH_COMMANDS (a |-separated list) picks some. BENCH_GEN_ARGS
# adds gen_trace options: `--step 100000` makes traces without NVTX steps (a range every 100000
# launches: none in a window), whose steps `slack report` finds by the pattern rule, as in most
# recorded traces. Writes in a temporary folder (TMPDIR), removed at the end. Never part of
# `make test`.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
SLACK=$BUILD/slack
GEN=$BUILD/tools/gen_trace
[ -x "$SLACK" ] && [ -x "$GEN" ] || make -s BUILD="$BUILD" "$SLACK" "$GEN" > /dev/null || exit 1
sizes=${*:-1000000 10000000 50000000}
commands=${BENCH_COMMANDS:-info|stats|dump|timeline|report|report --json}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# peak RSS in KiB, wall seconds, exit status and CPU seconds of a command
measure() {
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%M %e %x %U %S' -o "$work/time" "$@" 2> "$work/stderr" > /dev/null
  else
    python3 - "$work/stderr" "$@" > "$work/time" << 'PY'
import resource, subprocess, sys, time
t = time.time()
with open(sys.argv[1], "w") as err:
    rc = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err).returncode
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_maxrss, round(time.time() - t, 2), rc, r.ru_utime, r.ru_stime)
PY
  fi
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
printf '| %-10s | %-9s | %-13s | %8s | %8s | %15s | %11s |\n' records trace_MB command wall_s \
  cpu_s 'M records/cpu-s' 'peak RSS MB'
printf '|%s|%s|%s|%s|%s|%s|%s|\n' ------------ ----------- --------------- ---------- ---------- \
  ----------------- -------------
for n in $sizes; do
  read -ra gen_extra <<< "${BENCH_GEN_ARGS:-}"
  "$GEN" "$work/t.slk" --events "$n" --threads 4 --devices 2 --streams 4 "${gen_extra[@]}" \
    > "$work/gen.json" || exit 1
  records=$(grep -oE '"records": [0-9]+' "$work/gen.json" | grep -oE '[0-9]+$')
  mb=$(awk -v b="$(stat -c %s "$work/t.slk")" 'BEGIN {printf "%.1f", b / 1048576}')
  IFS='|' read -ra cmds <<< "$commands"
  for c in "${cmds[@]}"; do
    read -ra args <<< "$c"
    case "${args[0]}" in
    timeline) args+=(-o "$work/t.json") ;;
    esac
    measure "$SLACK" "${args[@]}" "$work/t.slk"
    read -r rss secs rc user sys < "$work/time"
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.2f", u + s}')
    rate=$(awk -v n="$records" -v s="$cpu" 'BEGIN {printf "%.2f", (s > 0 ? n / s / 1e6 : 0)}')
    note=
    [ "$rc" = 0 ] || note=" (exit $rc: $(head -c 120 "$work/stderr" | tr '\n' ' '))"
    printf '| %-10s | %-9s | %-13s | %8s | %8s | %15s | %11s |%s\n' "$records" "$mb" "$c" "$secs" \
      "$cpu" "$rate" "$(awk -v k="$rss" 'BEGIN {printf "%.0f", k / 1024}')" "$note"
    rm -f "$work/t.json"
  done
  rm -f "$work/t.slk"
done
