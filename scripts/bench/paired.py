#!/usr/bin/env python3
"""Paired slowdowns from a results.csv of scripts/bench/run.sh: in each round, every
configuration against the no-profiler process of the same round (the rounds interleave A B C
..., so a machine that drifts between rounds shows in every configuration of that round alike).
Prints, per workload and configuration, the median of the per-round slowdowns, their range and
each round's figure. stdlib only.

  python3 scripts/bench/paired.py results.csv
"""
import collections
import csv
import statistics
import sys

HIGHER_IS_BETTER = {"convnet", "transformer"}  # steps/s; the others are time per launch or op


def main(path):
    rows = list(csv.DictReader(open(path)))
    order = []
    for r in rows:
        if r["workload"] not in order:
            order.append(r["workload"])
    print("| workload | config | rounds | median slowdown | min | max | per round |")
    print("|---|---|---|---|---|---|---|")
    for wl in order:
        by = collections.defaultdict(dict)
        for r in rows:
            if r["workload"] == wl and r["value"] and r.get("rc", "0") == "0":
                by[r["round"]][r["config"]] = float(r["value"])
        cfgs = []
        for r in rows:
            if r["workload"] == wl and r["config"] != "none" and r["config"] not in cfgs:
                cfgs.append(r["config"])
        for cfg in cfgs:
            s = []
            for _, d in sorted(by.items(), key=lambda kv: int(kv[0])):
                if cfg in d and d.get("none"):
                    ratio = d["none"] / d[cfg] if wl in HIGHER_IS_BETTER else d[cfg] / d["none"]
                    s.append((ratio - 1) * 100)
            if s:
                print("| %s | %s | %d | %+.2f%% | %+.2f%% | %+.2f%% | %s |" % (
                    wl, cfg, len(s), statistics.median(s), min(s), max(s),
                    " ".join("%+.1f" % x for x in s)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
