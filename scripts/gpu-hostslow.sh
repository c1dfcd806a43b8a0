#!/usr/bin/env bash
# Where slack slows host work that makes no CUDA call (issue 13), measured inside one process:
# resnet_seed's loader form (`l`: the batch built by CPU transforms in the main thread) under
# libslack with SLACK_DURATION_MS then SLACK_TAIL_MS, once per configuration. The report's
# untraced tail compares the loader's stretches outside CUDA traced and untraced in the same
# process, by rank (tail.c): `long_stretch_slowdown` is the tracer's cost on host work, free of
# the process-to-process spread that hides it between processes. One process per CONFIGS entry
# (NAME or NAME:VAR=VALUE[:VAR=VALUE]), in ROUNDS interleaved rounds.
# $OUT gets hostslow-summary.txt (a row per process, then the median per configuration) and
# hostslow-logs.tgz (outputs and reports).
# Usage: bash scripts/gpu-hostslow.sh   (after `make all`; CONFIGS, ROUNDS=1, WINDOW_MS=9000,
#        TAIL_MS=8000, BUDGET_S=300; WORKLOAD=resnet_seed FORM=l TRACED_STEPS=14: another
#        scenario's form, e.g. WORKLOAD=holdout_pool FORM=m, GPU run 135)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-hostslow}
CONFIGS=${CONFIGS:-default zstd3:SLACK_ZSTD_LEVEL=3 nosample:SLACK_PY_SAMPLE_MS=0 nostacks:SLACK_STACKS=off}
ROUNDS=${ROUNDS:-1}
WINDOW_MS=${WINDOW_MS:-9000}
TAIL_MS=${TAIL_MS:-8000}
BUDGET_S=${BUDGET_S:-300}
WORKLOAD=${WORKLOAD:-resnet_seed}
FORM=${FORM:-l}
TRACED_STEPS=${TRACED_STEPS:-14}
T0=$(date +%s)
W=/tmp/slack-hostslow-work
rm -rf "$W"
mkdir -p "$W" "$OUT"
export PYTHONUNBUFFERED=1
S=$OUT/hostslow-summary.txt
printf 'round\tconfig\ttraced_step_ms\tuntraced_step_ms\tlong_slowdown\tcall_slowdown\tstretches\n' > "$S"
for r in $(seq 1 "$ROUNDS"); do
  for cfg in $CONFIGS; do
    [ $(($(date +%s) - T0 + 60)) -gt "$BUDGET_S" ] && { echo "skip $cfg round $r: budget"; continue; }
    name=${cfg%%:*}
    vars=()
    [ "$cfg" != "$name" ] && IFS=: read -r -a vars <<< "${cfg#*:}"
    tag=$name.r$r
    mkdir -p "$W/$tag"
    env "${vars[@]}" SLACK_DURATION_MS=$WINDOW_MS SLACK_TAIL_MS=$TAIL_MS SLACK_OUTPUT=$W/$tag \
      LD_PRELOAD=$ROOT/build/libslack.so TRACED_STEPS=$TRACED_STEPS INPROC_FORMS=$FORM timeout 200 \
      python3 "scripts/workloads/$WORKLOAD.py" --inproc 3 --form "$FORM" > "$W/$tag.out" 2> "$W/$tag.err"
    rc=$?
    t=$(ls -1 "$W/$tag"/*.slk 2>/dev/null | head -1)
    [ -n "$t" ] && build/slack report --json "$t" > "$W/$tag.json" 2> "$W/$tag.rerr"
    python3 - "$W/$tag" "$r" "$name" "$rc" >> "$S" << 'PY'
import json, re, sys
base, r, name, rc = sys.argv[1:]
text = open(base + ".out").read()
tr = re.search(r"step_ms=([0-9.]+) .*phase=traced", text)
un = re.search(r"INPROC_MEDIAN .*step_ms=([0-9.]+)", text)
try:
    t = json.load(open(base + ".json"))["gpus"][0]["tracer"]["untraced_tail"]
    ls, cs = t["long_stretch_slowdown"], t["host_slowdown"]
    n = "%d/%d" % (t["long_stretches_traced"], t["long_stretches_untraced"])
except Exception as e:
    ls = cs = float("nan"); n = "none (rc %s)" % rc
print("%s\t%s\t%s\t%s\t%.3f\t%.3f\t%s" % (r, name, tr.group(1) if tr else "nan",
      un.group(1) if un else "nan", ls, cs, n))
PY
    tail -1 "$S"
  done
done
python3 - "$S" >> "$S.med" << 'PY'
import collections, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
by = collections.defaultdict(list)
for r in rows:
    try:
        by[r[1]].append(float(r[4]))
    except ValueError:
        pass
for k, v in by.items():
    v = [x for x in v if x == x]
    if v:
        print("%-10s long_stretch_slowdown median %.3f (%s)" % (k, statistics.median(v),
              " ".join("%.3f" % x for x in v)))
PY
cat "$S.med" >> "$S"
tar -C "$W" -czf "$OUT/hostslow-logs.tgz" --exclude='*.slk' . 2>/dev/null
