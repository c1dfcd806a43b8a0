"""Compute hints against the measured fixes (docs/ACCURACY.md, "Compute hints").

  python3 scripts/compute_table.py [SLACK [DIR]]     (defaults: build/slack tests/data/compute)

DIR holds compute_pairs-{fp32,amp,eager,compiled}.slk and truth.txt (scripts/gpu-compute.sh).
For each slow form, slack's hint on its trace (the estimated saving per step) against the step
the fix it names measured untraced: the speedup slack predicts (the step without the tracer over
the hint's step_ns_if_taken) and the speedup measured (untraced medians, before over after); and
each fixed form's trace must not get the hint again. A kernel-storm hint that names a CUDA graph
(the launches are the cost) is set against the `graphed` form where the truth has it; the runs
25-26 truth measured torch.compile only: n/a there (GPU run 61 measured the graph in one
process: tests/data/holdout/run61, tests/test_h200_holdout.sh).
"""
import json
import os
import re
import subprocess
import sys

SLACK = sys.argv[1] if len(sys.argv) > 1 else "build/slack"
D = sys.argv[2] if len(sys.argv) > 2 else "tests/data/compute"
PAIRS = [("fp32", "amp", "fp32_math"), ("eager", "compiled", "kernel_storm")]

truth = {}
for line in open(os.path.join(D, "truth.txt")):
    m = re.match(r"MEDIAN scenario=\S+ form=(\S+) step_ms=([\d.]+)", line)
    if m:
        truth[m.group(1)] = float(m.group(2))


def gpu(form):
    out = subprocess.run([SLACK, "report", "--json", os.path.join(D, f"compute_pairs-{form}.slk")],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["gpus"][0]


bad = 0
print("| form | hint | slack: step, saving per step (ms) | predicted speedup | fix | measured "
      "untraced (ms) | measured speedup | error | fixed form's trace |")
print("|---|---|---|---|---|---|---|---|---|")
for slow, fast, kind in PAIRS:
    g = gpu(slow)
    step = g["steps"]["step_ns"] / 1e6
    h = [x for x in g.get("compute_hints", []) if x["kind"] == kind]
    again = [x["kind"] for x in gpu(fast).get("compute_hints", []) if x["kind"] == kind]
    if not h:
        print(f"| {slow} | (no {kind} hint) | {step:.2f} | – | {fast} | – | – | – | – |")
        bad += 1
        continue
    gain = h[0]["gain_ns"] / 1e6
    if h[0]["fix"].startswith("capture the step as a CUDA graph"):
        fast = "graphed"
        if fast not in truth:
            print(f"| {slow} | {kind} | {step:.2f}, {gain:.2f} | – | a CUDA graph (not measured "
                  f"here) | – | – | n/a | – |")
            continue
    taken = h[0].get("step_ns_if_taken", 0) / 1e6
    pred = (taken + gain) / taken if taken else 0
    meas = truth[slow] / truth[fast]
    err = pred / meas - 1
    bad += abs(err) > 0.25 or bool(again)
    print(f"| {slow} | {kind} | {step:.2f}, {gain:.2f} | {pred:.2f}x | {fast} | "
          f"{truth[slow]:.2f} -> {truth[fast]:.2f} | {meas:.2f}x | {100 * err:+.1f}% | "
          f"{'hint again: ' + ','.join(again) if again else 'no ' + kind + ' hint'} |")
sys.exit(1 if bad else 0)
