#!/usr/bin/env bash
# slack info and slack stats in bounded memory (issue 18; analyzer/launches.c, analyzer/cmd_stats.c,
# docs/slack-info.md and docs/slack-stats.md "Memory"):
#   - their peak RSS does not grow with the trace: a generated trace (tests/tools/gen_trace) of
#     2 M records against one of 0.5 M, both past the bound (info's windows of 100 k spans, stats'
#     50 k distinct values; before the bound, info grew by 32 bytes per API record and host call,
#     stats by 8 bytes per value: about 60 and 12 MB between the two);
#   - what they print does not depend on the bound: info in windows of a few hundred spans and
#     slices of 20,000 correlation ids, stats within budgets of a few hundred values
#     (read again and again), print what they print in one piece, on random traces made to
#     strain the launch join (tests/tools/gen_join.c: calls that overlap on a thread, API records
#     outside their calls or many to one id, ids up to 2^32 - 1, times past 2^62, files out of
#     time order) and on H200 traces of tests/data.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
SLACK=$BUILD/slack
GEN=$BUILD/tools/gen_trace
JOIN=$BUILD/tools/gen_join
make -s BUILD="$BUILD" "$SLACK" "$GEN" "$JOIN" > /dev/null || exit 1
TEST_NAME=bounded
. tests/tools/harness.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# peak RSS (KiB) of a command, its stdout to a file: python's getrusage of the child
rss() {
  local out=$1
  shift
  python3 - "$out" "$@" << 'PY'
import resource, subprocess, sys
with open(sys.argv[1], "w") as f:
    rc = subprocess.run(sys.argv[2:], stdout=f, stderr=subprocess.DEVNULL).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if rc == 0 else -rc)
PY
}

"$GEN" "$work/small.slk" --events 500000 --threads 4 --devices 2 --streams 4 > /dev/null || exit 1
"$GEN" "$work/large.slk" --events 2000000 --threads 4 --devices 2 --streams 4 > /dev/null || exit 1
export SLACK_INFO_WINDOW_SPANS=100000 SLACK_STATS_VALUES=50000
GROWTH_KB=6000
for cmd in info stats; do
  small=$(rss "$work/$cmd-small.out" "$SLACK" $cmd "$work/small.slk")
  large=$(rss "$work/$cmd-large.out" "$SLACK" $cmd "$work/large.slk")
  if [ "$small" -le 0 ] || [ "$large" -le 0 ]; then
    bad "$cmd failed (rss $small, $large)"
  elif [ $((large - small)) -gt $GROWTH_KB ]; then
    bad "$cmd: peak RSS ${small} KiB at 0.5 M records, ${large} KiB at 2 M: grew by more than ${GROWTH_KB} KiB"
  else
    ok
  fi
done
grep -qE 'kernels whose launching host call was recorded: ([0-9]+) of \1 ' "$work/info-large.out" &&
  ok || bad "info of the 2 M trace: $(grep launches "$work/info-large.out")"
unset SLACK_INFO_WINDOW_SPANS SLACK_STATS_VALUES

# same CMD ENV... -- TRACE: CMD's output (stdout, stderr, exit status) under ENV as without it
same() {
  local cmd=$1 e=()
  shift
  while [ "$1" != -- ]; do
    e+=("$1")
    shift
  done
  local trace=$2
  # shellcheck disable=SC2086
  $SLACK $cmd "$trace" > "$work/a.out" 2> "$work/a.err"
  local ra=$?
  # shellcheck disable=SC2086
  env "${e[@]}" $SLACK $cmd "$trace" > "$work/b.out" 2> "$work/b.err"
  local rb=$?
  if [ $ra = $rb ] && cmp -s "$work/a.out" "$work/b.out" && cmp -s "$work/a.err" "$work/b.err"; then
    ok
  else
    bad "$cmd $trace with ${e[*]}: differs ($ra/$rb): $(diff "$work/a.out" "$work/b.out" | head -4)"
  fi
}

traces=()
for s in 1 5 11; do # seeds whose traces catch a window that forgets a thread's last call before it
  "$JOIN" "$work/j$s.slk" --seed $s --launches 6000 --threads 4 || exit 1
  same "info --json" SLACK_INFO_WINDOW_SPANS=100 -- "$work/j$s.slk"
  traces+=("$work/j$s.slk")
done
"$JOIN" "$work/jmany.slk" --seed 5 --threads 70 --launches 8000 || exit 1
"$JOIN" "$work/jhuge.slk" --seed 6 --huge --launches 6000 || exit 1
for t in "$work/jmany.slk" "$work/jhuge.slk" tests/data/diagnosis/run41/resnet_seed-l.slk; do
  same "info --json" SLACK_INFO_WINDOW_SPANS=1000 -- "$t"
  traces+=("$t")
done
for t in "$work/j1.slk" "$work/jhuge.slk"; do
  same "info --json" SLACK_INFO_WINDOW_SPANS=200 SLACK_INFO_CORR_SLICE=20000 -- "$t"
done
for t in "${traces[@]}"; do
  same "stats --format csv" SLACK_STATS_VALUES=400 -- "$t"
done
same "stats" SLACK_STATS_VALUES=1 -- tests/data/accuracy/copy_stall-broken.slk
same "stats --format csv" SLACK_STATS_VALUES=3000 -- "$work/small.slk"
# the random traces do strain the join: some kernels join, some do not
grep -qE 'recorded: [1-9][0-9]* of [0-9]+' <("$SLACK" info "$work/j5.slk") &&
  ! grep -qE 'recorded: ([0-9]+) of \1 ' <("$SLACK" info "$work/j5.slk") && ok ||
  bad "gen_join's trace: $("$SLACK" info "$work/j5.slk" | grep launches)"
# a cut trace: windows read only the chunks the first pass read
head -c 150000 "$work/j11.slk" > "$work/cut.slk"
same "info" SLACK_INFO_WINDOW_SPANS=300 -- "$work/cut.slk"
same "stats" SLACK_STATS_VALUES=300 -- "$work/cut.slk"
# bad values are ignored with a line
SLACK_INFO_WINDOW_SPANS=x "$SLACK" info "$work/j1.slk" 2>&1 > /dev/null |
  grep -q 'SLACK_INFO_WINDOW_SPANS=x is not a count' && ok || bad "SLACK_INFO_WINDOW_SPANS=x"
SLACK_STATS_VALUES=0 "$SLACK" stats "$work/j1.slk" 2>&1 > /dev/null |
  grep -q 'SLACK_STATS_VALUES=0 is not a count' && ok || bad "SLACK_STATS_VALUES=0"
finish
