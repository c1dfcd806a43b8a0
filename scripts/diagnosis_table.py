#!/usr/bin/env python3
"""The accuracy table of the seed's case (docs/ACCURACY.md) from committed data, no GPU:
tests/data/diagnosis/truth.txt (untraced medians, scripts/gpu-diagnosis.sh) and
`slack report --json` on tests/data/diagnosis/resnet_seed-FORM.slk. Truth for a cause: the
median over the interleaved rounds of step(form) - step(form without it), paired by round. The
rounds come from one truth process that timed every form (MEDIAN and RESULT repeat= lines,
TRUTH=shared, run 34 on) or, in older runs, from each traced form's own process (INPROC_MEDIAN
lines after its phase=traced line).
The rounds column: the spread of those paired differences (how well one run knows the truth);
the truth 90% column: the median's bootstrap interval over the rounds, and whether slack's figure
is within 10% of a truth inside it.
Where the lines carry the loader's time per step (loads_ms=, GPU run 39 on), a second table
gives the truth at the pace of the traced run: this machine's CPU speed drifts by +-25% for
seconds at a time (scripts/gpu-modes.sh), so a form with the loader in the main thread takes its
step as L + R, L the loader's ms per step and R the rest; with copies_ms= (the batch's arrival
to the forward's start) a form with pageable copies also as C + R, C those copies' ms (where the
GPU has drained before the copy: not in `c` alone, whose blocking copy first waits). Per round
of the truth process R = the median over its steps of the interval less the form's paced parts,
R_F = the median over the rounds, and the form's step at the traced run's pace (its mean L and C
per traced step) is L_t + C_t + R_F (the parts the form has); a form with no paced part keeps
its median step. A cause's truth at that pace: step_F(pace_t) - step_G(pace_t).
Usage: python3 scripts/diagnosis_table.py [SLACK [DIR]]  (DIR default tests/data/diagnosis: run
20; tests/data/diagnosis/run21: run 21's lcs, l and fixed forms with 9 repeats; runNN: later
runs, docs/ACCURACY.md)"""
import json, os, random, re, statistics, subprocess, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SLACK = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "slack")
D = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "tests", "data", "diagnosis")
CAUSE = {"l": ("data_starvation", "data_starvation"), "s": ("serialization", "serialization"),
         "c": ("copy+copy_stall", "copy_and_copy_stall")}
truth = {}  # form traced -> {form: median ms}
reps = {}   # form traced -> {form: {repeat: ms}}
shared, shared_reps = {}, {}  # the truth process's medians and rounds
rest_reps = {}   # form -> {repeat: steady interval less the paced parts} (truth process)
part_reps = {}   # form -> {repeat: {part: mean ms}} (truth process)
traced_pace = {}  # form -> ({part: mean ms per traced step}, {part: mean ms in its tail} or None)
cur = None


STAT = os.environ.get("TRUTH_STAT", "interval")


def values(line, key):
    m = re.search(r" " + key + r"=([0-9.,]+)", line)
    return [float(x) for x in m.group(1).split(",") if x] if m else []


def step_of(line, sync_ms):
    """A round's step: with TRUTH_STAT=interval (the default) the median of its steps' host
    intervals after the first (the loop's period in its steady state); TRUTH_STAT=sync, or a line
    without steps_ms=, the round's mean from synchronize() to synchronize() (runs up to 36's
    tables: it also holds the GPU's drain after the last step, GPU step / steps more for a form
    that never waits for the GPU: about 10 ms of resnet_seed's 78 ms over 8 steps)"""
    iv = values(line, "steps_ms")
    if STAT == "sync" or len(iv) < 3:
        return sync_ms
    return statistics.median(iv[1:])


def paced_parts(form, line):
    """The parts of form's step that follow the machine's pace and that the line times: the
    loader's (loads_ms=) in a main-thread loader form, the copies' (copies_ms=) in a pageable
    copy form whose GPU has drained before the copy (a per-step sync or the main-thread loader
    before it). In `c` alone the blocking copy is called while the GPU still runs the previous
    step and first waits for it: its copies_ms holds that wait (54-65 ms of a 77 ms step in run
    41, against 9-17 ms of copy in the other forms), not the copy's pace, so `c` keeps its
    median step."""
    want = [("l", "loads_ms"), ("c", "copies_ms")]
    drained = "s" in form or "l" in form
    return [k for c, k in want
            if c in form and f" {k}=" in line and (k != "copies_ms" or drained)]


def rest_of(form, line):
    """(median over the steps after the first of the interval less the paced parts, {part: mean
    ms over those steps}), or None when the line times no part"""
    iv = values(line, "steps_ms")
    parts = {k: values(line, k) for k in paced_parts(form, line)}
    if not parts or any(len(v) != len(iv) or len(v) < 3 for v in parts.values()):
        return None
    means = {k: sum(v[1:]) / len(v[1:]) for k, v in parts.items()}
    if STAT == "sync":
        return float(re.search(r"step_ms=([0-9.]+)", line).group(1)) - sum(
            sum(v) / len(v) for v in parts.values()), means
    return statistics.median(iv[i] - sum(v[i] for v in parts.values())
                             for i in range(1, len(iv))), means


for line in open(os.path.join(D, "truth.txt")):
    m = re.match(r"RESULT scenario=resnet_seed form=(\S+) step_ms=([0-9.]+) steps=\d+ "
                 r"repeat=(\d+)( phase=untraced)?", line)
    fm = re.search(r"form=(\S+)", line)
    ro = rest_of(fm.group(1), line) if fm else None
    if m and ro and not m.group(4):
        rest_reps.setdefault(m.group(1), {})[int(m.group(3))] = ro[0]
        part_reps.setdefault(m.group(1), {})[int(m.group(3))] = ro[1]
    if m and ro and m.group(4) and m.group(1) in traced_pace:
        traced_pace[m.group(1)] = (traced_pace[m.group(1)][0], ro[1])
    if ro and "phase=traced" in line:
        traced_pace[fm.group(1)] = (ro[1], None)
    m = re.match(r"MEDIAN scenario=resnet_seed form=(\S+) step_ms=([0-9.]+)", line)
    if m:
        if STAT == "sync" or "steps_ms=" not in open(os.path.join(D, "truth.txt")).read():
            shared[m.group(1)] = float(m.group(2))
        continue
    m = re.match(r"RESULT scenario=resnet_seed form=(\S+) step_ms=([0-9.]+) steps=\d+ "
                 r"repeat=(\d+)(?! phase=)", line)
    if m:
        shared_reps.setdefault(m.group(1), {})[int(m.group(3))] = step_of(line, float(m.group(2)))
        continue
    m = re.search(r"form=(\S+) step_ms=([0-9.]+).*phase=traced", line)
    if m:
        cur = m.group(1)
        truth[cur], reps[cur] = {}, {}
        continue
    m = re.match(r"INPROC_MEDIAN scenario=resnet_seed form=(\S+) step_ms=([0-9.]+)", line)
    if m and cur:
        truth[cur][m.group(1)] = float(m.group(2))
    m = re.match(r"RESULT scenario=resnet_seed form=(\S+) step_ms=([0-9.]+) steps=\d+ "
                 r"repeat=(\d+) phase=untraced", line)
    if m and cur:
        reps[cur].setdefault(m.group(1), {})[int(m.group(3))] = float(m.group(2))


for f, r in shared_reps.items():  # the rounds' median (a truth process stopped before its
    shared.setdefault(f, statistics.median(r.values()))  # MEDIAN lines, or TRUTH_STAT=interval)
if shared:  # one truth for every form
    truth = {f: dict(shared) for f in set(truth) | set(shared)}
    reps = {f: shared_reps for f in truth}


def saving(form, a, b):
    """What removing a cause saves: the median over the repeats of step(a) - step(b), each pair
    from one round of the interleaved repeats (the rounds drift together: the loader forms vary
    by +-20% from round to round, docs/ACCURACY.md); the difference of the medians without the
    repeats' lines."""
    pairs = paired(form, a, b)
    if pairs:
        return statistics.median(pairs)
    return truth[form][a] - truth[form][b]


def paired(form, a, b):
    r = reps.get(form, {})
    return [r[a][k] - r[b][k] for k in r.get(a, {}) if k in r.get(b, {})]


def ci(form, a, b):
    """The truth's 90% interval: the median of the paired differences, resampled over the rounds
    (2,000 bootstrap draws, a fixed seed), 5th to 95th percentile; "lo..hi" and whether x lies
    in it widened by 10% each way (slack within 10% of some truth the rounds allow)."""
    p = paired(form, a, b)
    if len(p) < 3:
        return "–", None
    rng = random.Random(7)
    meds = sorted(statistics.median(rng.choice(p) for _ in p) for _ in range(2000))
    lo, hi = meds[100], meds[1899]
    return f"{lo:.1f}..{hi:.1f}", lambda x: lo - abs(lo) * 0.1 <= x <= hi + abs(hi) * 0.1


def span(form, a, b):
    """The rounds' spread of the paired differences, "lo..hi", and whether x lies in it."""
    p = paired(form, a, b)
    return (f"{min(p):.1f}..{max(p):.1f}", lambda x: min(p) <= x <= max(p)) if p else ("–", None)
def slack_ms(g, c, key):
    """slack's figure for a cause: its class per step (copies: copy + copy stall) and the time
    it shares with another class (steps.per_step_shared_ns: chained causes, the host work after
    a sync that prepared the next batch), what fixing it alone saves by attribution"""
    per, sh = g["steps"]["per_step_ns"], g["steps"].get("per_step_shared_ns", {})
    if c == "c":
        return (per["copy"] + per["copy_stall"] + sh.get("copy_stall", 0)) / 1e6
    return (per[key] + sh.get(key, 0)) / 1e6


print("| form | top stall (slack) | cause | truth ms | rounds ms | truth 90% ms | slack ms | error | "
      "fixed-cause step ms | step_ns_if_removed ms | error |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for form in ["lcs", "lc", "ls", "cs", "l", "c", "s", "fixed"]:
    t = truth.get(form)
    path = os.path.join(D, f"resnet_seed-{form}.slk")
    if not t or not os.path.exists(path):
        continue
    g = json.loads(subprocess.run([SLACK, "report", "--json", path], capture_output=True,
                                  text=True, check=True).stdout)["gpus"][0]
    per = g["steps"]["per_step_ns"]
    top = g["verdict"]["class"]
    if form == "fixed":
        per_idle = sum(per[k] for k in ("serialization", "copy_stall", "data_starvation",
                                        "launch_overhead", "other"))
        print(f"| fixed | {top} | largest stall | – | – | – | "
              f"{max(per[k] for k in ('serialization', 'copy_stall', 'data_starvation', 'launch_overhead')) / 1e6:.2f} | "
              f"{g['steps']['count']} steps | {t['fixed']:.2f} | – | idle {per_idle / g['steps']['step_ns'] * 100:.1f}% of the step |")
        continue
    for c in form:
        key, wkey = CAUSE[c]
        rest = form.replace(c, "") or "fixed"
        if rest not in t:
            continue
        tr = saving(form, form, rest)
        sl = slack_ms(g, c, key)
        wi = g["whatif"][wkey]["step_ns_if_removed"] / 1e6
        err = f"{(sl - tr) / tr * 100:+.1f}%" if tr > 0.5 else "n/a (truth under 0.5 ms: noise)"
        sp, inside = span(form, form, rest)
        if inside:
            sp += " (slack inside)" if inside(sl) else " (slack outside)"
        iv, within = ci(form, form, rest)
        if within:
            iv += " (within 10%)" if within(sl) else " (outside)"
        print(f"| {form} | {top} | {key} | {tr:.2f} | {sp} | {iv} | {sl:.2f} | {err} | {t[rest]:.2f} | "
              f"{wi:.2f} | {(wi - t[rest]) / t[rest] * 100:+.1f}% |")
    if "fixed" in t:
        wi = g["whatif"]["all_stalls"]["step_ns_if_fixed"] / 1e6
        print(f"| {form} | {top} | all stalls | {saving(form, form, 'fixed'):.2f} | "
              f"{span(form, form, 'fixed')[0]} | {ci(form, form, 'fixed')[0]} | – | – | "
              f"{t['fixed']:.2f} (fixed) | {wi:.2f} | {(wi - t['fixed']) / t['fixed'] * 100:+.1f}% |")


def pace_step(form, pace, rounds=None):
    """form's step at the traced run's pace ({part: ms}): the parts form has plus its median rest
    over `rounds` (default all) when the truth process timed them, else its median step"""
    r = rest_reps.get(form, {})
    if r:
        have = next(iter(part_reps[form].values()))
        if all(k in pace for k in have):
            v = [r[k] for k in (rounds if rounds is not None else r) if k in r]
            return sum(pace[k] for k in have) + statistics.median(v) if v else None
    r = shared_reps.get(form, {})
    v = [r[k] for k in (rounds if rounds is not None else r) if k in r]
    return statistics.median(v) if v else shared.get(form)


def pace_ci(form, other, pace):
    """90% bootstrap interval (rounds resampled, 2,000 draws, fixed seed) of the truth at pace"""
    ks = sorted(set(rest_reps.get(form, {})) | set(shared_reps.get(form, {})))
    if len(ks) < 3:
        return None
    rng = random.Random(7)
    v = []
    for _ in range(2000):
        pick = [rng.choice(ks) for _ in ks]
        a, b = pace_step(form, pace, pick), pace_step(other, pace, pick)
        if a is not None and b is not None:
            v.append(a - b)
    v.sort()
    return v[len(v) // 20], v[len(v) * 19 // 20]


def pace_text(pace, tail, form):
    """"L 335.5 (tail 243.8, truth 340.7)" per part"""
    names = {"loads_ms": "L", "copies_ms": "C"}
    out = []
    for k, v in pace.items():
        tp = statistics.median(p[k] for p in part_reps[form].values() if k in p)
        tl = f"tail {tail[k]:.1f}, " if tail and k in tail else ""
        out.append(f"{names[k]} {v:.1f} ({tl}truth {tp:.1f})")
    return "; ".join(out)


if traced_pace and rest_reps:
    print()
    print("At the traced run's pace (truth process's rest per round + the traced run's paced "
          "parts per step: L the loader's ms, C the copies' ms):")
    print()
    print("| form | cause | traced pace ms/step | truth at pace ms | "
          "90% | slack ms | error | as the partition's rest ms | error | "
          "fixed-cause step at pace ms | step_ns_if_removed ms | error |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for form in ["lcs", "lc", "ls", "cs", "l", "c"]:
        path = os.path.join(D, f"resnet_seed-{form}.slk")
        if form not in traced_pace or form not in rest_reps or not os.path.exists(path):
            continue
        pace, tail = traced_pace[form]
        g = json.loads(subprocess.run([SLACK, "report", "--json", path], capture_output=True,
                                      text=True, check=True).stdout)["gpus"][0]
        per = g["steps"]["per_step_ns"]
        rows = [(c, *CAUSE[c], form.replace(c, "") or "fixed") for c in form]
        rows.append(("all", "all stalls", "all_stalls", "fixed"))
        # the partition's terms: slack splits a gap, each cause but the loader getting what its
        # own removal saves with the others present; the loader's share is then the all-stalls
        # truth less the other causes' truths (the causes overlap: with the loader in workers
        # the sync costs ~1 ms, with the loader in the main thread ~50)
        marg = {c: pace_step(form, pace) - pace_step(r, pace) for c, _, _, r in rows
                if pace_step(r, pace) is not None}
        for c, key, wkey, rest in rows:
            a, b = pace_step(form, pace), pace_step(rest, pace)
            if a is None or b is None:
                continue
            tr = a - b
            iv = pace_ci(form, rest, pace)
            ivs = f"{iv[0]:.1f}..{iv[1]:.1f}" if iv else "–"
            if c == "all":
                sl = None
                wi = g["whatif"]["all_stalls"]["step_ns_if_fixed"] / 1e6
            else:
                sl = slack_ms(g, c, key)
                wi = g["whatif"][wkey]["step_ns_if_removed"] / 1e6
            sls = f"{sl:.2f}" if sl is not None else "–"
            err = f"{(sl - tr) / tr * 100:+.1f}%" if sl is not None and tr > 0.5 else "–"
            part, perr = "–", "–"
            if c == "l" and len(form) > 1 and "all" in marg:
                pt = marg["all"] - sum(v for k, v in marg.items() if k not in ("l", "all"))
                own = per[key] / 1e6  # the partition's own share, without what it shares
                part = f"{pt:.2f} (own {own:.2f})"
                perr = f"{(own - pt) / pt * 100:+.1f}%" if pt > 0.5 else "–"
            print(f"| {form} | {key} | {pace_text(pace, tail, form)} | {tr:.2f} | {ivs} | {sls} | "
                  f"{err} | {part} | {perr} | {b:.2f} | {wi:.2f} | {(wi - b) / b * 100:+.1f}% |")
