#!/usr/bin/env bash
# Writes tests/data/ranks/, the synthetic jobs of the multi-rank goldens (tests/golden/cases,
# ranks-*), with tests/tools/gen_ranks.c. Run from the repository root after changing either.
set -eu
BUILD=${BUILD:-build}
make -s "$BUILD/tools/gen_ranks"
GEN=$BUILD/tools/gen_ranks
out=tests/data/ranks
rm -rf "$out"
mkdir -p "$out"/starved "$out"/skew "$out"/missing "$out"/eight "$out"/other-job
# 2 ranks, rank 1's loader 3 ms slow: the DDP case of issue 16
"$GEN" "$out/starved" --ranks 2 --slow-rank 1 --slow-ns 3000000
# 2 hosts of 2 ranks, node1's clock 4 ms ahead (its realtime header 3.7 ms: NTP's error), rank 1
# slow by 3 ms (less than the skew: unaligned, node1's ranks would look last)
"$GEN" "$out/skew" --ranks 4 --hosts 2 --skew-ns 4000000 --ntp-ns 300000 --slow-rank 1 \
  --slow-ns 3000000
# 4 ranks, rank 3's trace missing, rank 1 slow by 2 ms
"$GEN" "$out/missing" --ranks 4 --missing 3 --slow-rank 1 --slow-ns 2000000
# 8 ranks, rank 5 slow by 4 ms
"$GEN" "$out/eight" --ranks 8 --steps 20 --slow-rank 5 --slow-ns 4000000
# another job's rank 1 (refused beside starved's rank 0)
"$GEN" "$out/other-job" --ranks 2 --steps 3 --job other-job
rm "$out"/other-job/*rank0*
