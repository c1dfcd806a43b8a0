#!/usr/bin/env bash
# The accuracy run of slack's classifier (docs/ACCURACY.md), in one call on the H200:
#   1. build;
#   2. truth: every scenario of scripts/workloads/ (broken and fixed forms that differ in one cause)
#      untraced, REPEATS interleaved repeats of each form in one process, medians of the
#      programs' own per-step timers;
#   3. calibration: a tiny-op loop untraced and under libslack (CALIB_PAIRS interleaved pairs):
#      the tracer's cost per launch measured across processes, for comparison only (each trace
#      carries its own, measured in its process by libslack's exit probe, runtime/probe.c, which
#      `slack report` uses; the table's rows use that);
#   4. one traced run of each form (few steps) and `slack report --json` on it; then, budget
#      permitting, more traced runs of the broken forms (TRACED_RUNS in all): a process's host
#      speed varies from process to process on this machine, so slack's figure is the median
#      traced run's, with the spread;
#   5. in-process truth (INPROC_SCENARIOS, default "launch_storm mixed": the host-bound storm,
#      whose speed differs from process to process by more than the bar, and mixed, whose
#      serialization truth moved 1.2 ms between runs): INPROC_RUNS processes under libslack with
#      SLACK_DURATION_MS=INPROC_WINDOW_MS, each tracing the broken form inside the window, then,
#      with CUPTI detached, measuring broken and fixed untraced (scenario_common.py --inproc):
#      slack's figure and the truth from one process;
#   6. the table: per scenario, truth vs slack's per-step time for the class, and the what-if
#      against the measured fixed step, then the in-process rows; printed last and written to
#      $OUT/accuracy-table.md.
# $OUT gets: accuracy-table.md, accuracy-summary.json, accuracy-logs.tgz (logs, bench outputs,
# reports) and accuracy-traces.tgz (SCENARIO-FORM.slk: unpack into tests/data/accuracy/, then
# SLACK_GOLDEN_UPDATE=1 bash tests/golden/run.sh and read the diffs of the report-acc-* cases).
# Usage: bash scripts/accuracy.sh   (REPEATS=15, CALIB_PAIRS=5, TRACED_RUNS=3, BUDGET_S=560;
#        SCENARIOS="a b" runs only those; PIN_SCENARIOS, PIN_CPU: see below)
# Wall time on the H200: 444 s in GPU run 8 (build 7 s, truth 190, calibration 55, traced runs
# 190); each stage is skipped once the rest of BUDGET_S cannot hold it.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/slack-accuracy}
export OUT
REPEATS=${REPEATS:-15}
CALIB_PAIRS=${CALIB_PAIRS:-5}
TRACED_RUNS=${TRACED_RUNS:-3}
BUDGET_S=${BUDGET_S:-560}
T0=$(date +%s)
W=/tmp/slack-accuracy-work
rm -rf "$W"
mkdir -p "$W/tr" "$W/rep" "$OUT"
LOG=$W/accuracy.log
exec > >(tee -a "$LOG") 2>&1
export PYTHONUNBUFFERED=1
LIB=$ROOT/build/libslack.so
WL=$ROOT/scripts/workloads
SCENARIOS=${SCENARIOS:-data_starvation serialization copy_stall launch_storm healthy mixed}
# the launch-bound scenario and the calibration run with their main thread on one CPU
# (scenario_common.pin_main_thread): their speed varied 1.7x between processes unpinned
PIN_SCENARIOS=${PIN_SCENARIOS:-launch_storm}
INPROC_SCENARIOS=${INPROC_SCENARIOS-launch_storm mixed}
INPROC_RUNS=${INPROC_RUNS:-3}
INPROC_WINDOW_MS=${INPROC_WINDOW_MS:-8000}
INPROC_TAIL_MS=${INPROC_TAIL_MS:-3000}          # SLACK_TAIL_MS: the host's calls timed untraced after it
INPROC_TRACED_FORMS=${INPROC_TRACED_FORMS:-broken} # the forms traced in-process ("broken fixed": a pair for slack diff)
PIN_CPU=${PIN_CPU:-5}
# what the later stages keep of the budget: the truth stage stops while TRUTH_RESERVE_S is
# left (the traced runs need it), the traced runs while 25 s + INPROC_RESERVE_S is left
TRUTH_RESERVE_S=${TRUTH_RESERVE_S:-220}
INPROC_RESERVE_S=${INPROC_RESERVE_S:-0}
pin_of() { case " $PIN_SCENARIOS " in *" $1 "*) echo "$PIN_CPU" ;; esac; }
forms_of() {
  case $1 in
  healthy) echo healthy ;;
  mixed) echo broken fix_copy fix_sync ;;
  *) echo broken fixed ;;
  esac
}
# steps of the traced runs: few, to keep the traces small. No separate warm-up there: the
# harness's synchronize between warm-up and timed steps would be a stall of its own inside the
# steps slack finds; slack leaves the leading slow (warm-up) steps out by itself.
traced_steps() { case $1 in launch_storm) echo 45 ;; healthy) echo 20 ;; *) echo 25 ;; esac; }
elapsed() { echo $(($(date +%s) - T0)); }
left() { echo $((BUDGET_S - $(elapsed))); }
# the traces go back as SCENARIO-FORM.slk, the names of tests/data/accuracy/
save() {
  tar -C "$W" --exclude=tr --exclude=flat -czf "$OUT/accuracy-logs.tgz" . 2>/dev/null
  rm -rf "$W/flat"
  mkdir -p "$W/flat"
  for d in "$W"/tr/*/; do
    [ -d "$d" ] || continue
    k=0
    for f in "$d"*.slk; do
      [ -f "$f" ] || continue
      n=$(basename "$d")
      [ $k -gt 0 ] && n=$n.$k
      cp "$f" "$W/flat/$n.slk"
      k=$((k + 1))
    done
  done
  tar -C "$W/flat" -czf "$OUT/accuracy-traces.tgz" . 2>/dev/null
}

echo "== machine ($(date -u))"
nvidia-smi -L 2>&1 | head -4
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1
nproc

echo "== build ($(elapsed) s)"
if ! make -j"$(nproc)" all > "$W/build.log" 2>&1; then
  tail -30 "$W/build.log"
  echo "BUILD FAILED"
  save
  exit 1
fi

# ACC_STAGES picks the stages (default all): truth traced inproc (calibration: CALIB_PAIRS=0 skips)
ACC_STAGES=${ACC_STAGES:-truth traced inproc}
want() { case " $ACC_STAGES " in *" $1 "*) return 0 ;; esac; return 1; }
echo "== truth: untraced, $REPEATS interleaved repeats per form ($(elapsed) s)"
for s in $(want truth && echo "$SCENARIOS"); do
  if [ "$(left)" -lt "$TRUTH_RESERVE_S" ]; then echo "skip bench $s: budget"; continue; fi
  t=$(date +%s)
  SCENARIO_PIN_CPU=$(pin_of "$s") timeout 150 python3 "$WL/$s.py" --bench "$REPEATS" \
    > "$W/bench-$s.out" 2> "$W/bench-$s.err"
  rc=$?
  grep MEDIAN "$W/bench-$s.out"
  [ $rc -ne 0 ] && { echo "bench $s: exit $rc"; tail -5 "$W/bench-$s.err"; }
  echo "  ($s: $(($(date +%s) - t)) s)"
done
save

echo "== calibration: tracer cost per launch, $CALIB_PAIRS interleaved pairs ($(elapsed) s)"
for _ in $(seq "$CALIB_PAIRS"); do
  [ "$(left)" -lt 150 ] && { echo "skip calibration: budget"; break; }
  SCENARIO_PIN_CPU=$(pin_of launch_storm) timeout 40 python3 "$WL/calibrate.py" \
    >> "$W/calib-untraced.out" 2>> "$W/calib.err"
  rm -rf "$W/calib-tr"
  mkdir -p "$W/calib-tr"
  SCENARIO_PIN_CPU=$(pin_of launch_storm) SLACK_OUTPUT=$W/calib-tr LD_PRELOAD=$LIB \
    timeout 40 python3 "$WL/calibrate.py" \
    >> "$W/calib-traced.out" 2>> "$W/calib.err"
done
rm -rf "$W/calib-tr"
CAL_NS=$(python3 - "$W/calib-untraced.out" "$W/calib-traced.out" <<'PY'
import re, statistics, sys
def med(p):
    try:
        v = [float(m) for m in re.findall(r"us_per_op=([0-9.]+)", open(p).read())]
    except OSError:
        v = []
    return statistics.median(v) if v else None
u, t = med(sys.argv[1]), med(sys.argv[2])
# the hooks' own ~50 ns are counted separately by slack
print(max(0, int(round((t - u) * 1000 - 50))) if u is not None and t is not None else "")
PY
)
echo "untraced: $(grep -o 'us_per_op=[0-9.]*' "$W/calib-untraced.out" | tr '\n' ' ')"
echo "traced:   $(grep -o 'us_per_op=[0-9.]*' "$W/calib-traced.out" | tr '\n' ' ')"
CAL_ARG=()
if [ -n "$CAL_NS" ]; then CAL_ARG=(--cupti-call-ns "$CAL_NS"); fi
# the table uses each trace's own exit probe; the calibration's figure gives .cal.json reports
echo "tracer cost per launch beyond the hooks: ${CAL_NS:-unknown} ns"
save

echo "== traced runs ($(elapsed) s)"
# traced NAME FORM TAG: one traced run into tr/TAG, reports into rep/TAG.*
traced() {
  local s=$1 f=$2 tag=$3 d=$W/tr/$3
  mkdir -p "$d"
  SCENARIO_PIN_CPU=$(pin_of "$s") SLACK_OUTPUT=$d LD_PRELOAD=$LIB STEPS=$(traced_steps "$s") \
    WARMUP=0 timeout 90 \
    python3 "$WL/$s.py" --form "$f" > "$W/traced-$tag.out" 2> "$W/traced-$tag.err"
  local rc=$?
  echo "$tag: exit $rc; $(grep RESULT "$W/traced-$tag.out")"
  local files
  files=$(ls -1 "$d"/*.slk 2>/dev/null)
  if [ -z "$files" ]; then
    echo "  no trace"
    tail -5 "$W/traced-$tag.err"
    return
  fi
  # shellcheck disable=SC2086 # one argument per trace file
  build/slack report --json $files > "$W/rep/$tag.json" 2> "$W/rep/$tag.err"
  # shellcheck disable=SC2086
  build/slack report $files > "$W/rep/$tag.txt" 2>&1
  # shellcheck disable=SC2086
  build/slack report --json "${CAL_ARG[@]}" $files > "$W/rep/$tag.cal.json" 2>&1
  grep "tracer's own cost" "$W/rep/$tag.txt" | sed 's/^ */  /' 
}
for s in $(want traced && echo "$SCENARIOS"); do
  for f in $(forms_of "$s"); do
    if [ "$(left)" -lt $((25 + INPROC_RESERVE_S)) ]; then echo "skip traced $s $f: budget"; continue; fi
    traced "$s" "$f" "$s-$f"
  done
done
save
# more runs of the forms whose figures the table uses (the broken ones), while the budget lasts
for k in $(want traced && seq 2 "$TRACED_RUNS"); do
  for s in $SCENARIOS; do
    [ "$s" = healthy ] && continue
    if [ "$(left)" -lt $((25 + INPROC_RESERVE_S)) ]; then echo "skip traced $s broken run $k: budget"; continue; fi
    traced "$s" broken "$s-broken.r$k"
  done
done
save

echo "== in-process truth: $INPROC_RUNS processes each of $INPROC_SCENARIOS ($(elapsed) s)"
for k in $(want inproc && seq "$INPROC_RUNS"); do
  for s in $INPROC_SCENARIOS; do
    case " $SCENARIOS " in *" $s "*) ;; *) continue ;; esac
   for form in $INPROC_TRACED_FORMS; do
    if [ "$(left)" -lt $((INPROC_WINDOW_MS / 1000 + 45)) ]; then echo "skip in-process $s $form run $k: budget"; continue; fi
    tag=$s-inproc.r$k
    [ "$form" = broken ] || tag=$s-inproc-$form.r$k
    d=$W/tr/$tag
    mkdir -p "$d"
    SCENARIO_PIN_CPU=$(pin_of "$s") SLACK_DURATION_MS=$INPROC_WINDOW_MS SLACK_TAIL_MS=$INPROC_TAIL_MS \
      SLACK_OUTPUT=$d LD_PRELOAD=$LIB TRACED_STEPS=$(traced_steps "$s") \
      timeout $((INPROC_WINDOW_MS / 1000 + 120)) \
      python3 "$WL/$s.py" --inproc "$REPEATS" --form "$form" > "$W/traced-$tag.out" 2> "$W/traced-$tag.err"
    echo "$tag: exit $?; $(grep -E 'INPROC_MEDIAN|phase=traced' "$W/traced-$tag.out" | tr '\n' ' ')"
    files=$(ls -1 "$d"/*.slk 2>/dev/null)
    [ -z "$files" ] && { echo "  no trace"; tail -3 "$W/traced-$tag.err"; continue; }
    # shellcheck disable=SC2086
    build/slack report --json $files > "$W/rep/$tag.json" 2> "$W/rep/$tag.err"
    # shellcheck disable=SC2086
    build/slack report $files > "$W/rep/$tag.txt" 2>&1
   done
  done
done
save

echo "== table ($(elapsed) s)"
python3 - "$W" "${CAL_NS:-}" "$REPEATS" > "$OUT/accuracy-table.md" 2> "$W/table.err" <<'PY'
import json, os, re, statistics, sys

W, cal, repeats = sys.argv[1], sys.argv[2], sys.argv[3]
MS = 1e6

def medians(s):
    out = {}
    try:
        text = open(f"{W}/bench-{s}.out").read()
    except OSError:
        return out
    for m in re.finditer(r"MEDIAN scenario=\S+ form=(\S+) step_ms=([0-9.]+) min=([0-9.]+) max=([0-9.]+)", text):
        out[m.group(1)] = (float(m.group(2)), float(m.group(3)), float(m.group(4)))
    return out

def report(s, f):
    return report_tag(f"{s}-{f}")

def report_tag(tag):
    try:
        j = json.load(open(f"{W}/rep/{tag}.json"))
    except (OSError, ValueError):
        return None
    gpus = j.get("gpus") or []
    return max(gpus, key=lambda g: g.get("busy_ns", 0)) if gpus else None

def traced_ms(tag):
    try:
        m = re.search(r"step_ms=([0-9.]+)", open(f"{W}/traced-{tag}.out").read())
        return float(m.group(1)) if m else None
    except OSError:
        return None

def fmt(v, nd=2):
    return "n/a" if v is None else f"{v:.{nd}f}"

def err(a, b):
    return None if a is None or b in (None, 0) else (a - b) / b * 100

def verdict(e, bar=10):
    return "n/a" if e is None else ("ok" if abs(e) <= bar else "MISS")

rows, details, summary = [], [], {"cupti_call_ns": cal or None, "repeats": repeats, "rows": []}
# scenario, class label, keys summed, broken form, fixed form, what-if key
cases = [
    ("data_starvation", "data_starvation", ["data_starvation"], "broken", "fixed", "data_starvation"),
    ("serialization", "serialization", ["serialization"], "broken", "fixed", "serialization"),
    ("copy_stall", "copy + copy_stall", ["copy", "copy_stall"], "broken", "fixed", "copy_and_copy_stall"),
    ("launch_storm", "launch_overhead", ["launch_overhead"], "broken", "fixed", "launch_overhead"),
    ("mixed", "copy + copy_stall", ["copy", "copy_stall"], "broken", "fix_copy", "copy_and_copy_stall"),
    ("mixed", "serialization", ["serialization"], "broken", "fix_sync", "serialization"),
]
def run_tags(s, f):
    """The traced runs of a form: SCENARIO-FORM, then SCENARIO-FORM.r2, .r3 ..."""
    extra = sorted((t[:-5] for t in os.listdir(f"{W}/rep")
                    if re.fullmatch(re.escape(f"{s}-{f}") + r"\.r[0-9]+\.json", t)),
                   key=lambda t: int(t.rsplit(".r", 1)[1]))
    return [f"{s}-{f}"] + extra

def figures(tag, keys, wkey):
    g = report_tag(tag)
    if not g or not g["steps"]["count"]:
        return None
    per = g["steps"]["per_step_ns"]
    shared = g["steps"].get("per_step_shared_ns", {})  # chained causes: what it shares too
    got = sum(per[k] + shared.get(k, 0) for k in keys) / MS
    got_corr = got
    if keys == ["launch_overhead"]:
        # the point at the untraced tail's pace where the trace has a tail (SLACK_TAIL_MS),
        # else the replay less the tracer's measured cost (an upper bound)
        tail = g["steps"].get("launch_overhead_untraced_tail_per_step_ns") or 0
        got_corr = (tail or g["steps"]["launch_overhead_corrected_per_step_ns"]) / MS
    wi = g.get("whatif", {}).get(wkey)
    pr = g.get("tracer", {}).get("probe") or {}
    return dict(tag=tag, got=got, got_corr=got_corr,
                probe_ns=(pr["launch_call_on_ns"] - pr["launch_call_off_ns"]) if pr else None,
                whatif=wi["step_ns_if_removed"] / MS if wi else None,
                step=g["steps"]["step_ns"] / MS,
                replay_err=g["replay"]["error"] * 100 if g["replay"]["ok"] else None)

for s, label, keys, bf, ff, wkey in cases:
    med = medians(s)
    b, f = med.get(bf), med.get(ff)
    truth = b[0] - f[0] if b and f else None
    runs = [x for x in (figures(t, keys, wkey) for t in run_tags(s, bf)) if x]
    # the median run by slack's figure (the lower middle one of an even count)
    runs.sort(key=lambda x: x["got_corr"])
    pick = runs[(len(runs) - 1) // 2] if runs else {}
    got, got_corr = pick.get("got"), pick.get("got_corr")
    whatif, step, replay_err = pick.get("whatif"), pick.get("step"), pick.get("replay_err")
    e = err(got_corr, truth)
    we = err(whatif, f[0] if f else None)
    shown = fmt(got) if got_corr == got else f"{fmt(got)} ({fmt(got_corr)} without tracer)"
    if len(runs) > 1:
        shown += (f", median of {len(runs)} runs ({fmt(runs[0]['got_corr'])}-"
                  f"{fmt(runs[-1]['got_corr'])})")
    if keys == ["launch_overhead"]:
        shown += "; probe ns/launch: " + ", ".join(
            str(x["probe_ns"]) if x["probe_ns"] is not None else "none" for x in runs)
    rows.append(f"| {s} | {label} | {fmt(b[0] if b else None)} | {fmt(f[0] if f else None)} | "
                f"{fmt(truth)} | {shown} | {fmt(e, 1)}% | {verdict(e)} | {fmt(whatif)} | "
                f"{fmt(we, 1)}% | {verdict(we, 15)} | {fmt(step)} | {fmt(replay_err, 2)}% |")
    summary["rows"].append(dict(scenario=s, cls=label, broken_ms=b[0] if b else None,
                                fixed_ms=f[0] if f else None, truth_ms=truth, slack_ms=got,
                                slack_corrected_ms=got_corr, error_pct=e, whatif_ms=whatif,
                                whatif_error_pct=we, traced_step_ms=step,
                                replay_error_pct=replay_err, trace=pick.get("tag"),
                                runs=runs))

# the healthy job: no stall class above 2% of its step
hg = report("healthy", "healthy")
hmed = medians("healthy").get("healthy")
healthy_row = "| healthy | (all idle classes) | " + fmt(hmed[0] if hmed else None) + " | - | - | "
if hg and hg["steps"]["count"]:
    st = hg["steps"]["step_ns"]
    idle = ["serialization", "copy_stall", "data_starvation", "launch_overhead", "other"]
    shares = {k: hg["steps"]["per_step_ns"][k] / st * 100 for k in idle}
    worst = max(shares, key=shares.get)
    ok = all(v <= 2 for v in shares.values())
    healthy_row += (f"largest: {worst} {shares[worst]:.2f}% of the step | - | "
                    f"{'ok' if ok else 'MISS'} | - | - | - | {fmt(st / MS)} | "
                    f"{fmt(hg['replay']['error'] * 100 if hg['replay']['ok'] else None, 2)}% |")
    summary["healthy"] = dict(step_ms=st / MS, shares_pct=shares, ok=ok)
else:
    healthy_row += "n/a | - | n/a | - | - | - | n/a | n/a |"

print("# slack accuracy run\n")
print(f"Truth: per-step time of the broken form minus the fixed form, untraced, medians of "
      f"{repeats} interleaved repeats (the programs' own timers). slack: one traced run of the "
      f"broken form, `slack report --json`, per-step time of the class (steps found by slack). "
      f"What-if: slack's step_ns_if_removed for the class (replay of the recorded graph without "
      f"the class and without the tracer's cost) against the measured fixed step. Where the broken "
      f"form was traced more than once, the row is the run with the median figure, and its range "
      f"is given. Tracer cost per launch: each trace's own, measured in its process by libslack's "
      f"exit probe (calibrate.py's cross-process figure, not used: {cal or 'n/a'} ns).\n")
print("| scenario | class | broken ms | fixed ms | truth ms | slack ms | error | within 10% | "
      "what-if ms | what-if error | within 15% (issue 11's bar) | traced step ms | replay error |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print(r)
print(healthy_row)
print()

# in-process truth: each process measured its own truth untraced, then was traced
inproc = sorted(t[:-5] for t in os.listdir(f"{W}/rep") if re.fullmatch(r".+-inproc\.r[0-9]+\.json", t))
if inproc:
    print("## In-process truth (truth and trace from one process)\n")
    print("Each process traced the broken form inside libslack's window (SLACK_DURATION_MS), then, "
          "with CUPTI detached, ran every form untraced. Truth = its own medians: broken - the "
          "form that fixes only that cause.\n")
    print("| process | class | broken ms | fixed ms | truth ms | slack recorded ms | slack "
          "without tracer ms (the tail's point where there is a tail) | error | what-if ms | "
          "what-if error | probe ns/launch | traced step ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    errs = []
    for tag in inproc:
        s = tag.split("-inproc")[0]
        try:
            text = open(f"{W}/traced-{tag}.out").read()
        except OSError:
            continue
        med = {m.group(1): float(m.group(2)) for m in
               re.finditer(r"INPROC_MEDIAN scenario=\S+ form=(\S+) step_ms=([0-9.]+)", text)}
        # each cause of the scenario against the form that fixes only it (cases above)
        for cs, label, keys, bf, ff, wkey in cases:
            if cs != s:
                continue
            b, f = med.get(bf), med.get(ff)
            truth = b - f if b is not None and f is not None else None
            fig = figures(tag, keys, wkey)
            got = fig["got"] if fig else None
            got_corr = fig["got_corr"] if fig else None
            e = err(got_corr, truth)
            if e is not None:
                errs.append(e)
            wi = fig["whatif"] if fig else None
            print(f"| {tag} | {label} | {fmt(b)} | {fmt(f)} | {fmt(truth)} | {fmt(got)} | "
                  f"{fmt(got_corr)} | {fmt(e, 1)}% | {fmt(wi)} | {fmt(err(wi, f), 1)}% | "
                  f"{fig['probe_ns'] if fig else 'n/a'} | {fmt(fig['step'] if fig else None)} |")
            summary.setdefault("inproc", []).append(dict(
                tag=tag, cls=label, broken_ms=b, fixed_ms=f, truth_ms=truth, slack_ms=got,
                slack_corrected_ms=got_corr, error_pct=e, whatif_ms=wi,
                probe_ns=fig["probe_ns"] if fig else None))
    if errs:
        print(f"\nMedian error over {len(errs)} rows: {statistics.median(errs):+.1f}% "
              f"({min(errs):+.1f} to {max(errs):+.1f}).")
    print()
print("## Per scenario (traced runs): per-step ms by class, what-if (bound / replay / replay "
      "without tracer)\n")
classes = ["compute", "communication", "copy", "serialization", "copy_stall", "data_starvation",
           "launch_overhead", "other"]
for s in ["data_starvation", "serialization", "copy_stall", "launch_storm", "healthy", "mixed"]:
    forms = {"healthy": ["healthy"], "mixed": ["broken", "fix_copy", "fix_sync"]}.get(s, ["broken", "fixed"])
    med = medians(s)
    for f, tag in [(f, t) for f in forms for t in run_tags(s, f)]:
        g = report_tag(tag)
        m = med.get(f)
        head = (f"- {tag}: untraced {fmt(m[0] if m else None)} ms (min {fmt(m[1] if m else None)}, "
                f"max {fmt(m[2] if m else None)}); traced program timer {fmt(traced_ms(tag))} ms")
        if not g:
            print(head + "; no report")
            continue
        sp = g["steps"]
        print(head + f"; slack: {sp['count']} steps ({sp['source']}) of {fmt(sp['step_ns'] / MS)} ms, "
              f"replay error {fmt(g['replay']['error'] * 100, 3)}%, without tracer "
              f"{fmt(g['replay']['corrected_step_ns'] / MS)} ms")
        print("  - per step: " + ", ".join(f"{c} {sp['per_step_ns'][c] / MS:.3f}" for c in classes
                                          if sp["per_step_ns"][c]))
        wi = g.get("whatif", {})
        def ms(v):
            return "n/a" if v is None else f"{v / MS:.2f}"
        print("  - what-if: " + ", ".join(
            f"{c} {ms(wi[c]['bound_ns'])}/{ms(wi[c]['replay_ns'])}/{ms(wi[c]['step_ns_if_removed'])}"
            for c in classes + ["copy_and_copy_stall"] if c in wi))
        print(f"  - tracer: {g['tracer_overhead_ns'] / MS:.2f} ms total, "
              f"{g['tracer']['in_idle_ns'] / MS:.2f} ms in idle gaps; other: " +
              ", ".join(f"{k} {v / MS:.2f}" for k, v in g["other_ns"].items() if v))
json.dump(summary, open(os.path.join(os.environ.get("OUT", W), "accuracy-summary.json"), "w"), indent=1)
PY
[ -s "$W/table.err" ] && { echo "table errors:"; cat "$W/table.err"; }
save
echo "== done in $(elapsed) s"
cat "$OUT/accuracy-table.md"
