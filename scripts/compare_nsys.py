#!/usr/bin/env python3
"""slack next to Nsight Systems on the same workload (docs/ACCURACY.md, "Side by side with nsys").

usage: scripts/compare_nsys.py NSYS.sqlite SLACK.slk [--slack build/slack]

Kernels: per (mangled) name, the instance count and the median duration in the nsys export and
in the slack trace. Classification: `slack import nsys` turns the export into a slack trace, and
`slack report --json` classifies both; per class, the share of the step (steps found by slack
in each capture) and of the whole window. Prints markdown. Exit 0; the verdicts are in the text.
"""
import json, os, re, sqlite3, statistics, subprocess, sys, tempfile

def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    slack = "build/slack"
    if "--slack" in sys.argv:
        slack = sys.argv[sys.argv.index("--slack") + 1]
        args = [a for a in args if a != slack]
    if len(args) != 2:
        sys.exit(__doc__)
    db_path, slk = args
    db = sqlite3.connect(db_path)
    ns = {}
    for name, dur in db.execute(
            "SELECT s.value, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN StringIds s ON s.id = k.mangledName"):
        ns.setdefault(name, []).append(dur)
    sl = {}
    dump = subprocess.run([slack, "dump", "--kind", "kernel", slk], capture_output=True, text=True,
                          check=True).stdout
    for line in dump.splitlines():
        m = re.search(r'start=(\d+) end=(\d+).* name="([^"]*)"', line)
        if not m:
            m2 = re.search(r'name="([^"]*)"', line)
            s = re.search(r"start=(\d+)", line); e = re.search(r"end=(\d+)", line)
            if not (m2 and s and e):
                continue
            name, d = m2[1], int(e[1]) - int(s[1])
        else:
            name, d = m[3], int(m[2]) - int(m[1])
        sl.setdefault(name, []).append(d)
    names = sorted(set(ns) | set(sl), key=lambda n: -sum(ns.get(n, [0])))
    same = [n for n in names if len(ns.get(n, [])) == len(sl.get(n, []))]
    print(f"## Kernels: {sum(map(len, ns.values()))} in nsys, {sum(map(len, sl.values()))} in slack; "
          f"{len(names)} names, {len(same)} with identical counts\n")
    print("| kernel (mangled, cut) | nsys n | slack n | nsys median ns | slack median ns | diff |")
    print("|---|---|---|---|---|---|")
    within, total_t, within_t, worst = 0, 0, 0, (0, "")
    for n in names:
        a, b = ns.get(n, []), sl.get(n, [])
        if not a or not b:
            print(f"| `{n[:60]}` | {len(a)} | {len(b)} | - | - | - |")
            continue
        ma, mb = statistics.median(a), statistics.median(b)
        diff = (mb - ma) / ma * 100 if ma else 0.0
        t = sum(a)
        total_t += t
        if abs(diff) <= 5:
            within += 1
            within_t += t
        elif abs(diff) > abs(worst[0]):
            worst = (diff, n)
        print(f"| `{n[:60]}` | {len(a)} | {len(b)} | {ma:.0f} | {mb:.0f} | {diff:+.1f}% |")
    print(f"\nMedian durations within 5%: {within} of {len(names)} names, "
          f"{100 * within_t / max(total_t, 1):.1f}% of nsys's kernel time"
          + (f"; largest miss {worst[0]:+.1f}% (`{worst[1][:60]}`)" if worst[1] else "") + "\n")
    with tempfile.TemporaryDirectory() as tmp:
        imp = os.path.join(tmp, "nsys.slk")
        subprocess.run([slack, "import", "nsys", db_path, "-o", imp], capture_output=True, check=True)
        reps = {}
        for label, path in (("nsys", imp), ("slack", slk)):
            out = subprocess.run([slack, "report", "--json", path], capture_output=True, text=True,
                                 check=True).stdout
            reps[label] = json.loads(out)["gpus"][0]
    print("## Classification (slack's classifier on each capture)\n")
    print(f"Steps: nsys capture {reps['nsys']['steps']['count']} ({reps['nsys']['steps']['source']}), "
          f"slack capture {reps['slack']['steps']['count']} ({reps['slack']['steps']['source']}).\n")
    print("| class | nsys: share of step | slack: share of step | diff (points) | nsys: share of window | slack: share of window |")
    print("|---|---|---|---|---|---|")
    worst_pp = 0.0
    for c in reps["slack"]["time_ns"]:
        sa = reps["nsys"]["steps"]["per_step_ns"].get(c, 0) / max(reps["nsys"]["steps"]["step_ns"], 1) * 100
        sb = reps["slack"]["steps"]["per_step_ns"].get(c, 0) / max(reps["slack"]["steps"]["step_ns"], 1) * 100
        wa = reps["nsys"]["time_ns"].get(c, 0) / max(reps["nsys"]["window_ns"], 1) * 100
        wb = reps["slack"]["time_ns"].get(c, 0) / max(reps["slack"]["window_ns"], 1) * 100
        worst_pp = max(worst_pp, abs(sb - sa))
        print(f"| {c} | {sa:.2f}% | {sb:.2f}% | {sb - sa:+.2f} | {wa:.2f}% | {wb:.2f}% |")
    print(f"\nLargest per-step difference: {worst_pp:.2f} percentage points "
          f"({'within' if worst_pp <= 2 else 'outside'} the 2-point bar). Step: nsys "
          f"{reps['nsys']['steps']['step_ns'] / 1e6:.2f} ms, slack {reps['slack']['steps']['step_ns'] / 1e6:.2f} ms.")

if __name__ == "__main__":
    main()
