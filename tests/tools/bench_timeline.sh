#!/usr/bin/env bash
# make bench-timeline: `slack timeline` on synthetic traces of N records each (arguments; default
# 1, 3 and 10 million), printing per size the peak RSS (getrusage of the child, through GNU time
# when it is there), the wall time and the JSON written. The point: peak RSS stays flat as N
# grows, because the export streams. Writes in a temporary folder (TMPDIR), removed at the end.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
SLACK=$BUILD/slack
GEN=$BUILD/tools/gen_trace
[ -x "$SLACK" ] && [ -x "$GEN" ] || make -s BUILD="$BUILD" "$SLACK" "$GEN" > /dev/null || exit 1
sizes=${*:-1000000 3000000 10000000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# peak RSS in KiB and wall seconds of a command
measure() {
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%M %e' -o "$work/time" "$@" 2> "$work/stderr" > /dev/null
  else # no GNU time: python's getrusage of the child
    python3 - "$work/stderr" "$@" > "$work/time" << 'PY'
import resource, subprocess, sys, time
t = time.time()
with open(sys.argv[1], "w") as err:
    subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, round(time.time() - t, 2))
PY
  fi
}
printf '%-12s %-12s %-14s %-10s %-12s %s\n' records trace_bytes json_bytes seconds peak_rss_MiB events
for n in $sizes; do
  "$GEN" "$work/t.slk" --events "$n" --threads 4 --devices 2 --streams 4 > "$work/gen.json" || exit 1
  # the streaming export: the stall track (which holds the trace in memory) is left out
  measure "$SLACK" timeline "$work/t.slk" -o "$work/t.json" --no-stalls
  read -r rss secs < "$work/time"
  events=$(grep -oE '[0-9]+ events' "$work/stderr" | head -1)
  printf '%-12s %-12s %-14s %-10s %-12s %s\n' "$n" "$(stat -c %s "$work/t.slk")" \
    "$(stat -c %s "$work/t.json")" "$secs" "$(awk -v k="$rss" 'BEGIN {printf "%.1f", k / 1024}')" \
    "${events:-?}"
  tail -c 200 "$work/t.json" | grep -q '"idle_late_records":' || echo "  (the JSON does not end as it should)"
  rm -f "$work/t.json" "$work/t.slk"
done
