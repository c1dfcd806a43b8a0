#!/usr/bin/env bash
# Compute hints on the H200 pairs (tests/data/compute, scripts/gpu-compute.sh): the slow form's
# hint predicts the measured speedup of its fix within 25% (scripts/compute_table.py prints the
# table of docs/ACCURACY.md), and the fixed form's trace does not get the same hint.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
make -s BUILD="$BUILD" "$BUILD/slack" > /dev/null || exit 1
python3 scripts/compute_table.py "$BUILD/slack" tests/data/compute
