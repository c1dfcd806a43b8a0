"""Checks call sites on real traces (scripts/gpu-callsites.sh; tests/golden runs it on the
committed traces): for each (trace, workload file, class, pattern), the class's top call site
must name, as its user frame (the first Python frame outside site-packages and the standard
library), a line of the workload file that matches the pattern.

  python3 scripts/callsites_check.py SLACK DIR     (DIR holds the traces named below)
prints one row per check and exits 1 when one fails or its trace is missing. `make test` runs it
on the H200 traces in tests/data/callsites (scripts/gpu-callsites.sh made them; DIR/src holds
the workload files as they were when the traces were recorded).
"""
import json
import os
import re
import subprocess
import sys

WL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workloads")
# trace name, workload, class, pattern of the line the top site must name
CHECKS = [
    ("resnet_seed-s", "resnet_seed.py", "serialization", r"append\(loss\.item\(\)\)"),
    ("resnet_seed-c", "resnet_seed.py", "copy_stall", r"\.cuda\(non_blocking=nb\)"),
    ("resnet_seed-l", "resnet_seed.py", "data_starvation", r"next\(self\.it\)"),
    ("resnet_seed-lcs", "resnet_seed.py", "data_starvation", r"next\(self\.it\)"),
    ("serialization-broken", "serialization.py", "serialization", r"append\(loss\.item\(\)\)"),
    ("copy_stall-broken", "copy_stall.py", "copy_stall", r"= self\.host\[.*\.to\(\"cuda\"\)"),
    ("launch_storm-broken", "launch_storm.py", "launch_overhead", r"x \* 1\.0001 if"),
]


def user_frame(site):
    for f in site.get("python") or []:
        if f.get("user"):
            return f
    return None


def main():
    slack, d = sys.argv[1], sys.argv[2]
    bad = 0
    print("| trace | class | top site | want | ok |")
    print("|---|---|---|---|---|")
    for name, wl, cls, pat in CHECKS:
        path = os.path.join(d, name + ".slk")
        # the workload's source as recorded (DIR/src, saved with the traces) when there is one:
        # an edit to scripts/workloads after the recording moves its lines
        src = os.path.join(d, "src", wl)
        lines = open(src if os.path.exists(src) else os.path.join(WL, wl)).read().split("\n")
        want = [i + 1 for i, l in enumerate(lines) if re.search(pat, l)]
        if not os.path.exists(path):
            print(f"| {name} | {cls} | (no trace) | {wl}:{want} | MISSING |")
            bad += 1
            continue
        out = subprocess.run([slack, "report", "--json", path], capture_output=True, text=True)
        g = json.loads(out.stdout)["gpus"][0]
        sites = g["callsites"].get(cls) or []
        top = sites[0] if sites else None
        f = user_frame(top) if top else None
        ok = bool(f) and os.path.basename(f["file"]) == wl and f["line"] in want
        bad += not ok
        shown = top["site"][:90] if top else "(none)"
        print(f"| {name} | {cls} | {shown} | {wl}:{','.join(map(str, want))} | "
              f"{'yes' if ok else 'NO'} |")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
