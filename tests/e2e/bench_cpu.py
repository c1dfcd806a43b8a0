#!/usr/bin/env python3
"""make bench-cpu: host-side cost of slack per launch, through the CPU stand-in for CUDA.

Runs build/progs/launch_loop (LOOP_N launches through __cudaLaunchKernel) untraced and traced,
interleaved REPEATS times, and prints the median ns per launch of each and the difference. Each
traced launch is three events (slack's host record, CUPTI's API record, the kernel record). This
is a CPU number about slack's own code path and the stub's: never a GPU measurement (the GPU
numbers come from scripts/ on the GPU machine). stdlib only.

Environment: BUILD (default build), LOOP_N (default 200000), REPEATS (default 5).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
N = int(os.environ.get("LOOP_N", "200000"))
REPEATS = int(os.environ.get("REPEATS", "5"))


def once(traced, tmp, i, cupti=True):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLACK_", "STUB_")) and k not in ("LD_PRELOAD", "PROG_REPORT")}
    env["LD_LIBRARY_PATH"] = os.path.join(BUILD, "stub")
    env["LOOP_N"] = str(N)
    report = os.path.join(tmp, "r%d%s%d.json" % (i, "t" if traced else "b", cupti))
    env["PROG_REPORT"] = report
    if traced:
        out = os.path.join(tmp, "out%d%d" % (i, cupti))
        os.makedirs(out)
        if not cupti:
            env["SLACK_CUPTI"] = "0"
        env["LD_PRELOAD"] = os.path.join(BUILD, "libslack.so")
        env["SLACK_OUTPUT"] = out
        env["SLACK_QUIET"] = "1"
    p = subprocess.run([os.path.join(BUILD, "progs", "launch_loop")], env=env,
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit("launch_loop failed (%d): %s" % (p.returncode, p.stderr.strip()))
    with open(report) as f:
        r = json.load(f)
    return r["loop_ns"] / r["launches"]


def main():
    with tempfile.TemporaryDirectory(prefix="slack-bench-") as tmp:
        bare, traced, hooks = [], [], []
        for i in range(REPEATS):
            bare.append(once(False, tmp, i))
            traced.append(once(True, tmp, i))
            hooks.append(once(True, tmp, i, cupti=False))
    b, t, h = statistics.median(bare), statistics.median(traced), statistics.median(hooks)
    print("bench-cpu: %d launches x %d repeats through the CPU stub (not a GPU measurement)" %
          (N, REPEATS))
    print("  untraced  %8.1f ns per launch  (min %.1f, max %.1f)" % (b, min(bare), max(bare)))
    print("  traced    %8.1f ns per launch  (min %.1f, max %.1f)" % (t, min(traced), max(traced)))
    print("  hooks     %8.1f ns per launch  (SLACK_CUPTI=0: host records only)" % h)
    print("  added     %8.1f ns per launch traced (3 events: host, API and kernel record; the stub"
          " CUPTI's own cost included), %.1f ns per launch with host hooks only" % (t - b, h - b))
    return 0


if __name__ == "__main__":
    sys.exit(main())
