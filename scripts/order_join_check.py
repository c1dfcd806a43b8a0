#!/usr/bin/env python3
"""Could GPU work join its launching host call without CUPTI's API records? (issue 13: CUPTI
attached again after a detach gives none, GPU run 38, so production windows with
SLACK_WINDOW_DETACH=1 lose the join after their first window; SLACK_API_RECORDS=0 would save
CUPTI's per-call API record.) An experiment on H200 traces that have the API join, no GPU:

- the join by correlation id (what slack does) is the truth;
- the stream handles of the host calls (the hook's `stream`) are mapped to CUPTI's stream ids by
  the joined pairs of the first FRAC of the trace (a first window that kept its API records);
- after that, each stream's kernels, copies and memsets are matched in order with that stream's
  launch, copy and memset calls (first in, first out, a call never after the work it submits;
  CUDA graph work left out), ignoring the correlation ids;
- agreement = the share of the later work whose order match is its true launching call.

Host calls whose stream handle the first FRAC never saw cannot be mapped (a stream created
later): a runtime record of each handle's CUPTI stream id (cuptiGetStreamIdEx) would map them.
Usage: python3 scripts/order_join_check.py [--frac 0.2] TRACE...   (default: every H200 trace
under tests/data with API-joined kernels)"""
import argparse, collections, glob, os, re, subprocess, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SLACK = os.path.join(ROOT, "build", "slack")


def records(path):
    out = subprocess.run([SLACK, "dump", "--kind", "host,kernel,memcpy,memset", path],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        yield line.split(" ", 1)[0], dict(re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)', line))


def work_class(fn):
    if "Graph" in fn:
        return None
    return "kernel" if "aunch" in fn else "memcpy" if "emcpy" in fn else \
        "memset" if "emset" in fn else None


def check(path, frac):
    hosts, ops = [], []
    for kind, f in records(path):
        if kind == "host" and work_class(f.get("fn", "")):
            hosts.append((int(f["start"]), int(f.get("corr", 0)), work_class(f["fn"]),
                          f.get("stream", "0")))
        elif kind in ("kernel", "memcpy", "memset") and "start" in f and not f.get("graph_id"):
            ops.append((int(f["start"]), int(f.get("corr", 0)), kind, int(f.get("stream", 0))))
    if not hosts or not ops:
        return None
    hosts.sort()
    ops.sort()
    by_corr = {h[1]: i for i, h in enumerate(hosts) if h[1]}
    cut = hosts[0][0] + (hosts[-1][0] - hosts[0][0]) * frac
    votes = collections.defaultdict(collections.Counter)
    for o in ops:
        i = by_corr.get(o[1])
        if i is not None and hosts[i][0] < cut:
            votes[hosts[i][3]][o[3]] += 1
    sid = {h: c.most_common(1)[0][0] for h, c in votes.items()}
    queue = collections.defaultdict(collections.deque)
    unmapped = 0
    for i, h in enumerate(hosts):
        if h[0] >= cut:
            if h[3] in sid:
                queue[(sid[h[3]], h[2])].append(i)
            else:
                unmapped += 1
    total = agree = 0
    for o in ops:
        if o[0] < cut:
            continue
        q = queue[(o[3], o[2])]
        got = q.popleft() if q and hosts[q[0]][0] <= o[0] else None
        truth = by_corr.get(o[1])
        if truth is None or hosts[truth][0] < cut:
            continue  # no true join to score (its call still took its place in the order)
        total += 1
        agree += got == truth
    return total, agree, unmapped, len(sid)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frac", type=float, default=0.2)
    ap.add_argument("traces", nargs="*")
    a = ap.parse_args()
    paths = a.traces or sorted(glob.glob(os.path.join(ROOT, "tests", "data", "**", "*.slk"),
                                         recursive=True))
    tot = agr = 0
    for p in paths:
        r = check(p, a.frac)
        if not r or r[0] < 100:
            continue
        tot += r[0]
        agr += r[1]
        print(f"{os.path.relpath(p, ROOT):60s} {r[1]:7d} of {r[0]:7d} ({100 * r[1] / r[0]:6.2f}%)"
              f"  host calls on unmapped streams {r[2]}, streams mapped {r[3]}")
    if tot:
        print(f"all: {agr} of {tot} ({100 * agr / tot:.2f}%)")


if __name__ == "__main__":
    sys.exit(main())
