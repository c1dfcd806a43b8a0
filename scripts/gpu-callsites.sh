#!/usr/bin/env bash
# Call sites and their cost on the H200, in one call (issue: call sites a PyTorch user can act on):
#   1. build; the Python version;
#   2. sites: each cause's form traced (resnet_seed s, c, l; the serialization, copy_stall and
#      launch_storm scenarios' broken forms): their top site per class must name the workload's
#      own line (scripts/callsites_check.py);
#   3. cost: the tiny-op loop (scripts/bench/tiny_ops.py, one launch per op) with no preload and
#      under libslack with SLACK_STACKS=off, sync and all, ROUNDS interleaved rounds (A B C D A B
#      ...): per config the median us per op; all - off is the Python walk's cost per call;
#   4. the seed's form lcs again through scripts/gpu-diagnosis.sh (REPEATS untraced repeats), with
#      frames and samples in its trace;
#   5. pycost: a measuring build (-DSLACK_PY_COST) times each Python walk in the hooks: the
#      tiny-op loop (shallow stack) and resnet_seed s (nn.Module stacks), per policy;
#   6. hostbound: where slack slows host work that makes no CUDA call: resnet_seed form l (the
#      DataLoader in the main thread) bare and under libslack with one part turned off at a time,
#      HB_ROUNDS interleaved rounds; step ms per config.
# $OUT gets callsites-traces.tgz, callsites-logs.tgz, callsites-cost.tsv, callsites-pycost.txt,
# callsites-hostbound.tsv, callsites-summary.txt
# and the diagnosis stage's files. Usage: bash scripts/gpu-callsites.sh  (ROUNDS=5 REPEATS=7
# STAGES="sites cost diag" BUDGET_S=570)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-callsites}
ROUNDS=${ROUNDS:-5}
REPEATS=${REPEATS:-7}
STAGES=${STAGES:-sites cost diag}
SITES=${SITES:-resnet_seed:s resnet_seed:c resnet_seed:l resnet_seed:lcs serialization:broken copy_stall:broken launch_storm:broken}
HB_ROUNDS=${HB_ROUNDS:-3}
BUDGET_S=${BUDGET_S:-570}
T0=$(date +%s)
W=/tmp/slack-callsites-work
rm -rf "$W" && mkdir -p "$W/tr" "$W/flat" "$OUT"
exec > >(tee -a "$W/callsites.log") 2>&1
export PYTHONUNBUFFERED=1
LIB=$ROOT/build/libslack.so
WL=$ROOT/scripts/workloads
S=$OUT/callsites-summary.txt
left() { echo $((BUDGET_S - ($(date +%s) - T0))); }
save() {
  tar -C "$W" --exclude=tr --exclude=flat -czf "$OUT/callsites-logs.tgz" . 2> /dev/null
  tar -C "$W/flat" -czf "$OUT/callsites-traces.tgz" . 2> /dev/null
}
echo "== machine ($(date -u))"
nvidia-smi -L 2>&1 | head -1
python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__)'
echo "== build"
make -j"$(nproc)" all > "$W/build.log" 2>&1 || { tail -30 "$W/build.log"; echo BUILD FAILED; save; exit 1; }

if [[ " $STAGES " == *" sites "* ]]; then
  echo "== sites"
  for spec in $SITES; do
    wl=${spec%%:*} f=${spec#*:} tag=${spec/:/-}
    [ "$(left)" -lt 60 ] && { echo "skip $tag: budget"; continue; }
    mkdir -p "$W/tr/$tag"
    t=$(date +%s)
    SLACK_OUTPUT=$W/tr/$tag LD_PRELOAD=$LIB STEPS=8 WARMUP=2 timeout 120 \
      python3 "$WL/$wl.py" --form "$f" > "$W/$tag.out" 2> "$W/$tag.err"
    echo "$tag: exit $?, $(($(date +%s) - t)) s; $(grep RESULT "$W/$tag.out"); $(grep -c . "$W/$tag.err") stderr lines: $(head -c 300 "$W/$tag.err" | tr '\n' '|')"
    tr=$(ls -1 "$W/tr/$tag"/*.slk 2> /dev/null | head -1)
    [ -n "$tr" ] && cp "$tr" "$W/flat/$tag.slk"
    mkdir -p "$W/flat/src" && cp "$WL/$wl.py" "$W/flat/src/"
  done
  save
fi

if [[ " $STAGES " == *" cost "* ]]; then
  echo "== cost (tiny ops, us per op; $ROUNDS interleaved rounds)"
  printf 'round\tconfig\tus_per_op\n' > "$OUT/callsites-cost.tsv"
  for r in $(seq 1 "$ROUNDS"); do
    [ "$(left)" -lt 150 ] && { echo "cost: stop after round $((r - 1)): budget"; break; }
    for cfg in bare off sync all; do
      if [ $cfg = bare ]; then
        o=$(taskset -c 2-5 timeout 60 python3 scripts/bench/tiny_ops.py 2>> "$W/cost.err")
      else
        mkdir -p "$W/cost-tr"
        o=$(SLACK_STACKS=$cfg SLACK_OUTPUT=$W/cost-tr SLACK_QUIET=1 LD_PRELOAD=$LIB taskset -c 2-5 \
          timeout 60 python3 scripts/bench/tiny_ops.py 2>> "$W/cost.err")
        rm -f "$W/cost-tr"/*.slk
      fi
      us=$(sed -n 's/.*us_per_op=\([0-9.]*\).*/\1/p' <<< "$o")
      printf '%s\t%s\t%s\n' "$r" "$cfg" "${us:-nan}" | tee -a "$OUT/callsites-cost.tsv"
    done
  done
  save
fi

if [[ " $STAGES " == *" diag "* ]] && [ "$(left)" -gt 150 ]; then
  echo "== diagnosis: lcs"
  OUT=$OUT FORMS=lcs STEP_FORMS="" REPEATS=$REPEATS BUDGET_S=$(($(left) - 20)) \
    bash scripts/gpu-diagnosis.sh > "$W/diag.log" 2>&1
  tail -25 "$W/diag.log"
  tar -xzf "$OUT/diagnosis-traces.tgz" -C "$W/flat" ./resnet_seed-lcs.slk 2> /dev/null
  save
fi

if [[ " $STAGES " == *" pycost "* ]]; then
  echo "== pycost: the Python walk's own time per hooked call (measuring build)"
  make -j"$(nproc)" BUILD=build-pycost OPT="-O2 -g -DSLACK_PY_COST" build-pycost/libslack.so \
    > "$W/pycost-build.log" 2>&1 || tail -5 "$W/pycost-build.log"
  : > "$OUT/callsites-pycost.txt"
  for spec in "tiny_ops all" "tiny_ops sync" "resnet_seed all" "resnet_seed sync"; do
    set -- $spec
    mkdir -p "$W/pc-tr"
    if [ "$1" = tiny_ops ]; then
      SLACK_STACKS=$2 SLACK_OUTPUT=$W/pc-tr SLACK_QUIET=1 LD_PRELOAD=$ROOT/build-pycost/libslack.so \
        timeout 90 python3 scripts/bench/tiny_ops.py > /dev/null 2> "$W/pc.err"
    else
      SLACK_STACKS=$2 SLACK_OUTPUT=$W/pc-tr SLACK_QUIET=1 LD_PRELOAD=$ROOT/build-pycost/libslack.so \
        STEPS=8 WARMUP=2 timeout 90 python3 "$WL/resnet_seed.py" --form s > /dev/null 2> "$W/pc.err"
    fi
    echo "$1 SLACK_STACKS=$2: $(grep 'slack pycost' "$W/pc.err")" | tee -a "$OUT/callsites-pycost.txt"
    rm -f "$W/pc-tr"/*.slk
  done
  save
fi

if [[ " $STAGES " == *" hostbound "* ]]; then
  echo "== hostbound: resnet_seed l, step ms ($HB_ROUNDS interleaved rounds)"
  printf 'round\tconfig\tstep_ms\n' > "$OUT/callsites-hostbound.tsv"
  HB_CONFIGS=${HB_CONFIGS:-bare slack nocupti noapi nostacks lowzstd}
  for r in $(seq 1 "$HB_ROUNDS"); do
    [ "$(left)" -lt 120 ] && { echo "hostbound: stop after round $((r - 1)): budget"; break; }
    for cfg in $HB_CONFIGS; do
      case $cfg in
        bare) env=() ;;
        slack) env=(LD_PRELOAD=$LIB) ;;
        nocupti) env=(LD_PRELOAD=$LIB SLACK_CUPTI=0) ;;
        noapi) env=(LD_PRELOAD=$LIB SLACK_API_RECORDS=0) ;;
        nostacks) env=(LD_PRELOAD=$LIB SLACK_STACKS=off) ;;
        lowzstd) env=(LD_PRELOAD=$LIB SLACK_ZSTD_LEVEL=1 SLACK_POLL_MS=100) ;;
      esac
      mkdir -p "$W/hb-tr"
      o=$(env "${env[@]}" SLACK_OUTPUT=$W/hb-tr SLACK_QUIET=1 STEPS=10 WARMUP=3 timeout 90 \
        python3 "$WL/resnet_seed.py" --form l 2>> "$W/hostbound.err")
      rm -f "$W/hb-tr"/*.slk
      ms=$(sed -n 's/.*step_ms=\([0-9.]*\).*/\1/p' <<< "$o")
      printf '%s\t%s\t%s\n' "$r" "$cfg" "${ms:-nan}" | tee -a "$OUT/callsites-hostbound.tsv"
    done
  done
  save
fi

{
  echo "== call sites (top site per class names the workload's line)"
  python3 scripts/callsites_check.py build/slack "$W/flat"
  echo "== cost per hooked call (tiny-op loop, median us per op over rounds)"
  python3 - "$OUT/callsites-cost.tsv" << 'PY'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n")[1:] if l]
by = {}
for r, c, us in rows:
    if us != "nan":
        by.setdefault(c, []).append(float(us))
med = {c: statistics.median(v) for c, v in by.items()}
for c in ("bare", "off", "sync", "all"):
    if c in by:
        print(f"{c:5s} median {med[c]:.3f} us/op  min {min(by[c]):.3f} max {max(by[c]):.3f}  n={len(by[c])}")
if "off" in med and "all" in med:
    print(f"all - off = {1000 * (med['all'] - med['off']):.0f} ns per hooked call (Python frames)")
if "off" in med and "sync" in med:
    print(f"sync - off = {1000 * (med['sync'] - med['off']):.0f} ns per launch (no frames on launches)")
PY
  [ -s "$OUT/callsites-pycost.txt" ] && { echo "== Python walk per hooked call"; cat "$OUT/callsites-pycost.txt"; }
  if [ -s "$OUT/callsites-hostbound.tsv" ]; then
    echo "== host-bound step (resnet_seed l), ms: median (min-max) per config"
    python3 - "$OUT/callsites-hostbound.tsv" << 'PY'
import statistics, sys
by = {}
for l in open(sys.argv[1]).read().split("\n")[1:]:
    if l and not l.endswith("nan"):
        r, c, v = l.split("\t")
        by.setdefault(c, []).append(float(v))
b = statistics.median(by.get("bare", [0])) or None
for c, v in by.items():
    m = statistics.median(v)
    rel = f"{100 * (m / b - 1):+.1f}%" if b else ""
    print(f"{c:9s} {m:8.1f} ({min(v):.1f}-{max(v):.1f}) n={len(v)} {rel}")
PY
  fi
} | tee "$S"
echo "elapsed $(($(date +%s) - T0)) s"
