#!/usr/bin/env bash
# The one entry point for GPU work on the device machine: builds once, then runs the named stages
# in order within one time budget, each with its own OUT subfolder and a share of what is left,
# and prints each stage's summary last. The stages are the scripts that do the work:
#
#   diagnosis  scripts/gpu-diagnosis.sh   the seed's case (resnet_seed forms, in-process truth)
#   callsites  scripts/gpu-callsites.sh   Python call sites, their cost, the host-bound loader
#   compute    scripts/gpu-compute.sh     compute-hint pairs (fp32/bf16, eager/compile)
#   accuracy   scripts/accuracy.sh        the labelled scenarios' truth and traces
#   nvtx       scripts/gpu-nvtx.sh        NVTX ranges as steps
#   probe      scripts/gpu-probe.sh       the exit probe of CUPTI's cost, call-site stacks
#   bench      scripts/bench/run.sh       the interleaved overhead benchmark
#   basics     scripts/gpu-run.sh         the probe workload, compile and fork variants, nsys
#   coexist    scripts/gpu-coexist.sh     slack under nsys and inside torch.profiler
#   hostslow   scripts/gpu-hostslow.sh    the tracer's cost on host work, in one process (tail)
#   hostpace   scripts/gpu-hostpace.sh    the loader's pace inside against outside windows
#   windows    scripts/gpu-windows.sh     CUPTI detached between production windows (issue 13)
#   modes      scripts/gpu-modes.sh       why the seed's loader forms run at two paces (issue 11)
#   holdout    scripts/gpu-holdout.sh     loops the classifier was not tuned on (issue 11)
#   exitcheck  scripts/gpu-exitcheck.sh   traced processes that must exit (the probe's load)
#   forkexit   scripts/gpu-forkexit.sh    fork children that leave by os._exit keep their traces
#   recordcost scripts/gpu-recordcost.sh  slack record against bare runs, across processes
#   hostalloc  scripts/gpu-hostalloc.sh   whether pinned host allocation and its free wait for the GPU
#   spikes     scripts/gpu-spikes.sh      where the traced steps' periodic spikes come from
#   threads    scripts/gpu-threads.sh     why a loader in threads slows the launching thread
#
# Usage: STAGES="callsites compute" bash scripts/gpu.sh    (BUDGET_S=570; STAGE_S="diagnosis=380"
# gives a stage a fixed share instead of an even split of what is left; $OUT as the device
# tool gives it: each stage writes under GPU_WORK/STAGE (/tmp/slack-gpu-stages), packed into
# $OUT/gpu-all.tgz after each stage, and what is printed goes to $OUT/gpu-summary.txt too (the
# tool brings back 8 files); a stage's own sub-stages: NAME_STAGES, e.g.
# CALLSITES_STAGES="sites cost")
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
# the device tool brings back 8 files at most: the stages write under a work folder, and
# $OUT gets gpu-all.tgz (every stage's files, tar xzf it) and gpu-summary.txt (what is printed)
FINAL_OUT=${OUT:-/tmp/slack-gpu}
OUT=${GPU_WORK:-/tmp/slack-gpu-stages}
STAGES=${STAGES:-callsites compute}
BUDGET_S=${BUDGET_S:-570}
T0=$(date +%s)
rm -rf "$OUT"
mkdir -p "$OUT" "$FINAL_OUT"
exec > >(tee "$FINAL_OUT/gpu-summary.txt") 2>&1
pack() { tar -C "$OUT" -czf "$FINAL_OUT/gpu-all.tgz" . 2> /dev/null; }
trap pack EXIT
left() { echo $((BUDGET_S - ($(date +%s) - T0))); }
echo "== build ($(date -u))"
make -j"$(nproc)" all > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
set -- $STAGES
n=$#
for stage in "$@"; do
  share=$(($(left) / n))
  n=$((n - 1))
  want=$(printf '%s\n' ${STAGE_S:-} | sed -n "s/^$stage=//p") # STAGE_S="diagnosis=380": a fixed share
  [ -n "$want" ] && [ "$want" -lt "$(left)" ] && share=$want
  [ "$share" -lt 60 ] && { echo "== $stage: skipped, $share s left"; continue; }
  mkdir -p "$OUT/$stage"
  echo "== $stage ($share s)"
  # a stage script's own STAGES (gpu-callsites.sh, gpu-probe.sh) comes from NAME_STAGES
  # (CALLSITES_STAGES="sites cost"), never from this script's list of stages
  sub_var=$(echo "$stage" | tr '[:lower:]' '[:upper:]')_STAGES
  sub=${!sub_var:-}
  (
  unset STAGES
  [ -n "$sub" ] && export STAGES=$sub
  case $stage in
    diagnosis) OUT=$OUT/$stage BUDGET_S=$share bash scripts/gpu-diagnosis.sh ;;
    callsites) OUT=$OUT/$stage BUDGET_S=$share bash scripts/gpu-callsites.sh ;;
    compute) OUT=$OUT/$stage BUDGET_S=$share bash scripts/gpu-compute.sh ;;
    accuracy) OUT=$OUT/$stage BUDGET_S=$share bash scripts/accuracy.sh ;;
    nvtx) OUT=$OUT/$stage timeout "$share" bash scripts/gpu-nvtx.sh ;;
    probe) OUT=$OUT/$stage timeout "$share" bash scripts/gpu-probe.sh ;;
    bench) OUT=$OUT/$stage BENCH_T0=$(date +%s.%N) BENCH_BUDGET_S=$share bash scripts/bench/run.sh ;;
    basics) OUT=$OUT/$stage timeout "$share" bash scripts/gpu-run.sh ;;
    coexist) OUT=$OUT/$stage timeout "$share" bash scripts/gpu-coexist.sh ;;
    hostslow) OUT=$OUT/$stage BUDGET_S=$share timeout "$share" bash scripts/gpu-hostslow.sh ;;
    hostpace) OUT=$OUT/$stage BUDGET_S=$share timeout "$share" bash scripts/gpu-hostpace.sh ;;
    windows) OUT=$OUT/$stage timeout "$share" bash scripts/gpu-windows.sh ;;
    modes) OUT=$OUT/$stage BUDGET_S=$share timeout "$share" bash scripts/gpu-modes.sh ;;
    holdout) OUT=$OUT/$stage BUDGET_S=$share timeout "$share" bash scripts/gpu-holdout.sh ;;
    exitcheck) OUT=$OUT/$stage timeout "$share" bash scripts/gpu-exitcheck.sh ;;
    forkexit) OUT=$OUT/$stage timeout "$share" bash scripts/gpu-forkexit.sh ;;
    recordcost) OUT=$OUT/$stage BUDGET_S=$share timeout "$share" bash scripts/gpu-recordcost.sh ;;
    hostalloc) OUT=$OUT/$stage timeout "$share" bash scripts/gpu-hostalloc.sh ;;
    spikes) OUT=$OUT/$stage BUDGET_S=$share timeout "$share" bash scripts/gpu-spikes.sh ;;
    threads) OUT=$OUT/$stage BUDGET_S=$share timeout "$share" bash scripts/gpu-threads.sh ;;
    *) echo "unknown stage $stage" ;;
  esac
  ) > "$OUT/$stage/stage.log" 2>&1
  echo "   exit $?, $(ls "$OUT/$stage" | wc -l) files"
  pack # what a stage left comes back even if a later one runs past the call's limit
done
echo "================ summaries ================"
for stage in $STAGES; do
  for f in "$OUT/$stage"/*summary* "$OUT/$stage"/*table*; do
    [ -f "$f" ] && { echo "== $stage: $(basename "$f")"; head -40 "$f"; }
  done
done
echo "elapsed $(($(date +%s) - T0)) s"
