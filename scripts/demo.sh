#!/usr/bin/env bash
# `make demo`: on any machine, `slack info` + `slack report` on the real H200 trace shipped in
# tests/data. On a machine with a GPU and PyTorch, also records the probe workload itself first.
set -euo pipefail
cd "$(dirname "$0")/.."
TRACE=tests/data/probe-stacks-h200.slk # GPU run 16: call-site stacks and the exit probe
if nvidia-smi -L > /dev/null 2>&1 && python3 -c 'import torch; assert torch.cuda.is_available()' 2> /dev/null; then
  out=$(mktemp -d)
  echo "demo: GPU found: recording scripts/workloads/probe_train.py (STEPS=20) into $out"
  STEPS=20 build/slack record -o "$out" -- python3 scripts/workloads/probe_train.py
  TRACE=$(ls -1 "$out"/*.slk | head -1)
else
  echo "demo: no GPU here: reading the H200 trace shipped in $TRACE"
fi
build/slack info "$TRACE"
echo
build/slack report "$TRACE"
