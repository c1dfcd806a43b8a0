#!/usr/bin/env bash
# The diagnosis suite (docs/ACCURACY.md, "The seed's case"), in one call on the H200:
#   1. build;
#   2. resnet_seed (scripts/workloads/resnet_seed.py: ResNet-50, real CPU transforms, three
#      causes switched alone and together): one process per form, each under libslack with
#      SLACK_DURATION_MS=WINDOW_MS: TRACED_STEPS steps of the form traced inside the window, then,
#      CUPTI detached, REPEATS interleaved untraced repeats of the form, of the form with each of
#      its causes removed, and of the fixed form (scenario_common.py --inproc): the trace and the
#      truth it is judged by come from one process;
#   3. steps_probe (scripts/workloads/steps_probe.py): loops whose steps are hard to find,
#      traced, with their iteration counts.
# $OUT gets diagnosis-traces.tgz (NAME.slk: resnet_seed-FORM.slk, steps_probe-FORM.slk),
# diagnosis-logs.tgz, diagnosis-truth.txt (every RESULT/INPROC_MEDIAN line) and prints a table.
# Usage: bash scripts/gpu-diagnosis.sh   (FORMS="lcs l ..." REPEATS=5 WINDOW_MS=9000 TAIL_MS=3000
#        NEIGHBOURS="lcs lc fixed": the untraced forms instead of the form's neighbours
#        STEP_FORMS="tiny matmul4 ops1200"; BUDGET_S=560 skips what no longer fits)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-diagnosis}
FORMS=${FORMS:-lcs lc ls cs l c s fixed}
STEP_FORMS=${STEP_FORMS-tiny matmul4 ops1200}
REPEATS=${REPEATS:-5}
WINDOW_MS=${WINDOW_MS:-9000}
TAIL_MS=${TAIL_MS:-3000} # SLACK_TAIL_MS: the host's calls timed untraced after the window
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
  grep -h -E '^(RESULT|INPROC_MEDIAN)' "$W"/*.out > "$OUT/diagnosis-truth.txt" 2>/dev/null
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
  case $f in *l*) steps=14 ;; *) steps=40 ;; esac
  if [ "$(left)" -lt 100 ]; then echo "skip resnet_seed $f: budget"; continue; fi
  tag=resnet_seed-$f
  mkdir -p "$W/tr/$tag"
  t=$(date +%s)
  SLACK_DURATION_MS=$WINDOW_MS SLACK_TAIL_MS=$TAIL_MS SLACK_OUTPUT=$W/tr/$tag LD_PRELOAD=$LIB \
    TRACED_STEPS=$steps INPROC_FORMS="${NEIGHBOURS:-$(neighbours "$f")}" timeout 240 \
    python3 "$WL/resnet_seed.py" --inproc "$REPEATS" --form "$f" > "$W/$tag.out" 2> "$W/$tag.err"
  rc=$?
  echo "$tag: exit $rc, $(($(date +%s) - t)) s; $(grep -E 'INPROC_MEDIAN|phase=traced' "$W/$tag.out" | sed 's/scenario=resnet_seed //' | tr '\n' ';')"
  [ $rc -ne 0 ] && tail -5 "$W/$tag.err"
  tr=$(ls -1 "$W/tr/$tag"/*.slk 2>/dev/null | head -1)
  [ -n "$tr" ] && cp "$tr" "$W/flat/$tag.slk"
  save
done

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

echo "== table (untraced medians, ms per step; the trace's own step count from slack report)"
for t in "$W"/flat/*.slk; do
  n=$(basename "$t" .slk)
  build/slack report --json "$t" > "$W/$n.report.json" 2> "$W/$n.report.err"
done
save
python3 - "$W" <<'PY'
import json, os, re, sys
w = sys.argv[1]
for f in sorted(os.listdir(w)):
    if not f.endswith(".out"):
        continue
    text = open(os.path.join(w, f)).read()
    med = dict(re.findall(r"INPROC_MEDIAN scenario=\S+ form=(\S+) step_ms=([0-9.]+)", text))
    tr = re.search(r"phase=traced", text)
    it = re.search(r"iterations=(\d+) step_ms=([0-9.]+)", text)
    name = f[:-4]
    steps = "?"
    try:
        g = json.load(open(os.path.join(w, name + ".report.json")))["gpus"][0]["steps"]
        steps = f"{g.get('count')}+{g.get('warmup', 0)}"
    except Exception:
        pass
    print(f"{name:24s} slack steps {steps:8s} " +
          (" ".join(f"{k}={v}" for k, v in med.items()) if med else (it.group(0) if it else "")))
PY
echo "== done in $(($(date +%s) - T0)) s"
