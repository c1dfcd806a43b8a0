#!/usr/bin/env python3
"""The writer's pauses in a slack trace and the host work that ran long in them (session 51).

slack's writer thread samples every Python thread every SLACK_PY_SAMPLE_MS (10 ms) and, every
SLACK_FLUSH_MS (1000 ms), asks CUPTI for its records and compresses a chunk; while it does the
latter it samples nothing. The pauses show in the trace as stretches of 30 ms or more with no
sample of any thread. For each thread with 1,000 calls or more: the host stretches between two
of its consecutive calls that lie inside such a pause (5 ms of slack either side), and the time
they ran longer than the median of the stretches between the same two call sites outside the
pauses. With SHIFT_MS the pauses are moved by that much first: the same sum over stretches that
no pause held (a control: what chance alone gives).

Usage: python3 scripts/writer_gaps.py TRACE [SHIFT_MS [SLACK]]"""
import bisect
import collections
import os
import re
import statistics
import subprocess
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    trace = sys.argv[1]
    shift = int(float(sys.argv[2]) * 1e6) if len(sys.argv) > 2 else 0
    slack = sys.argv[3] if len(sys.argv) > 3 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build", "slack")

    def dump(kind):
        r = subprocess.run([slack, "dump", "--kind", kind, trace], capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"slack dump failed: {r.stderr.strip()[:200]}")
        return r.stdout.splitlines()

    calls = collections.defaultdict(list)
    for ln in dump("host"):
        m = re.match(r"host tid=(\d+) start=(\d+) end=(\d+).*? fn=(\w+)", ln)
        if m:
            cs = re.search(r'callsite="([^"]{0,80})', ln)
            calls[int(m[1])].append((int(m[2]), int(m[3]), m[4] + (cs[1] if cs else "")))
    starts = sorted(int(m[1]) for ln in dump("sample") if (m := re.match(r"sample tid=\d+ start=(\d+)", ln)))
    pauses = [(a + shift, b + shift) for a, b in zip(starts, starts[1:]) if b - a > 30e6]
    ps = [a for a, _ in pauses]
    print(f"{trace}: {len(pauses)} pauses of the writer's sampling (30 ms or more), "
          f"{sum(b - a for a, b in pauses) / 1e6:.0f} ms" + (f", moved by {shift / 1e6:.0f} ms" if shift else ""))

    def inside(a, b):
        j = bisect.bisect_right(ps, b) - 1
        return j >= 0 and pauses[j][0] - 5e6 <= a and b <= pauses[j][1] + 5e6

    for tid, v in sorted(calls.items()):
        if len(v) < 1000:
            continue
        v.sort()
        by = collections.defaultdict(list)
        for p, q in zip(v, v[1:]):
            if q[0] > p[1]:
                by[(p[2], q[2])].append((q[0] - p[1], inside(p[1], q[0])))
        extra = n = 0
        for g in by.values():
            out = [x for x, w in g if not w]
            if len(out) < 5:
                continue
            med = statistics.median(out)
            for x, w in g:
                if w and x > med:
                    extra += x - med
                    n += 1
        print(f"  thread {tid}: {len(v)} calls; {n} stretches inside a pause ran "
              f"{extra / 1e6:.1f} ms longer than their sites' median")


if __name__ == "__main__":
    main()
