#!/usr/bin/env bash
# slack beside another CUPTI client (issue 13): scripts/workloads/coexist.py (deterministic
# losses on stdout) untraced, under libslack, under nsys with libslack preloaded, and inside
# torch.profiler with libslack preloaded, the profiler started after the model is on the GPU and
# (--kineto-first) before the program's first CUDA call. Each row: stdout identical to the untraced run, the
# lines slack wrote on stderr, and what the slack trace holds (`slack info`: host calls, GPU
# records); for torch.profiler also the CUDA events it recorded itself, with and without slack.
# $OUT gets coexist-summary.txt and coexist-logs.tgz.
# Usage: bash scripts/gpu-coexist.sh   (after `make all`)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-coexist}
W=/tmp/slack-coexist-work
rm -rf "$W"
mkdir -p "$W" "$OUT"
LIB=$ROOT/build/libslack.so
PY="python3 $ROOT/scripts/workloads/coexist.py"
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
export PYTHONUNBUFFERED=1
S=$OUT/coexist-summary.txt
: > "$S"
row() { printf '%-34s %s\n' "$1" "$2" | tee -a "$S"; }
run() { # tag, then the command (env assignments allowed through env)
  local tag=$1
  shift
  mkdir -p "$W/$tag"
  (cd "$W/$tag" && timeout 180 env "$@" > out.txt 2> err.txt)
  echo $? > "$W/$tag/rc"
}
info() { # tag: what slack's trace in that folder holds
  local t
  t=$(ls -1 "$W/$1"/*.slk 2>/dev/null | head -1)
  [ -z "$t" ] && { echo "no slack trace"; return; }
  "$ROOT/build/slack" info --json "$t" > "$W/$1/info.json" 2> "$W/$1/info.err"
  python3 - "$W/$1/info.json" << 'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print("slack info failed:", e); sys.exit()
got = {k: j.get(k) for k in ("api_calls", "kernels", "memcpys", "syncs", "dropped")}
got["gpu_records"] = j.get("header", {}).get("gpu_records")
print(" ".join(f"{k}={v}" for k, v in got.items()))
PY
}
same() { cmp -s "$W/bare/out.txt" "$W/$1/out.txt" && echo "stdout same" || echo "STDOUT DIFFERS"; }
slackerr() { local n; n=$(grep -c 'slack' "$W/$1/err.txt"); echo "$n slack line(s) on stderr: $(grep 'slack' "$W/$1/err.txt" | head -3 | tr '\n' '|')"; }

run bare $PY
row "untraced" "exit $(cat $W/bare/rc); $(wc -l < $W/bare/out.txt) lines"
run slack SLACK_OUTPUT=. LD_PRELOAD=$LIB $PY
row "libslack" "exit $(cat $W/slack/rc); $(same slack); $(slackerr slack); $(info slack)"
if [ -x "$NSYS" ]; then
  run nsys SLACK_OUTPUT=. LD_PRELOAD=$LIB "$NSYS" profile --trace=cuda,nvtx --sample=none \
    --cpuctxsw=none -o r $PY
  row "nsys + libslack" "exit $(cat $W/nsys/rc); $(same nsys); $(slackerr nsys); $(info nsys); nsys output $(ls $W/nsys | grep -c '^r\.') file(s)"
else
  row "nsys + libslack" "skipped: nsys not found"
fi
run kineto $PY --kineto
row "torch.profiler" "exit $(cat $W/kineto/rc); $(same kineto); $(grep KINETO $W/kineto/err.txt)"
run kineto-slack SLACK_OUTPUT=. LD_PRELOAD=$LIB $PY --kineto
row "torch.profiler + libslack" "exit $(cat $W/kineto-slack/rc); $(same kineto-slack); $(slackerr kineto-slack); $(info kineto-slack); $(grep KINETO $W/kineto-slack/err.txt)"
run kfirst $PY --kineto-first
row "torch.profiler first" "exit $(cat $W/kfirst/rc); $(same kfirst); $(grep KINETO $W/kfirst/err.txt)"
run kfirst-slack SLACK_OUTPUT=. LD_PRELOAD=$LIB $PY --kineto-first
row "torch.profiler first + libslack" "exit $(cat $W/kfirst-slack/rc); $(same kfirst-slack); $(slackerr kfirst-slack); $(info kfirst-slack); $(grep KINETO $W/kfirst-slack/err.txt)"
tar -C "$W" --exclude='*.qdstrm' --exclude='*.nsys-rep' -czf "$OUT/coexist-logs.tgz" . 2>/dev/null
