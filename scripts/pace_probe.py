#!/usr/bin/env python3
"""Whether the exit probe tells a process's host pace (docs/ACCURACY.md, "The assumed pace's
range", session 31).

For every trace under DIR (default tests/data) with an untraced tail and an exit probe, reads
`slack report --json`: the host's time between calls traced and untraced (the tail's), and the
probe's CUPTI cost per launch (its launch call with CUPTI on less detached). Prints their
correlations and the median and 90th-percentile error of predicting the untraced interval by: the
assumed ratio (1.45), the traced interval less k times the probe's cost (k the median ratio), the
traced interval less the median difference, and a least-squares fit on both.

Usage: python3 scripts/pace_probe.py [SLACK [DIR]]   (needs python3-numpy)
"""
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SLACK = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "slack")
D = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "tests", "data")
MIN_INTERVALS = 200  # the tail's intervals a process needs to count


def rows():
    for top, _, files in sorted(os.walk(D)):
        for name in sorted(files):
            path = os.path.join(top, name)
            if not name.endswith(".slk") or os.path.getsize(path) > 20 << 20:
                continue
            r = subprocess.run([SLACK, "report", "--json", path], capture_output=True, text=True)
            try:
                g = json.loads(r.stdout)["gpus"][0]
            except (ValueError, KeyError, IndexError):
                continue
            t = g.get("tracer", {})
            u, p = t.get("untraced_tail"), t.get("probe")
            if not u or not p or u["intervals_traced"] < MIN_INTERVALS:
                continue
            if u["call_interval_untraced_ns"] <= 0:
                continue
            yield (u["call_interval_traced_ns"], u["call_interval_untraced_ns"],
                   u["host_slowdown"], p["launch_call_on_ns"] - p["launch_call_off_ns"])


def main():
    v = np.array(list(rows()), dtype=float)
    if not len(v):
        sys.exit(f"no trace with a tail and a probe under {D}")
    tr, un, sl, cu = v.T
    d = tr - un

    def err(pred):
        e = np.abs(pred - un) / un * 100
        return f"median {np.median(e):.1f}%, 90th percentile {np.percentile(e, 90):.1f}%"

    print(f"{len(v)} processes; slowdown median {np.median(sl):.2f}x "
          f"(5th-95th {np.percentile(sl, 5):.2f}-{np.percentile(sl, 95):.2f}); "
          f"probe's CUPTI cost per launch median {np.median(cu) / 1e3:.2f} us; "
          f"traced less untraced interval median {np.median(d) / 1e3:.1f} us")
    print(f"correlation: slowdown and probe {np.corrcoef(sl, cu)[0, 1]:+.2f}; "
          f"difference and probe {np.corrcoef(d, cu)[0, 1]:+.2f}")
    print(f"the ratio 1.45: {err(tr / 1.45)}")
    k = np.median(d / cu)
    print(f"traced less {k:.2f} x the probe's cost: {err(tr - k * cu)}")
    print(f"traced less {np.median(d) / 1e3:.1f} us: {err(tr - np.median(d))}")
    a = np.vstack([tr, -cu, -np.ones_like(tr)]).T
    coef, *_ = np.linalg.lstsq(a, un, rcond=None)
    print(f"least squares on traced interval and probe ({coef[0]:.3f}, {coef[1]:.3f}, "
          f"{coef[2]:.0f} ns): {err(a @ coef)}")


main()
