#!/usr/bin/env bash
# slack under environments that change how CUDA and PyTorch run the program (session 50), one
# device call (docs/GPU-RUNS.md):
#   1. PyTorch's expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, which
#      PyTorch's out-of-memory message recommends): holdout_expand's `free` (empty_cache() each
#      step) and `fixed`, traced in a window with their truth from the same process's rounds, and
#      `free` recorded whole (scripts/gpu-holdout.sh, RECORD=cli)
#   2. CUDA_LAUNCH_BLOCKING=1 left set (a debugging switch: every launch waits for its kernel):
#      each LB workload's form traced with the variable set and without it, in turn: recorded
#      whole by `slack record` with its untraced rounds from a second process (LB_RECORD=cli), or
#      in a window with an untraced tail and the rounds in the same process (LB_RECORD=window):
#      the step the switch costs, and what slack says of the blocking trace
#   3. PyTorch's caching allocator turned off (PYTORCH_NO_CUDA_MEMORY_CACHING=1, a debugging
#      switch: every tensor's memory cudaMalloc'd and cudaFree'd): the NC workloads likewise
#   4. autograd's anomaly detection left on (DETECT_ANOMALY=1: scenario_common.py turns
#      torch.autograd.set_detect_anomaly(True) on for the process): the AD workloads likewise
#      (session 51)
# Logs and traces under $OUT; a short table last.
#
# Usage: OUT=DIR BUDGET_S=540 bash scripts/gpu-envcheck.sh
#   EXPAND=0 leaves part 1 out; LB="workload:form:traced_steps:round_steps ..." (default: a
#   GPU-bound ResNet-18 step and a launch-bound recurrent loop; "" leaves part 2 out); NC the
#   same for part 3 (default ""), AD for part 4 (default ""); LB_RECORD=cli|window (default cli),
#   LB_WINDOW_MS (12000)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-envcheck}
BUDGET_S=${BUDGET_S:-540}
EXPAND=${EXPAND:-1}
LB=${LB-holdout_libread:fixed:40:30 holdout_rnn:eager:60:40}
NC=${NC-}
AD=${AD-}
LB_RECORD=${LB_RECORD:-cli}
LB_WINDOW_MS=${LB_WINDOW_MS:-12000}
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
# one form traced with VAR=VALUE set (mode "with") and without VAR, in turn: $1 VAR=VALUE, $2 the
# directories' prefix, $3 the two modes' names, then the specs
with_without() {
  local assign=$1 prefix=$2 names=$3 spec w f steps rsteps mode d
  shift 3
  for spec in "$@"; do
    IFS=: read -r w f steps rsteps <<< "$spec"
    for mode in $names; do
      [ "$(left)" -lt 60 ] && { echo "skip $w $f $mode: budget ($(left) s left)"; continue; }
      d=$OUT/$prefix-$w-$f-$mode
      if [ "$mode" = "${names%% *}" ]; then set -- env "$assign"; else set -- env -u "${assign%%=*}"; fi
      if [ "$LB_RECORD" = window ]; then
        "$@" OUT="$d" BUDGET_S=$(($(left) - 10)) REPEATS=3 BENCH_REUSE=1 \
          HOLDOUT="$w:$f:$steps:$LB_WINDOW_MS:$f:$rsteps:3" bash scripts/gpu-holdout.sh > "$d.log" 2>&1
      else
        "$@" OUT="$d" BUDGET_S=$(($(left) - 10)) REPEATS=3 BENCH_REUSE=1 RECORD=cli REC_S=90 \
          HOLDOUT="$w:$f:$steps:0:$f:$rsteps:3" bash scripts/gpu-holdout.sh > "$d.log" 2>&1
      fi
      echo "$w-$f $mode: $(grep -c . "$d.log") log lines ($(($(date +%s) - T0)) s)"
    done
  done
}
# shellcheck disable=SC2086
with_without CUDA_LAUNCH_BLOCKING=1 lb "blocking async" $LB
# shellcheck disable=SC2086
with_without PYTORCH_NO_CUDA_MEMORY_CACHING=1 nc "nocache cache" $NC
# shellcheck disable=SC2086
with_without DETECT_ANOMALY=1 ad "anomaly plain" $AD
python3 - "$OUT" "$LB" "$NC" "$AD" <<'PY'
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
print("\n| workload-form | variable | untraced step ms | traced step ms | verdict | step if fixed ms | with every stall fixed ms |")
print("|---|---|---|---|---|---|---|")
for prefix, specs, modes in (("lb", sys.argv[2], ("blocking", "async")),
                             ("nc", sys.argv[3], ("nocache", "cache")),
                             ("ad", sys.argv[4], ("anomaly", "plain"))):
    for spec in specs.split():
        w, f = spec.split(":")[:2]
        for mode in modes:
            d = f"{out}/{prefix}-{w}-{f}-{mode}"
            tag = f"{w}-{f}"
            u = untraced(f"{d}/{tag}.out")
            try:
                j = json.load(open(f"{d}/{tag}.json"))
                g = j["gpus"][0]
                v = g.get("verdict", {})
                st = g["steps"]["step_ns"] / 1e6
                allf = g["whatif"]["all_stalls"]["step_ns_if_fixed"] / 1e6
                fixed = v.get("step_ns_if_fixed", 0) / 1e6 or None
                verdict = f"{v.get('class', '?')} {v.get('share', 0) * 100:.0f}%"
            except (OSError, KeyError, ValueError, IndexError):
                st = allf = fixed = None
                verdict = "no report"
            fmt = lambda x: f"{x:.2f}" if x is not None else "-"
            var = "set" if mode == modes[0] else "unset"
            print(f"| {tag} | {prefix} {var} | {fmt(u)} | {fmt(st)} | {verdict} | {fmt(fixed)} | {fmt(allf)} |")
for sub in ("expand", "expandr"):
    p = f"{out}/{sub}/holdout-table.md"
    if os.path.exists(p):
        print(f"\n{sub}:")
        print(open(p).read().strip()[-3000:])
PY
echo "elapsed $(($(date +%s) - T0)) s"
