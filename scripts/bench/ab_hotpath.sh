#!/usr/bin/env bash
# A/B of a compile-time variant of the hook hot path, on this machine's CPU (no GPU used):
# builds libslack twice (A: OPT_A, B: OPT_B extra flags) with make bench's stand-ins, then runs
# scripts/bench/cpu_bench.py's null set (cudart returns at once: the time is libslack's) for
# A B A B ... ROUNDS times, REPEATS processes each, and prints hooks - nop per round and the
# medians. Default: the default build (A) against the ring slot prefetch on, 8 slots ahead (B).
#   bash scripts/bench/ab_hotpath.sh     (ROUNDS=3 REPEATS=5 OPT_A= OPT_B=-DSLACK_RING_PREFETCH=8)
set -u
cd "$(dirname "$0")/../.." || exit 2
ROUNDS=${ROUNDS:-3}
REPEATS=${REPEATS:-5}
OPT_A=${OPT_A-}
OPT_B=${OPT_B--DSLACK_RING_PREFETCH=8}
J=$(nproc)
for v in A B; do
  eval "extra=\$OPT_$v"
  make -s -j"$J" BUILD="build-ab$v" OPT="-O2 -g $extra" all stub "build-ab$v/libslack-nop.so" \
    "build-ab$v/bench/cpu_loop" > "/tmp/ab$v.build.log" 2>&1 || { tail -20 "/tmp/ab$v.build.log"; exit 1; }
done
for r in $(seq "$ROUNDS"); do
  for v in A B; do
    x=$(BUILD="build-ab$v" python3 scripts/bench/cpu_bench.py --sets null --repeats "$REPEATS" 2>&1 |
      sed -n 's/^hot path (hooks - nop): \([0-9.]*\) ns.*/\1/p')
    echo "round $r $v ${x:-?}"
  done
done | tee /tmp/ab_hotpath.out
python3 - /tmp/ab_hotpath.out "$OPT_A" "$OPT_B" <<'PY'
import statistics, sys
v = {"A": [], "B": []}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 4 and p[3] != "?":
        v[p[2]].append(float(p[3]))
for k, opt in (("A", sys.argv[2]), ("B", sys.argv[3])):
    if v[k]:
        print("%s (%s): hooks - nop median %.1f ns (%s)" % (k, opt or "default", statistics.median(v[k]),
                                                          " ".join("%.1f" % x for x in v[k])))
PY
