#!/usr/bin/env python3
"""The host slowdown slack assumes for a trace without an untraced tail (analyzer/tail.h,
TAIL_ASSUMED_FACTOR and its quartiles), from the traces that have one.

Every trace under DIR (default tests/data/holdout: the H200's holdout runs, each process traced
in a window and then timed untraced for SLACK_TAIL_MS) is read with `slack report --json`; a
process counts where its tail timed at least 100 intervals between calls
(`tracer.untraced_tail.intervals_untraced`), with its `host_slowdown` (the median time between a
thread's calls traced over the same untraced, as the report measures it). Prints the median and
the quartiles over the processes, the same per thread, and the median with each workload left out
(a workload is the trace's name up to its form: holdout_vit-a.slk is holdout_vit; the form's
directory for tr/FORM/slack-HOST-PID.slk).

Usage: python3 scripts/host_slowdown.py [--until N] [SLACK [DIR]]
--until N: only the traces of runs up to N (DIR/runNN/...): the constant's own, --until 92 (135
processes: 1.454, quartiles 1.28 to 1.62, 5th to 95th percentile 1.10 to 1.85); all of them since
run 93 (151 processes) read 1.455, 1.29 to 1.62, 1.11 to 1.88"""
import glob, json, os, re, statistics, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ARGS = sys.argv[1:]
UNTIL = None
if ARGS[:1] == ["--until"] and len(ARGS) > 1 and ARGS[1].isdigit():
    UNTIL, ARGS = int(ARGS[1]), ARGS[2:]
SLACK = ARGS[0] if ARGS else os.path.join(ROOT, "build", "slack")
D = ARGS[1] if len(ARGS) > 1 else os.path.join(ROOT, "tests", "data", "holdout")


def slowdowns(path):
    """(process slowdown, [thread slowdowns]) of one trace, or None without a timed tail"""
    r = subprocess.run([SLACK, "report", "--json", path], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    for g in json.loads(r.stdout).get("gpus", []):
        t = g.get("tracer", {}).get("untraced_tail")
        if t and t.get("intervals_untraced", 0) >= 100 and "host_slowdown" in t:
            return t["host_slowdown"], [x["host_slowdown"] for x in t.get("threads", [])]
    return None


def quartiles(v):
    q = statistics.quantiles(v, n=4)
    p = statistics.quantiles(v, n=20)  # the 5th and 95th percentiles: the assumed pace's range
    return (f"median {statistics.median(v):.3f}, quartiles {q[0]:.2f} to {q[2]:.2f}, "
            f"5th to 95th percentile {p[0]:.2f} to {p[-1]:.2f}")


def main():
    traces = sorted(glob.glob(os.path.join(D, "**", "*.slk"), recursive=True))
    if UNTIL is not None:
        traces = [t for t in traces
                  if (m := re.search(r"/run(\d+)/", t)) and int(m.group(1)) <= UNTIL]
    if not traces:
        sys.exit(f"host_slowdown: no traces under {D}")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        got = list(ex.map(slowdowns, traces))
    by_wl, procs, threads = {}, [], []
    for path, s in zip(traces, got):
        if not s:
            continue
        procs.append(s[0])
        threads += s[1]
        name = os.path.basename(path)
        if name.startswith("slack-"):  # tr/FORM/slack-HOST-PID.slk: a form's processes
            name = os.path.basename(os.path.dirname(path))
        by_wl.setdefault(name.split("-")[0], []).append(s[0])
    if len(procs) < 4:
        sys.exit(f"host_slowdown: {len(procs)} traces with a timed tail under {D}: too few")
    print(f"{len(procs)} processes with a timed tail of {len(traces)} traces, {len(by_wl)} "
          f"workloads: {quartiles(procs)}")
    print(f"{len(threads)} threads: {quartiles(threads)}")
    left = [statistics.median([x for k, v in by_wl.items() if k != w for x in v]) for w in by_wl]
    print(f"each workload left out: median {min(left):.3f} to {max(left):.3f}")
    print("per workload (processes, median): " +
          ", ".join(f"{w} {len(v)} {statistics.median(v):.2f}" for w, v in sorted(by_wl.items())))


if __name__ == "__main__":
    main()
