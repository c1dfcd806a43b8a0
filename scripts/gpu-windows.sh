#!/usr/bin/env bash
# GPU checks of production windows with CUPTI detached between them (SLACK_WINDOW_DETACH, issue
# 13), in one call on the H200 (about 3 minutes):
#   1. scripts/workloads/reattach.cu, a bare CUPTI client: what CUPTI 13 delivers after
#      cuptiFinalize and a second attach (RUNTIME records? DRIVER records of cudart's driver calls,
#      per callback id and with the whole kind? do the kernels' correlation ids match them?), a
#      kernel in flight when the records go off, and the launch call attached, records off and
#      detached;
#   2. the tiny-op loop (scripts/workloads/calibrate.py, N ops x 5 rounds) in PAIRS interleaved
#      rounds of CONFIGS: none (untraced), full (slack's default full trace, no window), noapi
#      (the same with SLACK_API_RECORDS=0: no CUPTI API record, the order join through the
#      stream map, issue 13), bare and bare_noapi (scripts/bench/bare_cupti.c preloaded with
#      torch's libcupti: the kinds and API records slack enables, and those kinds without any API
#      record, BARE_CUPTI_API=0: the floor noapi is measured against), detach
#      (SLACK_WINDOW=$WINDOW, CUPTI detached between windows) and attached (the same with
#      SLACK_WINDOW_DETACH=0, records off): us per op, and per traced process the windows (0: a
#      full trace, counted as one), the kernels and those joined to their launching host call by
#      correlation id (window 1 keeps the runtime API records when it opens at the first CUDA
#      call; after a re-attach CUPTI 13.0 gives none, run 38), slack report's join with the order
#      join (report_with_launch, report_by_order: docs/CLASSIFICATION.md) and the trace's
#      stream map records (stream_records: SLK_STREAM, runtime/streams.c). Then the median us
#      per op of each config, and noapi against bare_noapi.
# $OUT gets gpu-windows.log, reattach.txt, windows-summary.txt and the last traces.
#   3. (STAGES="3", not by default: about 8 minutes) production windows averaged over a long
#      run: scripts/workloads/train_steady.py bare for BARE_S, under SLACK_WINDOW=LONG_WINDOW
#      for LONG_S, bare again; windows-long.txt and a line in windows-summary.txt.
#   4. (in STAGES by default, about 1 minute) what slack adds on top of bare CUPTI per launch,
#      measured inside each traced process by the exit probe (format 2.6, runtime/probe.c:
#      alternating windows, immune to the VM's drift between processes): the PROBE record of
#      every trace part 2 made, plus PROBE_RUNS runs each of full and noapi (N=PROBE_N), one row
#      per process (on, off, records_off, hooked, api_off, hooked - on, on - api_off, on - off),
#      then the median of hooked - on (slack's hooks per launch) and on - api_off (CUPTI's API
#      records per launch) across processes; probes.txt and lines in windows-summary.txt.
# Usage: bash scripts/gpu-windows.sh   (PAIRS=3, N=100000, WINDOW=100ms/1s, STAGES="1 2 4",
#        CONFIGS="none full noapi bare bare_noapi detach attached";
#        LONG_S=300 BARE_S=60 LONG_WINDOW=2s/20s LONG_ENV= for part 3;
#        PROBE_RUNS=3 PROBE_N=20000 for part 4)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/slack-gpu-windows}
PAIRS=${PAIRS:-3}
N=${N:-100000}
WINDOW=${WINDOW:-100ms/1s}
STAGES=${STAGES:-1 2 4}
CONFIGS=${CONFIGS:-none full noapi bare bare_noapi detach attached}
LONG_S=${LONG_S:-300}
BARE_S=${BARE_S:-60}
LONG_WINDOW=${LONG_WINDOW:-2s/20s}
LONG_ENV=${LONG_ENV:-} # more of slack's settings for the windowed run, e.g. SLACK_WINDOW_DETACH=1
PROBE_RUNS=${PROBE_RUNS:-3}
PROBE_N=${PROBE_N:-20000}

mkdir -p "$OUT"
exec > >(tee -a "$OUT/gpu-windows.log") 2>&1
export PYTHONUNBUFFERED=1
echo "== machine ($(date -u))"
nvidia-smi -L 2>&1 | head -2
make -j"$(nproc)" all > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
LIB=$PWD/build/libslack.so
W=/tmp/slack-gpu-windows-work
rm -rf "$W" && mkdir -p "$W"

part1() {
  echo "== 1. CUPTI detached and attached again (bare client)"
  CUDA=${CUDA_HOME:-/usr/local/cuda}
  cupti=$(ls "$CUDA"/extras/CUPTI/lib64/libcupti.so* "$CUDA"/lib64/libcupti.so* 2>/dev/null | head -1)
  cdir=$(dirname "${cupti:-$CUDA/lib64/x}")
  if "$CUDA/bin/nvcc" -O2 -arch=sm_90 -o "$W/reattach" scripts/workloads/reattach.cu \
    -I"$CUDA/include" -I"$CUDA/extras/CUPTI/include" -L"$cdir" -L"$CUDA/lib64" -lcupti -lcudart \
    > "$W/nvcc.log" 2>&1; then
    LD_LIBRARY_PATH=$cdir:${LD_LIBRARY_PATH:-} timeout 120 "$W/reattach" 1 > "$OUT/reattach.txt" 2>&1
    echo "   exit $?"
    cat "$OUT/reattach.txt"
  else
    echo "   nvcc failed:"; tail -5 "$W/nvcc.log"
  fi
}

part2() {
  echo "== 2. tiny-op loop, $PAIRS rounds of: $CONFIGS (windows: $WINDOW)"
  # bare CUPTI (scripts/bench/run.sh's floor), with the libcupti slack finds in a torch process
  BARE=$W/libbare_cupti.so
  CUDA=${CUDA_HOME:-/usr/local/cuda}
  gcc -O2 -shared -fPIC -I"$CUDA/include" -I"$CUDA/extras/CUPTI/include" -o "$BARE" \
    scripts/bench/bare_cupti.c -ldl > "$W/bare-build.log" 2>&1 || { echo "   bare_cupti build failed:"; tail -3 "$W/bare-build.log"; BARE=; }
  TORCH_CUPTI=$(python3 -c 'import glob, os, sys
print(next((p for d in sys.path for p in glob.glob(os.path.join(d, "nvidia", "*", "lib", "libcupti.so.13"))), ""))')
  echo "   bare_cupti: ${BARE:-none}; libcupti of torch: ${TORCH_CUPTI:-none found, the loader picks}"
  S=$OUT/windows-summary.txt
  printf 'round\tconfig\tus_per_op\trc\twindows\tkernels_in_windows\tjoined\tjoined_after_first\tkernels_after_first\tstderr_lines\treport_with_launch\treport_by_order\tstream_records\n' > "$S"
  for i in $(seq "$PAIRS"); do
    for cfg in $CONFIGS; do
      rm -rf "$W/tr" && mkdir -p "$W/tr"
      case $cfg in
        none) env_set="" ;;
        full) env_set="LD_PRELOAD=$LIB SLACK_OUTPUT=$W/tr" ;;
        noapi) env_set="LD_PRELOAD=$LIB SLACK_OUTPUT=$W/tr SLACK_API_RECORDS=0" ;;
        bare | bare_noapi)
          [ -n "$BARE" ] || continue
          env_set="LD_PRELOAD=$BARE BARE_CUPTI_TS=1${TORCH_CUPTI:+ BARE_CUPTI_LIB=$TORCH_CUPTI}"
          [ "$cfg" = bare_noapi ] && env_set="$env_set BARE_CUPTI_API=0" ;;
        detach) env_set="LD_PRELOAD=$LIB SLACK_OUTPUT=$W/tr SLACK_WINDOW=$WINDOW SLACK_WINDOW_DETACH=1" ;;
        attached) env_set="LD_PRELOAD=$LIB SLACK_OUTPUT=$W/tr SLACK_WINDOW=$WINDOW SLACK_WINDOW_DETACH=0" ;;
        *) echo "   unknown config $cfg"; continue ;;
      esac
      us=$(env $env_set N=$N timeout 120 python3 scripts/workloads/calibrate.py 2> "$W/err" |
        grep -o 'us_per_op=[0-9.]*' | cut -d= -f2; exit "${PIPESTATUS[0]}")
      rc=$?
      errn=$(grep -c . "$W/err")
      row="-\t-\t-\t-\t-"
      tr=$(ls "$W"/tr/*.slk 2>/dev/null | head -1)
      if [ -n "$tr" ]; then
        cp "$tr" "$OUT/windows-$cfg.slk"
        # the exit probe's medians, for part 4
        build/slack dump "$tr" 2>/dev/null | grep '^probe' | sed "s/^/part2 $i $cfg /" >> "$W/probes.txt"
        row=$(build/slack dump "$tr" | python3 -c '
import re, sys
hc, ks, ws = set(), [], []
for line in sys.stdin:
    kind = line.split(" ", 1)[0]
    f = dict(re.findall(r"(\w+)=(\S+)", line))
    if kind == "host" and "corr" in f: hc.add(f["corr"])
    elif kind == "kernel" and "start" in f: ks.append((int(f["start"]), f.get("corr")))
    elif kind == "window" and "flags" not in f: ws.append((int(f["start"]), int(f["end"])))
ws.sort()
nw = len(ws)
if not ws: ws = [(0, 1 << 62)]  # a full trace: one window
inw = [[] for _ in ws]
for k in ks:  # the last window opened before the kernel started (it may end after the window)
    i = max([j for j, (a, b) in enumerate(ws) if a <= k[0]], default=-1)
    if i >= 0 and k[0] <= ws[i][1] + 500000000: inw[i].append(k)
allk = [k for w in inw for k in w]
later = [k for w in inw[1:] for k in w]
print("\t".join(str(x) for x in (nw, len(allk), sum(k[1] in hc for k in allk),
      sum(k[1] in hc for k in later), len(later))))')
      fi
      # slack report's join, the order join included (analyzer/cls_order.c)
      rj="-\t-\t-"
      [ -n "$tr" ] && rj=$(build/slack report --json "$tr" 2>/dev/null | python3 -c '
import json, sys
try:
    lj = json.load(sys.stdin)["launch_join"]
    print("%s/%s\t%s" % (lj["with_launch"], lj["kernels"], lj.get("with_launch_by_order", "-")))
except (ValueError, KeyError):
    print("-\t-")')"\t"$(build/slack info --json "$tr" 2>/dev/null | python3 -c '
import json, sys
try:
    print(json.load(sys.stdin).get("stream_map_records", 0))
except ValueError:
    print("-")')
      printf '%s\t%s\t%s\t%s\t%b\t%s\t%b\n' "$i" "$cfg" "${us:--}" "$rc" "$row" "$errn" "$rj" >> "$S"
      [ "$errn" -gt 1 ] && sed 's/^/   stderr: /' "$W/err" | head -5
    done
  done
  column -t "$S" 2>/dev/null || cat "$S"
  # the median us per op of each config, and what slack adds over bare CUPTI with and without
  # API records (issue 13's target: noapi within 0.5 us per op of bare_noapi)
  python3 - "$S" <<'PY' | tee -a "$S"
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
us = {}
for r in rows:
    if len(r) > 2 and r[2] not in ("-", ""):
        us.setdefault(r[1], []).append(float(r[2]))
med = {c: statistics.median(v) for c, v in us.items()}
print("median us/op: " + ", ".join("%s %.3f (%d)" % (c, med[c], len(us[c])) for c in med))
for a, b in (("full", "bare"), ("noapi", "bare_noapi"), ("full", "noapi"), ("bare", "bare_noapi"),
             ("noapi", "none")):
    if a in med and b in med:
        print("%s - %s: %+.3f us/op" % (a, b, med[a] - med[b]))
PY
}

part3() {
  # production windows averaged over a long run (issue 13's row: 2 s every 20 s on a 5-minute
  # training run, at most 0.3%): scripts/workloads/train_steady.py untraced for BARE_S, under
  # SLACK_WINDOW=$LONG_WINDOW for LONG_S, untraced for BARE_S again (A B A: the two bare runs
  # bracket the drift); steps/s of each, and the windowed run against the bare runs' mean
  echo "== 3. $LONG_S s of training under SLACK_WINDOW=$LONG_WINDOW between two ${BARE_S} s bare runs"
  L=$OUT/windows-long.txt
  : > "$L"
  for part in bare1 windows bare2; do
    rm -rf "$W/long" && mkdir -p "$W/long"
    case $part in
      windows) d=$LONG_S env_set="LD_PRELOAD=$LIB SLACK_OUTPUT=$W/long SLACK_WINDOW=$LONG_WINDOW $LONG_ENV" ;;
      *) d=$BARE_S env_set="" ;;
    esac
    env $env_set DURATION_S="$d" timeout $((d + 120)) python3 scripts/workloads/train_steady.py \
      > "$W/long-$part.out" 2> "$W/long-$part.err"
    rc=$?
    r=$(sed -n 's/^RESULT .*steps_per_s=\([0-9.]*\).*/\1/p' "$W/long-$part.out")
    b=$(grep -c '^BUCKET' "$W/long-$part.out")
    echo "$part rc=$rc steps_per_s=${r:--} buckets=$b stderr_lines=$(grep -c . "$W/long-$part.err")" | tee -a "$L"
    cp "$W/long-$part.out" "$OUT/long-$part.out"
    t=$(ls "$W"/long/*.slk 2>/dev/null | head -1)
    [ -n "$t" ] && cp "$t" "$OUT/long-$part.slk" # the windows' joins, checked offline
    [ -n "$t" ] && build/slack info "$t" 2>&1 | grep -iE 'window|records|bytes' | head -8 | sed 's/^/   /' | tee -a "$L"
    [ -n "$t" ] && build/slack report --json "$t" 2>/dev/null | python3 -c 'import json, sys; print("   launch_join", json.load(sys.stdin).get("launch_join"))' | tee -a "$L"
  done
  python3 - "$L" <<'PY' | tee -a "$L" "$OUT/windows-summary.txt"
import re, sys
v = dict(re.findall(r"^(\w+) rc=\d+ steps_per_s=([0-9.]+)", open(sys.argv[1]).read(), re.M))
if all(k in v for k in ("bare1", "windows", "bare2")):
    a1, w, a2 = float(v["bare1"]), float(v["windows"]), float(v["bare2"])
    m = (a1 + a2) / 2
    print(f"long run: windows {w:.3f} steps/s against bare {a1:.3f} and {a2:.3f} (mean {m:.3f}): "
          f"slowdown {(1 - w / m) * 100:+.2f}% (bare runs differ by {abs(a1 - a2) / m * 100:.2f}%)")
else:
    print("long run: incomplete", v)
PY
}

part4() {
  # slack's own cost per launch on top of CUPTI, and the API records', measured inside each
  # traced process by the exit probe's alternating windows (hooked - on, on - api_off): the
  # processes of part 2 (if it ran) and PROBE_RUNS more of full and noapi
  echo "== 4. the exit probe: slack's hooks and CUPTI's API records per launch, in-process"
  P=$OUT/probes.txt
  touch "$W/probes.txt"
  for i in $(seq "$PROBE_RUNS"); do
    for cfg in full noapi; do
      rm -rf "$W/tr" && mkdir -p "$W/tr"
      env_set="LD_PRELOAD=$LIB SLACK_OUTPUT=$W/tr"
      [ "$cfg" = noapi ] && env_set="$env_set SLACK_API_RECORDS=0"
      env $env_set N=$PROBE_N timeout 120 python3 scripts/workloads/calibrate.py > /dev/null 2> "$W/err"
      tr=$(ls "$W"/tr/*.slk 2>/dev/null | head -1)
      [ -n "$tr" ] || { echo "   $cfg run $i: no trace"; sed 's/^/   stderr: /' "$W/err" | head -3; continue; }
      build/slack dump "$tr" 2>/dev/null | grep '^probe' | sed "s/^/part4 $i $cfg /" >> "$W/probes.txt"
    done
  done
  cp "$W/probes.txt" "$P"
  python3 - "$P" <<'PY' | tee -a "$OUT/windows-summary.txt"
import re, statistics, sys
rows = []
for line in open(sys.argv[1]):
    part, rnd, cfg, rest = line.split(" ", 3)
    f = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", rest)}
    f.update(part=part, round=rnd, config=cfg, off=re.search(r"off=(\w+)", rest).group(1))
    rows.append(f)
cols = ("on_ns", "off_ns", "records_off_ns", "hooked_ns", "api_off_ns")
print("probe per traced process (ns; hooks = hooked - on, api = on - api_off, cupti = on - off):")
print("\t".join(("part", "round", "config", "launches") + cols + ("hooks", "api", "cupti", "off")))
hooks, api, cupti = [], [], []
for r in rows:
    h = r["hooked_ns"] - r["on_ns"] if r.get("hooked_ns") else None
    a = r["on_ns"] - r["api_off_ns"] if r.get("api_off_ns") else None
    c = r["on_ns"] - r["off_ns"]
    if h is not None: hooks.append(h)
    if a is not None: api.append(a)
    cupti.append(c)
    print("\t".join(str(x) for x in [r["part"], r["round"], r["config"], r.get("launches", "-")] +
                    [r.get(k, "-") for k in cols] +
                    ["-" if h is None else h, "-" if a is None else a, c, r["off"]]))
def med(v):
    return "%d ns (%d processes, %d..%d)" % (statistics.median(v), len(v), min(v), max(v)) if v else "none"
print("median slack's hooks per launch (hooked - on), in-process: " + med(hooks))
print("median CUPTI's API records per launch (on - api_off), in-process: " + med(api))
print("median CUPTI per launch (on - off): " + med(cupti))
PY
}

# the parts in the order STAGES names them (STAGES="3 2": the long run first, whose one
# figure comes only at its end, so that a call cut short loses rows of part 2 instead)
for s in $STAGES; do
  case $s in 1 | 2 | 3 | 4) "part$s" ;; *) echo "unknown part $s" ;; esac
done
