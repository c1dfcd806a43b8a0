#!/usr/bin/env bash
# slack report across the ranks of one job (analyzer/ranks.c) on synthetic jobs written by
# tests/tools/gen_ranks.c, which prints what the report must find (the last rank to arrive, the
# others' mean wait per collective): a starved rank named as the straggler with data starvation
# as its cause and the others' wait inside the collectives; two hosts with skewed clocks aligned
# on the collectives' ends (not on the headers' realtime clocks, off by NTP's error); a missing
# rank; 8 ranks; a balanced job without stragglers; different jobs refused; memory that does not
# grow with the number of ranks (one rank's trace loaded at a time).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SLACK=$BUILD/slack
GEN=$BUILD/tools/gen_ranks
make -s BUILD="$BUILD" "$SLACK" "$GEN" > /dev/null || exit 1
TEST_NAME=ranks
. tests/tools/harness.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# gen NAME ARGS...: a job in $work/NAME, its truth in $work/NAME.truth, the report in NAME.json
gen() {
  local name=$1
  shift
  mkdir -p "$work/$name"
  "$GEN" "$work/$name" "$@" > "$work/$name.truth" || bad "gen_ranks $*"
  "$SLACK" report --json "$work/$name" > "$work/$name.json" 2> "$work/$name.err" ||
    bad "$name: slack report failed: $(cat "$work/$name.err")"
}
# check NAME PYTHON: PYTHON asserts on r (the report) and t (the truth); prints why it failed
check() {
  local out
  if out=$(python3 - "$work/$1.json" "$work/$1.truth" 2>&1 << EOF
import json, sys
r = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2]))
def near(x, want, tol):
    assert abs(x - want) <= tol, f"{x} not within {tol} of {want}"
def straggler(rank):
    s = [x for x in r["stragglers"] if x["rank"] == rank]
    assert s, f"rank {rank} not a straggler: {r['stragglers']}"
    return s[0]
$2
EOF
  ); then ok; else bad "$1: $out"; fi
}

# 1. two ranks, rank 1's loader 3 ms slow in every step (the DDP case of issue 16)
gen starved --ranks 2 --slow-rank 1 --slow-ns 3000000
check starved '
assert [x["rank"] for x in r["ranks"]] == [0, 1]
assert len(r["stragglers"]) == 1
s = straggler(1)
assert s["collectives"] == s["of"] == t["collectives"] == r["collectives"]["matched"], s
assert s["cause"] == "data_starvation", s["cause"]
# the others wait inside the collectives: the generator says how long
near(s["mean_wait_ns"], t["mean_wait_ns"], 0.02 * t["mean_wait_ns"])
r0 = r["ranks"][0]
near(r0["waited_in_collectives_ns"], s["others_waited_ns"], 1)
# the wait is communication on rank 0: its exposed communication holds it
assert r0["communication"]["exposed_ns"] >= 0.95 * r0["waited_in_collectives_ns"], r0
# the starvation it caused is its own loader gap: 3 ms x 30 steps more than rank 0
near(s["excess_ns"]["data_starvation"], 30 * 3000000, 0.3 * 30 * 3000000)
assert r["ranks"][1]["verdict"] == "data_starvation"
assert r["missing_ranks"] == []
'
# the text names it too
"$SLACK" report "$work/starved" > "$work/starved.txt" 2>&1
grep -q "rank 1 (node0): last in 60 of 60 collectives" "$work/starved.txt" &&
  grep -q "cause: data starvation" "$work/starved.txt" && ok ||
  bad "starved text: $(sed -n '/stragglers/,+4p' "$work/starved.txt")"

# 2. two hosts of two ranks: node1's clock 4 ms ahead, its realtime header 3.7 ms (NTP's error)
# rank 1 (node0) slow by 3 ms: less than the skew, so unaligned clocks would blame node1's ranks
gen skew --ranks 4 --hosts 2 --skew-ns 4000000 --ntp-ns 300000 --slow-rank 1 --slow-ns 3000000
check skew '
h = {x["host"]: x for x in r["clocks"]["hosts"]}
assert h["node0"]["source"] == "shared" and h["node1"]["source"] == "collective_ends", h
near(h["node1"]["offset_ns"], -4000000, 3000)           # the skew, found on the collectives
assert h["node1"]["residual_skew_median_ns"] <= 3000, h  # what is left after alignment
assert h["node1"]["residual_skew_max_ns"] <= 5000, h
near(h["node1"]["realtime_offset_ns"], -3700000, 1)       # the headers were off: not used
assert r["clocks"]["ends_agree"]
s = straggler(1)
assert s["collectives"] == 60 and s["cause"] == "data_starvation", s
near(s["mean_wait_ns"], t["mean_wait_ns"], 0.02 * t["mean_wait_ns"])
assert len(r["stragglers"]) == 1
'
# every long wait is rank 1's (node1's ranks, 4 ms ahead, would look 1 ms later unaligned)
check skew '
assert all(x["last_rank"] == 1 for x in r["longest_waits"]), r["longest_waits"]
assert r["collectives"]["with_straggler"] == 60
'

# 3. four ranks, rank 3's trace missing, rank 1 slow
gen missing --ranks 4 --missing 3 --slow-rank 1 --slow-ns 2000000
check missing '
assert r["missing_ranks"] == [3] and r["world_size"] == 4, r["missing_ranks"]
assert [x["rank"] for x in r["ranks"]] == [0, 1, 2]
s = straggler(1)
assert s["collectives"] == 60 and s["cause"] == "data_starvation", s
near(s["mean_wait_ns"], t["mean_wait_ns"], 0.02 * t["mean_wait_ns"])
'
"$SLACK" report "$work/missing" 2>&1 | grep -q "missing ranks (no trace given): 3;" && ok ||
  bad "missing rank not said in the text"

# 4. eight ranks on two hosts, rank 5 slow by 4 ms: every other rank waits about the same
gen eight --ranks 8 --hosts 2 --skew-ns 700000 --steps 20 --slow-rank 5 --slow-ns 4000000
check eight '
assert len(r["ranks"]) == 8 and len(r["stragglers"]) == 1
s = straggler(5)
assert s["collectives"] == 40 and s["cause"] == "data_starvation", s
near(s["mean_wait_ns"], t["mean_wait_ns"], 0.02 * t["mean_wait_ns"])
w = [x["ns"] for x in s["waits"]]
assert len(w) == 7 and max(w) - min(w) <= 0.02 * max(w), w
near([x for x in r["clocks"]["hosts"] if x["host"] == "node1"][0]["offset_ns"], -700000, 3000)
assert len(r["longest_waits"]) == 10 and r["longest_waits"][0]["last_rank"] == 5
'

# 5. nobody slow: no straggler (arrivals differ by the loader jitter only, under the threshold)
gen balanced --ranks 4 --steps 10
check balanced '
assert r["stragglers"] == [], r["stragglers"]
assert r["collectives"]["matched"] == 20 and r["collectives"]["with_straggler"] == 0
'

# 6. files of two jobs are refused, --merge takes them; a rank given twice is refused
mkdir -p "$work/other"
"$GEN" "$work/other" --ranks 2 --steps 5 --job other > /dev/null
"$SLACK" report "$work"/starved/*rank0* "$work"/other/*rank1* > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "ranks of different jobs" "$work/err" && ok ||
  bad "two jobs: $(cat "$work/err")"
"$SLACK" report --merge "$work"/starved/*rank0* "$work"/other/*rank1* > "$work/out" 2>&1 &&
  grep -q "warning: a collective ends" "$work/out" && ok ||
  bad "--merge of two jobs: $(head -3 "$work/out")"
"$SLACK" report "$work/starved" "$work"/starved/*rank1* > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "both rank 1" "$work/err" && ok || bad "a rank twice: $(cat "$work/err")"
# one rank's file alone is the usual report, with its exposed communication
"$SLACK" report "$work"/starved/*rank0* | grep -q "collective kernels (NCCL) ran .*exposed" && ok ||
  bad "one rank: no exposed communication line"

# 7. through libslack and the CPU stand-in (tests/stub): `slack record -o DIR -- LAUNCHER`, the
# launcher (a shell standing for torchrun: RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR:MASTER_PORT
# per child) makes no CUDA call and leaves no trace; its two ranks write slack-HOST-rankR-PID.slk,
# and `slack report DIR` reports across them (no collectives: none matched, no straggler)
make -s BUILD="$BUILD" "$BUILD/libslack.so" stub progs > /dev/null || exit 1
# shellcheck disable=SC2016 # expanded by the launcher
LD_LIBRARY_PATH="$PWD/$BUILD/stub" SLACK_QUIET=1 "$SLACK" record -o "$work/rec" -- bash -c '
  for r in 0 1; do
    RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 "$0" &
  done
  wait' "$PWD/$BUILD/progs/workload" > /dev/null 2>&1 || bad "slack record of the launcher failed"
[ "$(ls "$work/rec" | wc -l)" = 2 ] && ok || bad "the launcher left a trace: $(ls "$work/rec")"
n=$(ls "$work"/rec/slack-*-rank0-*.slk "$work"/rec/slack-*-rank1-*.slk 2> /dev/null | wc -l)
[ "$n" = 2 ] && ok || bad "recorded ranks: $(ls "$work/rec")"
"$SLACK" report --json "$work/rec" > "$work/rec.json" 2> "$work/rec.err" &&
  python3 - "$work/rec.json" << 'EOF' && ok || bad "recorded ranks' report: $(cat "$work/rec.err")"
import json, sys
r = json.load(open(sys.argv[1]))
assert [x["rank"] for x in r["ranks"]] == [0, 1] and r["job_id"] == "127.0.0.1:29500", r["ranks"]
assert r["collectives"]["matched"] == 0 and r["stragglers"] == [] and r["missing_ranks"] == []
assert all(x["device"] == 0 and x["time_ns"]["compute"] > 0 for x in r["ranks"]), r["ranks"]
EOF

# 8. memory: one rank's trace at a time, so 8 ranks cost about what 2 do (each 1500 steps)
maxrss() { # peak RSS (KB) of slack report DIR
  python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$SLACK" report "$1"
}
mkdir -p "$work/m2" "$work/m8"
"$GEN" "$work/m2" --ranks 2 --steps 1500 --slow-rank 1 --slow-ns 1000000 > /dev/null
"$GEN" "$work/m8" --ranks 8 --steps 1500 --slow-rank 1 --slow-ns 1000000 > /dev/null
m2=$(maxrss "$work/m2") m8=$(maxrss "$work/m8")
# all 8 loaded at once would take about 4x the 2; streaming keeps it within 1.5x
[ -n "$m2" ] && [ -n "$m8" ] && [ "$m8" -le $((m2 * 3 / 2)) ] && ok ||
  bad "peak RSS: 2 ranks $m2 KB, 8 ranks $m8 KB (grows with the ranks)"
echo "ranks: peak RSS 2 ranks ${m2} KB, 8 ranks ${m8} KB (1500 steps each)"

finish
