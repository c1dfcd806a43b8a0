#!/usr/bin/env bash
# The seed's case recorded the way a user records it (GPU run 96, `RECORD=cli bash
# scripts/gpu-diagnosis.sh`): each of resnet_seed's 8 forms under `slack record -o DIR --
# python3 resnet_seed.py ...`, the whole process, no window and no untraced tail (the report runs
# the host at the assumed pace), and one untraced truth process of 7 interleaved rounds of every
# form (tests/data/diagnosis/run96/truth.txt). Checks what these traces show
# (scripts/diagnosis_table.py; docs/ACCURACY.md "Run 96"):
# - the verdict of every form is the cause whose fix saves most (the fixed form: no stall);
# - every what-if within 15% of the measured step without its cause (the rounds' median), and
#   every form's all-stalls what-if within 15% of the fixed form;
# - the steps are the loop's iterations (30 with the loader in the main thread, 40 without);
# - launch overhead at the assumed pace within twice the recorded launch gaps less CUPTI's cost
#   (the range's top; a CUDA graph also takes the launch calls' own host time off a host-bound
#   step, so the point may pass the top a little): a launch that waited for the device while
#   CUDA loaded its kernel's module (lazy loading) is one-time work, not launch overhead (run
#   96's `l` read 1.74 ms a step against gaps of 14-21 us before world_loading, 23 us after).
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
make -s BUILD="$BUILD" "$BUILD/slack" > /dev/null || exit 1
TEST_NAME=h200_seed_record
. tests/tools/harness.sh
D=tests/data/diagnosis/run96
out=$(python3 scripts/diagnosis_table.py "$BUILD/slack" "$D" 2>&1 | python3 -c "
import sys
rows, first = [], True
for l in sys.stdin:
    if l.startswith('At the traced run'):
        first = False  # the second table (the truth at the traced pace): not read here
    if first and l.startswith('| ') and not l.startswith('| form'):
        rows.append([x.strip() for x in l.strip().strip('|').split('|')])
want = {'lcs': 'data_starvation', 'lc': 'data_starvation', 'ls': 'data_starvation',
        'cs': 'copy_stall', 'l': 'data_starvation', 'c': 'copy_stall', 's': 'serialization',
        'fixed': 'none'}
bad, seen, whatifs = [], {}, 0
for c in rows:
    seen[c[0]] = c[1]
    if c[2] == 'largest stall':
        continue
    # what-ifs: the last cell, the error of step_ns_if_removed against the step measured
    # without the cause (all stalls: against the fixed form)
    e = float(c[10].rstrip('%'))
    whatifs += 1
    if abs(e) > 15:
        bad.append(f'{c[0]} {c[2]} what-if {e:+.1f}%')
for f, v in want.items():
    if seen.get(f) != v:
        bad.append(f'{f} verdict {seen.get(f)}, not {v}')
if whatifs < 15:
    bad.append(f'{whatifs} what-if rows, expected 15')
print('; '.join(bad) if bad else 'ok')")
[ "$out" = ok ] && ok || bad "table: $out"
for f in lcs lc ls cs l c s fixed; do
  got=$("$BUILD/slack" report --json "$D/resnet_seed-$f.slk" | python3 -c '
import json, sys
g = json.load(sys.stdin)["gpus"][0]
s, t = g["steps"], g["tracer"]
lo = s.get("launch_overhead_assumed_pace_per_step_ns", 0)
top = s["launch_overhead_corrected_per_step_ns"]
print(s["iterations"], "assumed" if t.get("assumed_pace") else "measured",
      "lo-ok" if lo <= 2 * top else f"lo {lo} above twice the gaps {top}")')
  case $f in *l*) n=30 ;; *) n=40 ;; esac
  [ "$got" = "$n assumed lo-ok" ] && ok || bad "$f: $got (want: $n iterations, the assumed pace, lo-ok)"
done
finish
