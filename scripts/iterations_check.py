#!/usr/bin/env python3
"""steps.iterations of `slack report --json` against the loop's known iteration count, on every
H200 trace under tests/data whose program's loop count is known (docs/CLASSIFICATION.md,
"Iterations"). The counts are the scripts' STEPS/TRACED_STEPS: scripts/accuracy.sh (25 per
scenario, launch_storm 45, healthy 20), gpu-diagnosis.sh (the loader forms 14, from run 36 on
30; the others 40; steps_probe 30), gpu-callsites.sh (10), gpu-compute.sh (25).
Usage: python3 scripts/iterations_check.py [SLACK]   (exit status 1 when any differs)"""
import glob, json, os, re, subprocess, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SLACK = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "slack")
D = os.path.join(ROOT, "tests", "data")


def expected(path):
    rel = os.path.relpath(path, D)
    name = os.path.basename(path)
    if rel.startswith("accuracy"):
        s = name.split("-")[0]
        return {"launch_storm": 45, "healthy": 20}.get(s, 25)
    if rel.startswith("callsites"):
        return 10
    if rel.startswith("compute"):
        return 25
    if rel.startswith("diagnosis"):
        if name.startswith("steps_probe"):
            return 30
        form = re.match(r"resnet_seed-(\w+)\.slk", name).group(1)
        m = re.search(r"run(\d+)", rel)
        late = m and int(m.group(1)) >= 36
        return (30 if late else 14) if "l" in form else 40
    return None


# traces whose window closed before the program's loop ended: the trace holds fewer iterations
# than the loop ran, so the loop's count is not the truth for them
CUT = {
    "diagnosis/run40/resnet_seed-lcs.slk":
        "SLACK_DURATION_MS=15000; the loop's 30 steps took 15.1 s (truth.txt) after the first "
        "kernel at 1.7 s, so ended past 16.8 s; the trace's last kernel ends at 15.04 s",
}

rows, bad = [], 0
for path in sorted(glob.glob(os.path.join(D, "**", "*.slk"), recursive=True)):
    want = expected(path)
    if want is None:
        continue
    rel = os.path.relpath(path, D)
    if rel in CUT:
        print(f"skip {rel:55s} {CUT[rel]}")
        continue
    out = subprocess.run([SLACK, "report", "--json", path], capture_output=True, text=True)
    try:
        got = json.loads(out.stdout)["gpus"][0]["steps"]["iterations"]
    except (ValueError, KeyError, IndexError):
        got = None
    ok = got == want
    bad += not ok
    print(f"{'ok  ' if ok else 'MISS'} {os.path.relpath(path, D):55s} iterations {got} loop {want}")
    rows.append(ok)
print(f"iterations equal the loop's on {sum(rows)} of {len(rows)} traces")
sys.exit(1 if bad else 0)
