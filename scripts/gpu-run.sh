#!/usr/bin/env bash
# Every GPU check and benchmark of slack, in one call on the H200 (see docs/GPU-RUNS.md):
#   build; the probe workload untraced and under libslack (record counts, report);
#   torch.compile and forked-DataLoader variants (output must not change under tracing);
#   an nsys capture of the probe (when Nsight Systems works there); interleaved overhead repeats.
# Writes logs under $OUT (default /tmp/slack-gpu) and prints a short table last.
# Usage: [SKIP_NSYS=1] bash scripts/gpu-run.sh [REPEATS]   (REPEATS of the A/B overhead pairs, default 5)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-/tmp/slack-gpu}
REPEATS=${1:-5}
W=/tmp/slack-gpu-work
rm -rf "$W"
mkdir -p "$W"
LOG=$W/gpu-run.log
exec > >(tee -a "$LOG") 2>&1
export PYTHONUNBUFFERED=1
LIB=$ROOT/build/libslack.so
WL=$ROOT/scripts/workloads
SUM=$OUT/summary.txt
: > "$SUM"
row() { printf '%-44s %s\n' "$1" "$2" | tee -a "$SUM"; }
trace_of() { ls -1 "$1"/*.slk 2>/dev/null | head -1; }
# logs go back as one archive (the device tool returns few files), refreshed after every stage
save_logs() { tar -C "$W" --exclude='tr-*' --exclude='*.sqlite' --exclude='r.*' -czf "$OUT/gpu-logs.tgz" . 2>/dev/null; }

echo "== machine"; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
uname -r; date -u

echo "== build"
make -j"$(nproc)" all > "$W/build.log" 2>&1 || { tail -30 "$W/build.log"; row "build" "FAILED"; exit 1; }
row "build" "ok ($(gcc --version | head -1))"

echo "== probe (STEPS=60): untraced, then traced"
STEPS=60 timeout 300 python3 "$WL/probe_train.py" > "$W/probe-base.out" 2> "$W/probe-base.err"
echo "untraced rc=$?: $(cat "$W/probe-base.out")"
rm -rf "$W/tr-probe"; mkdir -p "$W/tr-probe"
SLACK_OUTPUT=$W/tr-probe LD_PRELOAD=$LIB STEPS=60 timeout 300 python3 "$WL/probe_train.py" \
  > "$W/probe-slack.out" 2> "$W/probe-slack.err"
rc=$?
echo "traced rc=$rc: $(cat "$W/probe-slack.out")"; echo "stderr:"; head -20 "$W/probe-slack.err"
T=$(trace_of "$W/tr-probe")
if [ -n "$T" ]; then
  cp "$T" "$OUT/probe-h200.slk"
  build/slack info --json "$T" > "$W/probe-info.json" 2>&1; cat "$W/probe-info.json"
  build/slack info "$T" > "$W/probe-info.txt" 2>&1
  build/slack report "$T" > "$W/probe-report.txt" 2>&1; cat "$W/probe-report.txt" | head -60
  build/slack report --json "$T" > "$W/probe-report.json" 2>&1
  python3 - "$W/probe-info.json" "$W/probe-report.json" <<'PY' | tee -a "$SUM"
import json, sys
i = json.load(open(sys.argv[1]))
ok = (i.get("kernels"), i.get("memcpys"), i.get("memsets")) == (28410, 189, 654)
print(f"{'probe counts (want 28410/189/654)':44s} {i.get('kernels')}/{i.get('memcpys')}/{i.get('memsets')} "
      f"dropped={i.get('dropped')} {'MATCH' if ok else 'MISMATCH'}")
print(f"{'probe bytes per GPU event':44s} {i.get('bytes_per_gpu_event')}")
try:
    j = json.load(open(sys.argv[2])).get("launch_join", {})
    print(f"{'kernels joined to their launch call':44s} {json.dumps(j)}")
except Exception as e:
    print(f"{'kernels joined to their launch call':44s} report --json failed: {e}")
PY
else
  row "probe trace" "MISSING (rc=$rc)"
fi

save_logs
echo "== variants: output must be identical traced and untraced"
for mode in loader compile; do
  STEPS=20 timeout 240 python3 "$WL/probe_variants.py" $mode > "$W/$mode-base.out" 2> "$W/$mode-base.err"
  rc0=$?
  rm -rf "$W/tr-$mode"; mkdir -p "$W/tr-$mode"
  SLACK_OUTPUT=$W/tr-$mode LD_PRELOAD=$LIB STEPS=20 timeout 240 python3 "$WL/probe_variants.py" $mode \
    > "$W/$mode-slack.out" 2> "$W/$mode-slack.err"
  rc1=$?
  n=$(ls -1 "$W/tr-$mode" | wc -l)
  if [ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && cmp -s "$W/$mode-base.out" "$W/$mode-slack.out"; then same=identical; else same="DIFFERENT (rc $rc0/$rc1)"; fi
  T=$(trace_of "$W/tr-$mode")
  k=$( [ -n "$T" ] && build/slack info --json "$T" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["kernels"], "kernels", d["memcpys"], "memcpys", d["dropped"], "dropped")')
  row "variant $mode" "output $same; trace files=$n; $k"
  [ -n "$T" ] && cp "$T" "$OUT/probe-$mode-h200.slk"
  tail -3 "$W/$mode-slack.err"
done

save_logs
echo "== overhead: probe untraced (A) vs libslack (B), interleaved x$REPEATS"
: > "$W/bench.txt"
for i in $(seq 1 "$REPEATS"); do
  STEPS=60 python3 "$WL/probe_train.py" 2>/dev/null | sed 's/^/A /' >> "$W/bench.txt"
  rm -rf "$W/tr-b"; mkdir -p "$W/tr-b"
  SLACK_OUTPUT=$W/tr-b LD_PRELOAD=$LIB STEPS=60 python3 "$WL/probe_train.py" 2>/dev/null | sed 's/^/B /' >> "$W/bench.txt"
done
python3 - "$W/bench.txt" <<'PY' | tee -a "$SUM"
import re, statistics as st, sys
d = {"A": ([], []), "B": ([], [])}
for line in open(sys.argv[1]):
    m = re.match(r"(\w) RESULT .*steps_per_s=([\d.]+) tiny_op_us=([\d.]+)", line)
    if m: d[m[1]][0].append(float(m[2])); d[m[1]][1].append(float(m[3]))
def f(v): return f"{st.median(v):.2f} ({min(v):.2f}-{max(v):.2f})" if v else "n/a"
print(f"{'steps/s untraced | slack':44s} {f(d['A'][0])} | {f(d['B'][0])}")
print(f"{'tiny op us untraced | slack':44s} {f(d['A'][1])} | {f(d['B'][1])}")
if d["A"][0] and d["B"][0]:
    print(f"{'conv-net slowdown (median ratio)':44s} {100*(1-st.median(d['B'][0])/st.median(d['A'][0])):.2f}%")
    print(f"{'tiny op added us (median diff)':44s} {st.median(d['B'][1])-st.median(d['A'][1]):.2f}")
PY

save_logs
echo "== nsys capture of the probe (for the side-by-side comparison)"
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
if [ "${SKIP_NSYS:-0}" != 1 ] && [ -x "$NSYS" ] && ls "$ROOT"/.gpu/debs/*.deb > /dev/null 2>&1; then
  mkdir -p /tmp/dw; for d in "$ROOT"/.gpu/debs/*.deb; do dpkg -x "$d" /tmp/dw; done
  export NSYS_LD=/tmp/dw/usr/lib/x86_64-linux-gnu
  ( cd "$W" && rm -f r.* && LD_LIBRARY_PATH=$NSYS_LD STEPS=60 timeout 240 "$NSYS" profile --trace=cuda,nvtx \
      --sample=none --cpuctxsw=none -o r python3 "$WL/probe_train.py" > nsys.out 2>&1
    [ -f r.nsys-rep ] || LD_LIBRARY_PATH=$NSYS_LD timeout 120 \
      /opt/nvidia/nsight-compute/2025.3.1/host/linux-desktop-glibc_2_11_3-x64/QdstrmImporter -i r.qdstrm >> nsys.out 2>&1
    LD_LIBRARY_PATH=$NSYS_LD timeout 120 "$NSYS" export --type sqlite -o r-export.sqlite r.nsys-rep >> nsys.out 2>&1 )
  if [ -f "$W/r-export.sqlite" ]; then
    xz -T8 -c "$W/r-export.sqlite" > "$OUT/nsys-probe-h200.sqlite.xz"; row "nsys capture" "ok ($(du -h "$W/r-export.sqlite" | cut -f1))"
  else row "nsys capture" "failed (see nsys.out)"; tail -5 "$W/nsys.out"; fi
else
  row "nsys capture" "skipped (nsys or .gpu/debs missing)"
fi

echo "== done"
save_logs
echo; echo "================ summary ================"; cat "$SUM"
