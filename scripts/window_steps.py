#!/usr/bin/env python3
"""Step counts in windows against the whole trace (docs/PERFORMANCE.md, "One loop's pattern steps
counted together").

usage: scripts/window_steps.py [SLACK [MULTS [DIR]]]
  SLACK  the slack binary (default build/slack)
  MULTS  steps a window, comma-separated (default 10,20,40)
  DIR    where the traces are (default tests/data)

For every trace under DIR whose GPU with the most steps has 40 to 1,000 of them read whole
(`slack report --json --window-records 0`), reads it again in windows of its records over its
steps times each of MULTS (about that many steps a window) and prints the whole count and each
windowed count, one trace a line, then per MULTS how many are within 5% of the whole count and
their sum.
"""
import glob
import json
import os
import subprocess
import sys

slack = sys.argv[1] if len(sys.argv) > 1 else 'build/slack'
mults = [int(x) for x in sys.argv[2].split(',')] if len(sys.argv) > 2 else [10, 20, 40]
top = sys.argv[3] if len(sys.argv) > 3 else 'tests/data'


def run(args):
    try:
        out = subprocess.run([slack] + args, capture_output=True, timeout=300).stdout
        return json.loads(out)
    except (subprocess.SubprocessError, ValueError):
        return None


tot = {m: [0, 0, 0] for m in mults}  # within 5%, traces, sum
whole_sum = 0
for f in sorted(glob.glob(os.path.join(top, '**', '*.slk'), recursive=True)):
    info = run(['info', '--json', f])
    d = run(['report', '--json', '--window-records', '0', f])
    if not info or not d or not d['gpus']:
        continue
    g0 = max(d['gpus'], key=lambda g: g['steps']['count'])
    c = g0['steps']['count']
    if c < 40 or c > 1000:
        continue
    whole_sum += c
    row = [os.path.relpath(f, top), c]
    for m in mults:
        e = run(['report', '--json', '--window-records', str(max(1000, info['records'] * m // c)), f])
        ge = [g for g in e['gpus'] if g['device'] == g0['device']] if e else []
        ce = ge[0]['steps']['count'] if ge else 0
        row.append(ce)
        tot[m][1] += 1
        tot[m][2] += ce
        tot[m][0] += abs(ce - c) <= 0.05 * c
    print(*row, flush=True)
print('whole: %d steps' % whole_sum)
for m in mults:
    print('~%d steps a window: within 5%% in %d of %d, sum %d' % (m, tot[m][0], tot[m][1], tot[m][2]))
