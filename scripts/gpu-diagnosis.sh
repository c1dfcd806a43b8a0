#!/usr/bin/env bash
# The diagnosis suite (docs/ACCURACY.md, "The seed's case"), in one call on the H200:
#   1. build;
#   2. resnet_seed (scripts/workloads/resnet_seed.py: ResNet-50, real CPU transforms, three
#      causes switched alone and together): one process per form, each under libslack with
#      SLACK_DURATION_MS (WINDOW_MS; LOADER_WINDOW_MS for the forms with the loader in the main
#      thread): the form's steps traced inside the window (TRACED_STEPS, LOADER_TRACED_STEPS),
#      then, CUPTI detached, the form untraced for SLACK_TAIL_MS (the untraced tail);
#      the truth (TRUTH=shared, the default): one more process, untraced, REPEATS interleaved
#      rounds of every form (TRUTH_STEPS timed steps each after 2 warm-up steps; each form's
#      runner kept across the rounds, BENCH_REUSE=1, the order rotated each round);
#      TRUTH=inproc (runs 20-32): each traced process then ran REPEATS interleaved untraced
#      rounds of its form, of the form with each of its causes removed, and of the fixed form
#      (scenario_common.py --inproc), the truth of a form from its own process;
#   3. steps_probe (scripts/workloads/steps_probe.py): loops whose steps are hard to find,
#      traced, with their iteration counts.
# $OUT gets diagnosis-traces.tgz (NAME.slk: resnet_seed-FORM.slk, steps_probe-FORM.slk),
# diagnosis-logs.tgz, diagnosis-truth.txt (every RESULT/INPROC_MEDIAN line) and prints a table.
# Usage: bash scripts/gpu-diagnosis.sh   (FORMS="lcs l ..." REPEATS=5 WINDOW_MS=9000 TAIL_MS=3000
#        TRUTH=shared TRUTH_STEPS=8 LOADER_WINDOW_MS=20000 LOADER_TRACED_STEPS=30 TRACED_STEPS=40
#        NEIGHBOURS="lcs lc fixed": the untraced forms instead of the form's neighbours
#        STEP_FORMS="tiny matmul4 ops1200"; BUDGET_S=560 skips what no longer fits;
#        RECORD=cli: `slack record` on the whole process, no window or tail)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-diagnosis}
FORMS=${FORMS:-lcs lc ls cs l c s fixed}
STEP_FORMS=${STEP_FORMS-tiny matmul4 ops1200}
REPEATS=${REPEATS:-5}
TRUTH=${TRUTH:-shared}
TRUTH_STEPS=${TRUTH_STEPS:-8}
TRUTH_REPEATS=${TRUTH_REPEATS:-$REPEATS}
# kept for the truth process when the traced forms run (TRUTH=shared)
TRUTH_RESERVE_S=${TRUTH_RESERVE_S:-0}
[ "$TRUTH" = shared ] && TRUTH_RESERVE_S=${DIAG_TRUTH_RESERVE_S:-140}
WINDOW_MS=${WINDOW_MS:-9000}
LOADER_WINDOW_MS=${LOADER_WINDOW_MS:-20000}
TRACED_STEPS=${TRACED_STEPS:-40}
LOADER_TRACED_STEPS=${LOADER_TRACED_STEPS:-30}
TAIL_MS=${TAIL_MS:-3000} # SLACK_TAIL_MS: the host's calls timed untraced after the window
# RECORD=cli: each form recorded as a user does, `slack record -o DIR -- python3 ...`: the whole
# process, no window, no untraced tail (the report assumes the host's pace); WINDOW_MS and
# TAIL_MS unused
RECORD=${RECORD:-window}
BUDGET_S=${BUDGET_S:-560}
T0=$(date +%s)
W=/tmp/slack-diagnosis-work
rm -rf "$W"
mkdir -p "$W/tr" "$W/flat" "$OUT"
exec > >(tee -a "$W/diagnosis.log") 2>&1
export PYTHONUNBUFFERED=1
LIB=$ROOT/build/libslack.so
WL=$ROOT/scripts/workloads
left() { echo $((BUDGET_S - ($(date +%s) - T0))); }
save() {
  tar -C "$W" --exclude=tr --exclude=flat -czf "$OUT/diagnosis-logs.tgz" . 2>/dev/null
  tar -C "$W/flat" -czf "$OUT/diagnosis-traces.tgz" . 2>/dev/null
  grep -h -E '^(RESULT|INPROC_MEDIAN|MEDIAN)' "$W"/*.out > "$OUT/diagnosis-truth.txt" 2>/dev/null
}
# the forms a form is compared with: itself, itself without each cause, and the fixed form
neighbours() {
  local f=$1 out="$1" c rest
  [ "$f" = fixed ] && { echo fixed; return; }
  for c in $(echo "$f" | grep -o .); do
    rest=${f//$c/}
    out="$out ${rest:-fixed}"
  done
  echo "$out fixed" | tr ' ' '\n' | awk '!seen[$0]++' | tr '\n' ' '
}

echo "== machine ($(date -u))"
nvidia-smi -L 2>&1 | head -2
python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__)'
nproc
echo "== build"
make -j"$(nproc)" all > "$W/build.log" 2>&1 || { tail -30 "$W/build.log"; echo BUILD FAILED; save; exit 1; }

for f in $FORMS; do
  case $f in
    *l*) steps=$LOADER_TRACED_STEPS win=$LOADER_WINDOW_MS tail_steps=8 ;;
    *) steps=$TRACED_STEPS win=$WINDOW_MS tail_steps=30 ;;
  esac
  if [ "$(left)" -lt $((40 + TRUTH_RESERVE_S)) ]; then echo "skip resnet_seed $f: budget"; continue; fi
  tag=resnet_seed-$f
  mkdir -p "$W/tr/$tag"
  t=$(date +%s)
  if [ "$TRUTH" = shared ]; then
    # the tail: one untraced round of the form itself once the window has ended
    forms=$f reps=1 st=$tail_steps
  else
    forms=${NEIGHBOURS:-$(neighbours "$f")} reps=$REPEATS st=${STEPS:-8}
  fi
  if [ "$RECORD" = cli ]; then
    # the way a user records: slack record, the whole process, no window and no untraced tail
    # (INPROC_FORMS=none: the traced steps only, no untraced rounds after them)
    TRACED_STEPS=$steps INPROC_FORMS=none STEPS=$st timeout 240 \
      build/slack record -o "$W/tr/$tag" -- \
      python3 "$WL/resnet_seed.py" --inproc "$reps" --form "$f" > "$W/$tag.out" 2> "$W/$tag.err"
  else
    SLACK_DURATION_MS=$win SLACK_TAIL_MS=$TAIL_MS SLACK_OUTPUT=$W/tr/$tag LD_PRELOAD=$LIB \
      TRACED_STEPS=$steps INPROC_FORMS="$forms" STEPS=$st timeout 240 \
      python3 "$WL/resnet_seed.py" --inproc "$reps" --form "$f" > "$W/$tag.out" 2> "$W/$tag.err"
  fi
  rc=$?
  echo "$tag: exit $rc, $(($(date +%s) - t)) s; $(grep -E 'INPROC_MEDIAN|phase=traced' "$W/$tag.out" | sed 's/scenario=resnet_seed //' | tr '\n' ';')"
  [ $rc -ne 0 ] && tail -5 "$W/$tag.err"
  tr=$(ls -1 "$W/tr/$tag"/*.slk 2>/dev/null | head -1)
  [ -n "$tr" ] && cp "$tr" "$W/flat/$tag.slk"
  save
done

if [ "$TRUTH" = shared ]; then
  t=$(date +%s)
  reserve=0
  [ -n "$STEP_FORMS" ] && reserve=40 # the steps_probe loops after it
  budget=$(($(left) - ${STEP_RESERVE_S:-$reserve} - 10))
  if [ "$budget" -lt 60 ]; then
    echo "skip the truth process: budget"
  else
    # every form, REPEATS interleaved rounds, untraced, in one process; the runners are kept
    # across rounds when /dev/shm holds every worker pool's prefetched batches (4 pools of 48
    # batches of 38.5 MB), else rebuilt each round (their workers start each time)
    shm=$(df --output=avail -B1M /dev/shm 2>/dev/null | tail -1 | tr -d ' ')
    reuse=0
    [ "${shm:-0}" -gt 10000 ] && reuse=1
    # without reuse every round pays the workers' start (about 10 s a round): fewer rounds
    reps=$TRUTH_REPEATS
    [ $reuse = 0 ] && [ "$reps" -gt 5 ] && reps=5
    echo "truth process: /dev/shm ${shm:-?} MB free, BENCH_REUSE=$reuse, $reps rounds"
    BENCH_REUSE=$reuse STEPS=$TRUTH_STEPS WARMUP=2 timeout "$budget" \
      python3 "$WL/resnet_seed.py" --bench "$reps" > "$W/resnet_seed-truth.out" 2> "$W/resnet_seed-truth.err"
    rc=$?
    echo "truth: exit $rc, $(($(date +%s) - t)) s"
    grep MEDIAN "$W/resnet_seed-truth.out" | sed 's/scenario=resnet_seed //'
    [ $rc -ne 0 ] && tail -5 "$W/resnet_seed-truth.err"
  fi
  save
fi

for f in $STEP_FORMS; do
  if [ "$(left)" -lt 30 ]; then echo "skip steps_probe $f: budget"; continue; fi
  tag=steps_probe-$f
  mkdir -p "$W/tr/$tag"
  SLACK_OUTPUT=$W/tr/$tag LD_PRELOAD=$LIB STEPS=30 timeout 90 \
    python3 "$WL/steps_probe.py" --form "$f" > "$W/$tag.out" 2> "$W/$tag.err"
  echo "$tag: exit $?; $(cat "$W/$tag.out")"
  tr=$(ls -1 "$W/tr/$tag"/*.slk 2>/dev/null | head -1)
  [ -n "$tr" ] && cp "$tr" "$W/flat/$tag.slk"
done
save

echo "== table (docs/ACCURACY.md's columns; scripts/diagnosis_table.py)"
cp "$OUT/diagnosis-truth.txt" "$W/flat/truth.txt" 2>/dev/null
save
python3 scripts/diagnosis_table.py build/slack "$W/flat" > "$OUT/diagnosis-table.md" 2> "$W/table.err"
cat "$OUT/diagnosis-table.md"
for t in "$W"/flat/*.slk; do
  n=$(basename "$t" .slk)
  build/slack report --json "$t" > "$W/$n.report.json" 2> "$W/$n.report.err"
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["gpus"][0]["steps"]; print(sys.argv[2], "steps", s["count"], "iterations", s.get("iterations"), s["source"])' "$W/$n.report.json" "$n" 2>/dev/null
done
save
echo "== done in $(($(date +%s) - T0)) s"
