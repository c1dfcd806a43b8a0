#!/usr/bin/env bash
# slack under environments that change how CUDA and PyTorch run the program (session 50), one
# device call (docs/GPU-RUNS.md):
#   1. PyTorch's expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, which
#      PyTorch's out-of-memory message recommends): holdout_expand's `free` (empty_cache() each
#      step) and `fixed`, traced in a window with their truth from the same process's rounds, and
#      `free` recorded whole (scripts/gpu-holdout.sh, RECORD=cli)
#   2. CUDA_LAUNCH_BLOCKING=1 left set (a debugging switch: every launch waits for its kernel):
#      each LB workload's form recorded whole by `slack record` with the variable set and without
#      it, in turn, each with its untraced rounds from a second process (RECORD=cli): the step
#      the switch costs, and what slack says of the blocking trace
# Logs and traces under $OUT; a short table last.
#
# Usage: OUT=DIR BUDGET_S=540 bash scripts/gpu-envcheck.sh
#   EXPAND=0 leaves part 1 out; LB="workload:form:traced_steps:round_steps ..." (default: a
#   GPU-bound ResNet-18 step and a launch-bound recurrent loop); LB="" leaves part 2 out
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-envcheck}
BUDGET_S=${BUDGET_S:-540}
EXPAND=${EXPAND:-1}
LB=${LB-holdout_libread:fixed:40:30 holdout_rnn:eager:60:40}
T0=$(date +%s)
left() { echo $((BUDGET_S - ($(date +%s) - T0))); }
mkdir -p "$OUT"
make -j"$(nproc)" all > "$OUT/build.log" 2>&1 || {
  tail -20 "$OUT/build.log"
  exit 1
}
if [ "$EXPAND" = 1 ]; then
  OUT=$OUT/expand BUDGET_S=$(($(left) > 200 ? 130 : $(left) / 2)) REPEATS=5 BENCH_REUSE=1 \
    HOLDOUT="holdout_expand:free,fixed:150:16000:free+fixed:30:5" \
    bash scripts/gpu-holdout.sh > "$OUT/expand.log" 2>&1
  echo "expand windowed: $(tail -1 "$OUT/expand.log")"
  OUT=$OUT/expandr BUDGET_S=$(($(left) > 200 ? 100 : $(left) / 2)) REPEATS=5 BENCH_REUSE=1 \
    RECORD=cli REC_S=70 HOLDOUT="holdout_expand:free:150:0:free+fixed:30:5" \
    bash scripts/gpu-holdout.sh > "$OUT/expandr.log" 2>&1
  echo "expand recorded: $(tail -1 "$OUT/expandr.log")"
fi
for spec in $LB; do
  IFS=: read -r w f steps rsteps <<< "$spec"
  for mode in blocking async; do
    [ "$(left)" -lt 60 ] && { echo "skip $w $f $mode: budget ($(left) s left)"; continue; }
    d=$OUT/lb-$w-$f-$mode
    if [ $mode = blocking ]; then set -- env CUDA_LAUNCH_BLOCKING=1; else set -- env -u CUDA_LAUNCH_BLOCKING; fi
    "$@" OUT="$d" BUDGET_S=$(($(left) - 10)) REPEATS=3 BENCH_REUSE=1 RECORD=cli REC_S=90 \
      HOLDOUT="$w:$f:$steps:0:$f:$rsteps:3" bash scripts/gpu-holdout.sh > "$d.log" 2>&1
    echo "$w-$f $mode: $(grep -c . "$d.log") log lines ($(($(date +%s) - T0)) s)"
  done
done
python3 - "$OUT" $LB <<'PY'
import glob, json, os, re, statistics, sys
out = sys.argv[1]
def untraced(path):
    """the untraced rounds' median step (ms) of the truth process's .out"""
    try:
        txt = open(path).read()
    except OSError:
        return None
    m = re.findall(r"INPROC_MEDIAN\S* .*?step_ms=([0-9.]+)", txt)
    return float(m[-1]) if m else None
print("\n| workload-form | CUDA_LAUNCH_BLOCKING | untraced step ms | traced step ms | verdict | step if fixed ms (all stalls) |")
print("|---|---|---|---|---|---|")
for spec in sys.argv[2:]:
    w, f = spec.split(":")[:2]
    for mode in ("blocking", "async"):
        d = f"{out}/lb-{w}-{f}-{mode}"
        tag = f"{w}-{f}"
        u = untraced(f"{d}/{tag}.out")
        try:
            j = json.load(open(f"{d}/{tag}.json"))
            g = j["gpus"][0]
            v = g.get("verdict", {})
            st = g["steps"]["step_ns"] / 1e6
            allf = g["whatif"]["all_stalls"]["step_ns_if_fixed"] / 1e6
            verdict = f"{v.get('class', '?')} {v.get('share', 0) * 100:.0f}%"
        except (OSError, KeyError, ValueError, IndexError):
            st = allf = None
            verdict = "no report"
        fmt = lambda x: f"{x:.2f}" if x is not None else "-"
        print(f"| {tag} | {'1' if mode == 'blocking' else 'unset'} | {fmt(u)} | {fmt(st)} | {verdict} | {fmt(allf)} |")
for sub in ("expand", "expandr"):
    p = f"{out}/{sub}/holdout-table.md"
    if os.path.exists(p):
        print(f"\n{sub}:")
        print(open(p).read().strip()[-3000:])
PY
echo "elapsed $(($(date +%s) - T0)) s"
