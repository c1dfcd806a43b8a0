#!/usr/bin/env python3
"""The loader's time inside against outside slack's windows, one process (scripts/gpu-hostpace.sh):
STEP lines of scripts/workloads/window_pace.py and the WINDOW records of its trace (`slack dump`).
A step is inside when its load [t0, t_loaded] lies in a window, outside when it meets none
(steps before the first window or across an edge are left out). Prints one line:

  inside N median MS mean MS | outside N median MS mean MS | ratio of medians R (mean ratio R')

Usage: python3 scripts/hostpace.py SLACK OUTFILE TRACE"""
import random
import re
import statistics
import subprocess
import sys

slack, out, trace = sys.argv[1:4]
steps = [tuple(int(x) for x in l.split()[2:5]) for l in open(out) if l.startswith("STEP ")]
wins = []
dump = subprocess.run([slack, "dump", trace], capture_output=True, text=True).stdout
for line in dump.splitlines():
    m = re.match(r"window start=(\d+) end=(\d+)(.*)", line)
    if m and "flags=0x1" not in m.group(3):
        wins.append((int(m.group(1)), int(m.group(2))))
ins, outs = [], []
first = min((a for a, _ in wins), default=None)
for t0, tl, _ in steps:
    if first is None or t0 < first:
        continue
    if any(a <= t0 and tl <= b for a, b in wins):
        ins.append((tl - t0) / 1e6)
    elif not any(t0 < b and a < tl for a, b in wins):
        outs.append((tl - t0) / 1e6)


def stat(v):
    return (f"{len(v)} median {statistics.median(v):.1f} mean {statistics.mean(v):.1f}"
            if v else "0")


r = statistics.median(ins) / statistics.median(outs) if ins and outs else float("nan")
rm = statistics.mean(ins) / statistics.mean(outs) if ins and outs else float("nan")
ci = ""
if len(ins) >= 5 and len(outs) >= 5:
    # the ratio's 90% interval: both sides' steps resampled (2,000 draws, a fixed seed)
    rng = random.Random(7)
    rs = sorted(statistics.median(rng.choice(ins) for _ in ins) /
                statistics.median(rng.choice(outs) for _ in outs) for _ in range(2000))
    ci = f" [90%: {rs[100]:.3f}..{rs[1899]:.3f}]"
print(f"inside {stat(ins)} | outside {stat(outs)} | ratio of medians {r:.3f}{ci} "
      f"(means {rm:.3f}), {len(wins)} windows")
