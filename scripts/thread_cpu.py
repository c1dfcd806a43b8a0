"""Each sampled thread's CPU time per step of a slack trace (format 2.7 or later: each Python
sample carries its thread's CPU clock): the clock's advance between the thread's samples nearest
the steady span's ends, scaled to that span, over the steps in it. The span runs from the second
to the last launch of a kernel that starts each step (a substring of its mangled name, e.g. the
first kernel `slack report` names in its steps line). docs/ACCURACY.md ("Runs 159 to 161") reads
holdout_threads' launching threads with it.

Usage: python3 scripts/thread_cpu.py TRACE KERNEL_SUBSTRING [SLACK]"""
import bisect
import collections
import os
import re
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    trace, anchor = sys.argv[1], sys.argv[2]
    slack = sys.argv[3] if len(sys.argv) > 3 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build", "slack")

    def dump(kind):
        r = subprocess.run([slack, "dump", "--kind", kind, trace], capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"slack dump failed: {r.stderr.strip()[:200]}")
        return r.stdout.splitlines()

    ks = sorted(int(re.search(r" start=(\d+)", ln)[1]) for ln in dump("kernel") if anchor in ln)
    if len(ks) < 3:
        sys.exit(f"fewer than 3 kernels named like {anchor!r}")
    a, b, steps = ks[1], ks[-1], len(ks) - 2
    names = {}
    for ln in dump("thread"):
        m = re.match(r'thread tid=(\d+) name="(.*)"', ln)
        if m:
            names[int(m[1])] = m[2]
    by = collections.defaultdict(list)
    for ln in dump("sample"):
        m = re.match(r"sample tid=(\d+) start=(\d+) .*cpu_ns=(\d+)$", ln)
        if m:
            by[int(m[1])].append((int(m[2]), int(m[3])))
    print(f"{steps} steps of {(b - a) / steps / 1e6:.2f} ms (from the 2nd to the last {anchor})")
    print("| thread | name | CPU a step (ms) | share of the step |")
    print("|---|---|---|---|")
    for tid, v in sorted(by.items()):
        v.sort()
        xs = [x[0] for x in v]
        i, j = bisect.bisect_left(xs, a), bisect.bisect_right(xs, b) - 1
        if j <= i or v[j][0] <= v[i][0]:
            continue
        rate = (v[j][1] - v[i][1]) / (v[j][0] - v[i][0])
        print(f"| {tid} | {names.get(tid, '')} | {rate * (b - a) / steps / 1e6:.2f} | "
              f"{rate * 100:.0f}% |")


main()
