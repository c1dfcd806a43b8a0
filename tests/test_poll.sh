#!/usr/bin/env bash
# A loop that waits for the GPU by asking (cudaEventQuery / cudaStreamQuery until done) through
# the CPU stand-in (tests/progs/poll.c, docs/CLASSIFICATION.md "Waits by polling"): each run of
# questions is one record whose `bytes` counts the "not ready" answers (all of them, against the
# program's own count), a spin loop's millions of questions leave a whole trace (before the fold
# the writer lost it: no record at all; CUPTI's record of each question is folded too), the wait
# and the host's work after it read
# serialization at the query's site with the polling fix, and the same questions asked while the
# GPU has the next step queued read no stall.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
make -s BUILD="$BUILD" "$BUILD/slack" "$BUILD/libslack.so" "$BUILD/progs/poll" > /dev/null || exit 1
TEST_NAME=poll
. tests/tools/harness.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for mode in sleep spin stream ahead; do
  mkdir -p "$tmp/$mode"
  out=$(SLACK_OUTPUT="$tmp/$mode" SLACK_QUIET=1 LD_PRELOAD="$PWD/$BUILD/libslack.so" \
    "$BUILD/progs/poll" "$mode" 2> "$tmp/$mode.err")
  rc=$?
  [ $rc -eq 0 ] && ok || bad "$mode: exit $rc: $(head -c 500 "$tmp/$mode.err")"
  [ -s "$tmp/$mode.err" ] && bad "$mode: stderr: $(head -c 500 "$tmp/$mode.err")" || ok
  trace=$(ls "$tmp/$mode"/*.slk 2> /dev/null | head -1)
  [ -n "$trace" ] || {
    bad "$mode: no trace"
    continue
  }
  "$BUILD/slack" dump --kind host "$trace" > "$tmp/$mode.dump" || bad "$mode: dump failed"
  "$BUILD/slack" report --json "$trace" > "$tmp/$mode.json" || bad "$mode: report failed"
  # the stand-in, as CUPTI 13.0 (GPU run 105), writes a SYNC record for every question: a
  # spin's back-to-back ones are folded by the writer (writer_cupti.c sync_fold)
  syncs=$("$BUILD/slack" dump --kind sync "$trace" | grep -c '^sync ')
  if [ "$mode" = spin ]; then
    [ "$syncs" -le 600 ] && ok || bad "spin: $syncs SYNC records for 60 steps"
  fi
  res=$(python3 - "$mode" "$out" "$tmp/$mode.dump" "$tmp/$mode.json" << 'EOF'
import json, re, sys
mode, out, dump, rep = sys.argv[1:5]
m = re.match(r"poll: (\w+), (\d+) steps, (\d+) questions, (\d+) not ready$", out)
if not m:
    print("BAD program said %r" % out); sys.exit()
steps, asked, not_ready = int(m.group(2)), int(m.group(3)), int(m.group(4))
recs = []
for line in open(dump):
    if "Query" not in line:
        continue
    f = dict(re.findall(r" (\w+)=(\d+|0x[0-9a-f]+)(?= |$)", line.rstrip()))
    recs.append((int(f.get("bytes", "0")), int(f.get("flags", "0"), 16), int(f.get("result", "0"))))
folded = sum(b for b, _, _ in recs)
print("ok" if folded == not_ready else
      "BAD %s: %d not-ready answers in the trace's query records, the program counted %d" %
      (mode, folded, not_ready))
# one record per run: at most two a step (a run left unfinished, then the one that ends in done)
print("ok" if len(recs) <= 2 * steps + 2 else
      "BAD %s: %d query records for %d questions in %d steps" % (mode, len(recs), asked, steps))
done_runs = sum(1 for b, fl, r in recs if fl & 0x8 and r == 0)
print("ok" if done_runs >= steps - 2 else "BAD %s: %d polled runs ended in done, %d steps" %
      (mode, done_runs, steps))
g = json.load(open(rep))["gpus"][0]
v = g["verdict"]
if g["kernels"] != 4 * steps:
    print("BAD %s: %d kernels in the trace, %d launched" % (mode, g["kernels"], 4 * steps))
if mode == "ahead":
    print("ok" if v["class"] == "none" else "BAD ahead: verdict %s (%s), expected none" %
          (v["class"], v.get("site")))
    sys.exit()
fn = "cudaStreamQuery" if mode == "stream" else "cudaEventQuery"
ser = g["steps"]["per_step_ns"]["serialization"]
print("ok" if v["class"] == "serialization" and fn in v.get("site", "") else
      "BAD %s: verdict %s at %s" % (mode, v["class"], v.get("site")))
print("ok" if "event.query()" in v.get("fix", "") else "BAD %s: fix %r" % (mode, v.get("fix")))
# the host's 1.5 ms of work after each answer, and the answer's lateness (a 100 us sleep)
print("ok" if 1.4e6 <= ser <= 4.0e6 else "BAD %s: serialization %.0f ns a step" % (mode, ser))
# fixed: the 8 ms of kernels back to back
fixed = v["step_ns_if_fixed"]
print("ok" if abs(fixed - 8.0e6) <= 0.1 * 8.0e6 else
      "BAD %s: step if fixed %.0f ns, the kernels take 8.0 ms" % (mode, fixed))
EOF
  )
  while read -r verdict rest; do
    case $verdict in
      ok) ok ;;
      BAD) bad "$rest" ;;
      *) bad "unexpected: $verdict $rest" ;;
    esac
  done <<< "$res"
done
finish
