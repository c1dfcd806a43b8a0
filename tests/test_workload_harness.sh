#!/usr/bin/env bash
# The workloads' round harness (scripts/workloads/scenario_common.py `repeats`) on the CPU, with a
# stand-in for torch (no GPU, no torch here): a form that fails (a CUDA graph whose capture the
# device refuses) is said once and left out of the later rounds, and the other forms' rounds and
# medians go on; a form that fails after some rounds keeps the lines of those. Only the H200 runs
# the workloads for real: a form written without a GPU (holdout_nanogpt's graph forms) must not
# cost the others' data there.
set -u
cd "$(dirname "$0")/.." || exit 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
TEST_NAME=workload-harness
. tests/tools/harness.sh

mkdir -p "$work/torch"
cat > "$work/torch/__init__.py" << 'PY'
"""a stand-in for the few torch calls scenario_common makes outside a runner"""
class _Cuda:
    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def is_available():
        return True

cuda = _Cuda()

def manual_seed(_):
    pass
PY
cat > "$work/run.py" << 'PY'
import sys
sys.path.insert(0, "scripts/workloads")
import scenario_common as sc

class Run(sc.Runner):
    def __init__(self, form):
        if form == "graph":
            raise RuntimeError("CUDA error: operation not permitted when stream is capturing")
        self.form, self.n = form, 0

    def step(self):
        self.n += 1
        if self.form == "late" and self.n > 12:  # its second round (kept: 2 warm-up, 5 timed)
            raise RuntimeError("out of memory")

sc.repeats("harness", ["a", "graph", "late", "b"], Run, 3, 5, 2)
PY
out=$(PYTHONPATH="$work" SETTLE=0 BENCH_REUSE=1 python3 "$work/run.py" 2>&1)
rc=$?
[ $rc -eq 0 ] && ok || bad "exit $rc: $out"
n() { grep -cE -- "$1" <<< "$out"; }
[ "$(n '^RESULT scenario=harness form=a ')" = 3 ] && ok || bad "form a: not 3 rounds: $out"
[ "$(n '^RESULT scenario=harness form=b ')" = 3 ] && ok || bad "form b: not 3 rounds: $out"
[ "$(n '^RESULT scenario=harness form=graph ')" = 0 ] && ok || bad "form graph has rounds: $out"
[ "$(n '^WARNING scenario=harness form=graph failed in round 0 .*RuntimeError: CUDA error')" = 1 ] &&
  ok || bad "form graph: not said once: $out"
[ "$(n '^RESULT scenario=harness form=late ')" = 1 ] && ok || bad "form late: not its 1 round: $out"
[ "$(n '^WARNING scenario=harness form=late failed in round 1 ')" = 1 ] && ok ||
  bad "form late: not said once: $out"
[ "$(n '^MEDIAN scenario=harness form=(a|b|late) .* n=(3|3|1)$')" = 3 ] && ok ||
  bad "medians of a, b and late: $out"
[ "$(n '^MEDIAN scenario=harness form=graph ')" = 0 ] && ok || bad "a median of graph: $out"
# GC_LOG=1 (scripts/gpu-spikes.sh): the collections made during a round's timed steps on its line
# (generation:count:total ms:max ms), none before the round counted in it, nothing without it
cat > "$work/gc.py" << 'PY'
import gc, sys
sys.path.insert(0, "scripts/workloads")
import scenario_common as sc

class Run(sc.Runner):
    def __init__(self, form):
        self.form = form

    def step(self):
        gc.collect(2 if self.form == "full" else 0)

sc.gc_log()
gc.collect()  # before any round: not a round's
sc.repeats("gc", ["full", "young"], Run, 1, 3, 0)
PY
out=$(PYTHONPATH="$work" SETTLE=0 GC_LOG=1 python3 "$work/gc.py" 2>&1)
[ "$(n '^RESULT scenario=gc form=full .* gc_steps=2:3:[0-9.]+:[0-9.]+ ')" = 1 ] && ok ||
  bad "GC_LOG: the full collections of form full: $out"
[ "$(n '^RESULT scenario=gc form=young .* gc_steps=0:3:[0-9.]+:[0-9.]+ ')" = 1 ] && ok ||
  bad "GC_LOG: the young collections of form young: $out"
out=$(PYTHONPATH="$work" SETTLE=0 python3 "$work/gc.py" 2>&1)
[ "$(n 'gc_steps=')" = 0 ] && ok || bad "without GC_LOG: a gc field: $out"
finish
