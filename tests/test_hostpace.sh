#!/usr/bin/env bash
# scripts/hostpace.py (the loader inside against outside trace windows, scripts/gpu-hostpace.sh)
# on a stand-in trace with three windows and made-up steps: steps inside a window count as
# inside, steps that meet no window as outside, steps across an edge as neither; the ratio
# follows the durations given.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
make -s BUILD="$BUILD" "$BUILD/slack" > /dev/null || exit 1
TEST_NAME=hostpace
. tests/tools/harness.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tr=tests/data/windows-nvtx-stub.slk
# the trace's closed windows, then steps of 10 us every 50 us from 100 us before the first: 20 us
# when the step starts in the first 200 us of a window
wins=$("$BUILD/slack" dump "$tr" | awk '/^window / && !/flags=/ {sub("start=","",$2); sub("end=","",$3); print $2, $3}')
[ "$(wc -l <<< "$wins")" = 3 ] && ok || bad "want 3 closed windows in $tr: $wins"
python3 - "$wins" > "$work/steps.out" << 'PY'
import sys
w = [tuple(map(int, l.split())) for l in sys.argv[1].splitlines()]
a = w[0][0] - 100_000
for i in range(5000):
    t0 = a + i * 50_000
    if t0 > w[-1][1] + 100_000:
        break
    d = 20_000 if any(s <= t0 < s + 200_000 for s, _ in w) else 10_000
    print(f"STEP {i} {t0} {t0 + d} {t0 + 45_000}")
PY
want=$(python3 - "$wins" "$work/steps.out" << 'PY'
import sys
w = [tuple(map(int, l.split())) for l in sys.argv[1].splitlines()]
ins = outs = 0
for l in open(sys.argv[2]):
    _, _, t0, tl, _ = l.split()
    t0, tl = int(t0), int(tl)
    if t0 < w[0][0]:
        continue
    if any(a <= t0 and tl <= b for a, b in w):
        ins += 1
    elif not any(t0 < b and a < tl for a, b in w):
        outs += 1
print(ins, outs)
PY
)
got=$(python3 scripts/hostpace.py "$BUILD/slack" "$work/steps.out" "$tr")
read -r wi wo <<< "$want"
grep -q "^inside $wi median" <<< "$got" && grep -q "| outside $wo median" <<< "$got" && ok ||
  bad "counts: want inside $wi outside $wo: $got"
[ "$wi" -gt 3 ] && [ "$wo" -gt 100 ] && ok || bad "the made-up steps miss the windows: $want"
r=$(sed -n 's/.*ratio of medians \([0-9.]*\).*/\1/p' <<< "$got")
python3 -c "import sys; sys.exit(0 if 1.3 < float('$r') < 2.01 else 1)" && ok || bad "ratio $r, want 1.3..2 (20 us inside, 10 us outside)"
finish
