#!/usr/bin/env python3
"""The holdout table (docs/ACCURACY.md "Holdout workloads"): slack against the truth on loops the
classifier was not tuned on (scripts/gpu-holdout.sh, scripts/workloads/holdout_*.py).

For each traced process TAG (TAG.out: its phase=traced line and its untraced rounds; its trace
TAG.slk or tr/TAG/*.slk): the truth rows of its workload (ROWS in the workload's source) whose
broken form is the traced one. Truth for a row: the median over the rounds of step(broken) -
step(without the cause), paired by round (each round's step: its mean between two
synchronize() calls), with the rounds' spread; slack: `slack report --json` on the trace, the
class per step plus the time it shares with another class (launch overhead: the point at the
untraced tail's pace where the trace has one); the what-if: step_ns_if_removed for the class
against the measured step without the cause; all stalls: against the `fixed` form (every stall
but launch overhead where the fixed form keeps its launches: no row of the workload holds launch
overhead against it); and where the rounds have a form that replays fixed's step from a CUDA
graph (a row of fixed's own launch overhead against it), every stall fixed against that form
too. Each truth twice: the median over the rounds, and round 0 alone (the
traced form's first untraced round follows the trace at once and is the one its untraced tail
timed: this VM's CPU speed drifts by +-25% for seconds, and a launch- or host-bound step with
it; round 0 is the pace nearest the trace's). Top stall:
slack's verdict against the row with the largest truth ("none" where that saves under 2% of the
step without it: the healthy bar); a form that is `fixed` with one cause added takes fixed's
launch overhead against a graph-captured form as its own (row "launch overhead as fixed's"),
and VERDICT_ROWS (label, form, broken, without) give a cause's saving where the form's rows do
not measure it (the verdict's truth only). No all-stalls row for a form that is a fix beyond
`fixed` (BEYOND_FIXED, or a row measuring `fixed` against it) or whose cause is no stall class.
A traced `fixed` form: no stall class above 2% of its step.

Usage: python3 scripts/holdout_table.py [SLACK [DIR]]
HOLDOUT_REPORT_ARGS: more options for `slack report` ("--no-tail": the table of the traces as if
recorded without an untraced tail, their host pace assumed)   (DIR: an OUT of gpu-holdout.sh, or
tests/data/holdout/runNN with TAG.slk and TAG.out)"""
import ast, glob, json, os, re, statistics, subprocess, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SLACK = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "slack")
D = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "tests", "data", "holdout")
STALLS = ("serialization", "copy_stall", "data_starvation", "launch_overhead")
CAUSE_LABELS = ("serialization", "data_starvation", "launch_overhead", "copy + copy_stall",
                "copy_stall")
WL = os.path.join(ROOT, "scripts", "workloads")
EXTRA = os.environ.get("HOLDOUT_REPORT_ARGS", "").split()


def lists_of(workload):
    """The module-level lists of a workload, read from its source (the analysis machine has no
    torch): {name: list} of TRUTH_ROWS, ROWS, HINT_ROWS, BEYOND_FIXED and VERDICT_ROWS where it
    has them"""
    path = os.path.join(WL, workload + ".py")
    if not os.path.exists(path):
        return {}
    found = {}
    for node in ast.parse(open(path).read()).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
            for t in node.targets:
                if getattr(t, "id", "") in ("TRUTH_ROWS", "ROWS", "HINT_ROWS", "BEYOND_FIXED",
                                            "VERDICT_ROWS"):
                    found[t.id] = ast.literal_eval(node.value)
    return found


def steps_per_iter(workload):
    """STEPS_PER_ITER of a workload (default 1): the optimizer steps in one of its loop's
    iterations, where an iteration holds several (PPO's update: 4 epochs of 4 minibatches).
    slack counts optimizer steps as its steps there (the optimizer's kernels anchor a step), so
    the truths are read per optimizer step: each round's ms per iteration over this"""
    path = os.path.join(WL, workload + ".py")
    if not os.path.exists(path):
        return 1
    for node in ast.parse(open(path).read()).body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                and any(getattr(t, "id", "") == "STEPS_PER_ITER" for t in node.targets)):
            return int(node.value.value)
    return 1


def rows_of(workload):
    """TRUTH_ROWS, else ROWS, of a workload; a list of rows, not a workload's own constant of
    that name"""
    found = lists_of(workload)
    return found.get("TRUTH_ROWS", found.get("ROWS", []))


def beyond_fixed(workload, form):
    """Whether a form is a fix beyond `fixed` (a graph captured, the model compiled, shapes
    bucketed): a truth row or hint row measures `fixed` against it, or the workload names it in
    BEYOND_FIXED. Such a form is no broken one: no all-stalls row."""
    found = lists_of(workload)
    return (form in found.get("BEYOND_FIXED", [])
            or any(r[2] == "fixed" and r[3] == form for r in rows_of(workload))
            or any(r[1] == "fixed" and r[2] == form for r in found.get("HINT_ROWS", [])))


def launch_ms(st, sh):
    """slack's launch overhead per step, ms: the point at the untraced tail's (or the assumed)
    pace where the trace has one, else the range's top (steps, per_step_shared_ns)"""
    tail = (st.get("launch_overhead_untraced_tail_per_step_ns") or
            st.get("launch_overhead_assumed_pace_per_step_ns") or 0)
    return (tail or st["launch_overhead_corrected_per_step_ns"] + sh.get("launch_overhead", 0)) / 1e6


def rounds(text):
    """{form: {round: step ms}} of the untraced rounds, and the traced line's fields"""
    got, traced = {}, {}
    for line in text.splitlines():
        m = re.match(r"RESULT scenario=\S+ form=(\S+) step_ms=([0-9.]+) steps=(\d+) repeat=(\d+)", line)
        if m:
            got.setdefault(m.group(1), {})[int(m.group(4))] = float(m.group(2))
        m = re.match(r"RESULT scenario=\S+ form=(\S+) step_ms=([0-9.]+) steps=(\d+) .*phase=traced", line)
        if m:
            traced = dict(form=m.group(1), step_ms=float(m.group(2)), steps=int(m.group(3)))
    return got, traced


def paired(got, a, b):
    ks = sorted(set(got.get(a, {})) & set(got.get(b, {})))
    return [got[a][k] - got[b][k] for k in ks]


def pct(x, t):
    return f"{(x - t) / t * 100:+.1f}%" if t and abs(t) > 1e-9 else "–"


def trace_of(tag):
    for pat in (os.path.join(D, tag + ".slk"), os.path.join(D, "tr", tag, "*.slk")):
        files = sorted(glob.glob(pat))
        if files:
            return files
    return []


def main():
    # every process of a workload with truth rows (holdout_*, and the suite's resnet_seed and
    # mixed run in-process the same way)
    # (TAG.rec.out: RECORD=cli's recorded process, whose truth is TAG.out's)
    outs = sorted(o for o in glob.glob(os.path.join(D, "*.out"))
                  if "-" in os.path.basename(o) and not o.endswith(".rec.out")
                  and rows_of(os.path.basename(o).rsplit("-", 1)[0]))
    if not outs:
        sys.exit(f"no process of a workload with truth rows (TAG.out) in {D}")
    print("| process | cause | truth ms: median (rounds) / round 0 | slack ms | error: median / "
          "round 0 | step without it ms: median / round 0 | what-if ms | error: median / round 0 | "
          "top stall: slack / truth | steps |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    summary = []
    for out in outs:
        tag = os.path.basename(out)[:-4]
        workload, form = tag.rsplit("-", 1)
        got, traced = rounds(open(out).read())
        k = steps_per_iter(workload)
        if k > 1:  # every figure per optimizer step, as slack's steps are
            got = {f: {r: ms / k for r, ms in v.items()} for f, v in got.items()}
            if "steps" in traced:
                traced["steps"] *= k
        files = trace_of(tag)
        if not files or not got:
            print(f"| {tag} | (no trace or no rounds) | | | | | | | | |")
            continue
        r = subprocess.run([SLACK, "report", "--json"] + EXTRA + files, capture_output=True,
                           text=True)
        if r.returncode != 0:
            print(f"| {tag} | (report failed: {r.stderr.strip()[:60]}) | | | | | | | | |")
            continue
        g = json.loads(r.stdout)["gpus"][0]
        st = g["steps"]
        per, sh = st["per_step_ns"], st.get("per_step_shared_ns", {})
        steps = f"{st['count']} of {traced.get('steps', '?')} traced"
        verdict = g.get("verdict", {}).get("class", "none")
        nxt = g.get("verdict", {}).get("next", {}).get("class")
        med = {f: statistics.median(v.values()) for f, v in got.items()}
        mine = [row for row in rows_of(workload) if row[2] == form]
        truths, share = {}, {}
        for label, keys, broken, without, wkey in mine:
            p = paired(got, broken, without)
            if p:
                truths[label] = statistics.median(p)
                share[label] = truths[label] / med[without] if med[without] else 0.0
        # a broken form that is `fixed` with a cause added (its rows all against `fixed`) keeps
        # fixed's launches: where a row measures fixed's launch overhead against a graph-captured
        # form, that saving is this form's too, for the verdict's truth (GPU runs 57, 88, 93: the
        # AMP loop's scaler and nancheck forms, a sync on a launch-bound step)
        inherited = None
        if (form != "fixed" and mine and all(r[3] == "fixed" for r in mine)
                and "launch_overhead" not in truths):
            for label, keys, broken, without, wkey in rows_of(workload):
                p = paired(got, "fixed", without)
                if label == "launch_overhead" and broken == "fixed" and p and med.get(without):
                    inherited = (statistics.median(p), min(p), max(p), without)
                    truths["launch_overhead"] = inherited[0]
                    share["launch_overhead"] = inherited[0] / med[without]
                    break
        # the verdict's truth for a cause this form's rows do not measure, where a workload says
        # which forms' difference is that cause's fix here (VERDICT_ROWS: label, form, broken,
        # without; the offload loop's round trip, whose fix, the optimizer on the GPU, leaves no
        # copy to fix either): for the top stall only, no class or what-if row
        vrows = []
        for label, vform, broken, without in lists_of(workload).get("VERDICT_ROWS", []):
            p = paired(got, broken, without)
            if vform == form and p and label not in truths and med.get(without):
                truths[label] = statistics.median(p)
                share[label] = truths[label] / med[without]
                vrows.append((label, broken, without, p))
        top_truth = max(truths, key=truths.get) if truths else "none"
        # a cause whose fix saves under 2% of the step does not make the form broken (the
        # healthy bar: no stall above 2% of the step): no stall is the truth's top then
        if truths and share[top_truth] < 0.02:
            top_truth = "none"
        for label, keys, broken, without, wkey in mine:
            p = paired(got, broken, without)
            if not p:
                continue
            tr = statistics.median(p)
            sl = sum(per[k] + sh.get(k, 0) for k in keys) / 1e6
            if keys == ["launch_overhead"]:
                sl = launch_ms(st, sh)
            # data starvation without the tracer where the loop runs at its producer's pace
            # (classify.c: that pace less the step without the waits), as the verdict gives it
            if keys == ["data_starvation"] and st.get("data_starvation_untraced_per_step_ns"):
                sl = max(sl, st["data_starvation_untraced_per_step_ns"] / 1e6)
            wi = g["whatif"][wkey]["step_ns_if_removed"] / 1e6
            b0, w0 = got[broken].get(0), got[without].get(0)
            t0 = b0 - w0 if b0 is not None and w0 is not None else None
            r0 = f"{t0:.2f}" if t0 is not None else "–"
            w0s = f"{w0:.2f}" if w0 is not None else "–"
            print(f"| {tag} | {label} | {tr:.2f} ({min(p):.2f}..{max(p):.2f}) / {r0} | {sl:.2f} | "
                  f"{pct(sl, tr)} / {pct(sl, t0)} | {med[without]:.2f} / {w0s} | {wi:.2f} | "
                  f"{pct(wi, med[without])} / {pct(wi, w0)} | {verdict} / {top_truth} | {steps} |")
            summary.append((tag, label, tr, sl, wi, med[without], verdict, top_truth))
        if nxt and mine:  # the stall after the verdict's (the report's "then:")
            print(f"| {tag} | then: the stall after the verdict's | – | {nxt} | – | – | – | – | "
                  f"{verdict} / {top_truth} | {steps} |")
        for label, broken, without, p in vrows:
            print(f"| {tag} | {label}: the verdict's truth, step({broken}) - step({without}) | "
                  f"{statistics.median(p):.2f} ({min(p):.2f}..{max(p):.2f}) | – | – | – | – | – | "
                  f"{verdict} / {top_truth} | {steps} |")
        if inherited:
            sl = launch_ms(st, sh)
            tr, lo, hi, without = inherited
            print(f"| {tag} | launch overhead as fixed's (fixed less {without}: the same launches) | "
                  f"{tr:.2f} ({lo:.2f}..{hi:.2f}) | {sl:.2f} | {pct(sl, tr)} | – | – | – | "
                  f"{verdict} / {top_truth} | {steps} |")
        # the tracer's correction: the replay without it against the traced form's own untraced
        # round 0, the one the untraced tail timed (SLACK_TAIL_MS; the form traced runs first in
        # the rounds), and the rounds' median (this VM's CPU speed drifts by +-25% for seconds)
        corr = g.get("replay", {}).get("corrected_step_ns", 0) / 1e6
        r0 = got.get(form, {}).get(0)
        if corr and r0:
            print(f"| {tag} | step without the tracer | {r0:.2f} (round 0: the tail's); median "
                  f"{med[form]:.2f} | {corr:.2f} | {pct(corr, r0)} | – | – | – | – | {steps} |")
        busy = sum(per[k] for k in ("compute", "communication", "copy")) / 1e6
        if form == "fixed":
            # the fixed form can still be launch-bound (an eager transformer): its GPU idle
            # untraced is its step less the GPU's busy time (kernels are not slowed by tracing)
            worst = max(STALLS, key=lambda k: per[k])
            share = per[worst] / st["step_ns"] * 100 if st["step_ns"] else 0
            tail = (st.get("launch_overhead_untraced_tail_per_step_ns") or 0) / 1e6
            # without a point at the tail's pace (no tail): the range's top, an upper bound
            basis = "the tail's pace"
            if "launch_overhead_assumed_pace_per_step_ns" in st:
                tail = st["launch_overhead_assumed_pace_per_step_ns"] / 1e6
                basis = "the assumed pace: no tail"
            elif "launch_overhead_untraced_tail_per_step_ns" not in st:
                tail = (st.get("launch_overhead_corrected_per_step_ns") or 0) / 1e6
                basis = "at most: no tail's point"
            print(f"| {tag} | largest stall (traced) | – | {per[worst] / 1e6:.2f} ({worst}) | "
                  f"{share:.1f}% of the step | {med.get('fixed', 0):.2f} | – | – | {verdict} / – | {steps} |")
            if r0:
                idle = r0 - busy
                print(f"| {tag} | launch overhead: idle untraced (round 0 less GPU busy {busy:.2f}) | "
                      f"{idle:.2f} | {tail:.2f} ({basis}) | {pct(tail, idle)} | – | – | – | – | {steps} |")
        elif ("fixed" in got and "fixed" != form and not beyond_fixed(workload, form)
              and all(label in CAUSE_LABELS for label, *_ in mine)):
            # (a form that is a fix beyond `fixed`, as a graph-captured one: no such row; nor
            # one whose measured cause is no stall class, as cuDNN's autotuning, `other`: the
            # stalls' fixes leave it)
            # every stall fixed, against the fixed form; a fixed form that keeps its launches
            # (no row of the workload has launch overhead's truth against it: no graph captured)
            # is held against every stall fixed but launch overhead
            graphs = any(r[0] == "launch_overhead" and r[3] == "fixed" for r in rows_of(workload))
            key, label = (("all_stalls", "all stalls") if graphs else
                          ("all_but_launch_overhead", "all stalls but launch overhead"))
            # a fixed form that keeps its launches beside a form that replays its step from a
            # graph (a row of fixed's launch overhead against it, in this run's rounds): every
            # stall fixed is that form (holdout_augment, whose own cause is the launches of a
            # per-sample loop and whose batched fixed form is launch-bound itself: GPU run 142)
            full = next((r[3] for r in rows_of(workload) if r[0] == "launch_overhead"
                         and r[2] == "fixed" and r[3] in got and med.get(r[3])), None)
            for key, label, base in [(key, label, "fixed")] + (
                    [("all_stalls", f"all stalls (against {full}: fixed's launches too)", full)]
                    if full else []):
                p = paired(got, form, base)
                wi = g["whatif"][key]["step_ns_if_fixed"] / 1e6
                f0 = got[base].get(0)
                print(f"| {tag} | {label} | {statistics.median(p):.2f} | – | – | {med[base]:.2f} / "
                      f"{f0 if f0 is None else round(f0, 2)} | {wi:.2f} | {pct(wi, med[base])} / "
                      f"{pct(wi, f0)} | {verdict} / {top_truth} | {steps} |")


main()
