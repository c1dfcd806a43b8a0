"""Shared harness of the labelled accuracy suite (scripts/accuracy.sh, docs/ACCURACY.md).

Every scenario program defines FORMS and build(form) -> a Runner with step() (one training or
inference step, launched and not waited for) and close(). This harness times it:

  python3 X.py --form F      one run of form F: WARMUP steps, then STEPS steps timed between two
                             torch.cuda.synchronize() calls; prints
                             RESULT scenario=X form=F step_ms=... steps=N
  python3 X.py --bench R     R interleaved repeats of every form in this one process (A B A B...),
                             one RESULT line each, then one MEDIAN line per form
  python3 X.py --inproc R --form F
                             trace and truth from one process, under libslack with
                             SLACK_DURATION_MS=D: TRACED_STEPS steps of form F with no warm-up
                             inside slack's window (RESULT phase=traced), then, once the window
                             has ended (CUPTI detached from the process), R interleaved untraced
                             repeats of every form (INPROC_MEDIAN lines; INPROC_FORMS="a b"
                             limits them to those forms)

The step time is the program's own timer over the timed steps: no profiler is involved. Data are
synthetic and seeded; nothing is read from disk or the network. A form that fails in the rounds
(a CUDA graph's capture refused) is said once (WARNING ... failed in round R) and left out of the
rounds after it; the other forms go on (tests/test_workload_harness.sh).
"""
import argparse
import os
import statistics
import sys
import time

import torch



def spin(ms):
    """Host work of a fixed duration (a busy loop: the GIL is held, the CPU is busy)."""
    end = time.perf_counter() + ms / 1e3
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def capture_step(opt, body, mode="global"):
    """A training step captured whole as a CUDA graph, by the recipe of PyTorch's whole-network
    capture: warm-up iterations on a side stream, then the capture with the grads set to None
    before it. body() runs the forward, backward and opt.step() on static tensors; replay() of the
    graph returned runs the step again (runs 58 and 61: the usual fix of launch overhead).
    mode: the capture's error mode; "thread_local" where other threads of the process call CUDA
    meanwhile (a DataLoader's pin-memory threads: holdout_periodic's capture was invalidated in
    GPU run 140 under "global")."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            body()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g, capture_error_mode=mode):
        body()
    # the graph replays into the optimizer's state (its momentum buffers, made by the warm-up
    # steps in the ordinary pool) and body's static tensors: kept alive with it. A caller that
    # kept only the graph had them freed and reused under the replays (GPU run 143: an illegal
    # memory access once holdout_augment's second graph's optimizer was collected)
    g.slack_keep = (opt, body)
    return g


class Runner:
    def step(self):
        raise NotImplementedError

    def close(self):
        pass


def pin_main_thread():
    """SCENARIO_PIN_CPU=N: the main thread runs on CPU N only, from after CUDA's start (so the
    threads CUDA, CUPTI and slack start keep the other CPUs). scripts/accuracy.sh pins the
    launch-bound scenario: the same form ran 1.7x slower in one process than in another on the
    H200 machines (GPU run 8), not from one repeat to the next in one process."""
    cpu = os.environ.get("SCENARIO_PIN_CPU")
    if cpu:
        torch.zeros(1, device="cuda")
        os.sched_setaffinity(0, {int(cpu)})  # pid 0: the calling thread only (Linux)


def detect_anomaly():
    """DETECT_ANOMALY=1: autograd's anomaly detection on for the whole process
    (torch.autograd.set_detect_anomaly(True), the switch scripts leave on after a NaN hunt; its
    NaN checks with it, check_nan=True), every form and round alike: scripts/gpu-envcheck.sh's
    AD part times a loop with and without it (session 51)"""
    if os.environ.get("DETECT_ANOMALY") == "1":
        torch.autograd.set_detect_anomaly(True)


def idle_threads():
    """IDLE_THREADS=N: N daemon threads that wait 20 calls deep, waking every 50 ms (a program's
    idle pool, logger and monitor threads), started before the first step: what slack's samples
    of every Python thread cost a loop (scripts/gpu-recordcost.sh, GPU run 132)"""
    import threading
    n = int(os.environ.get("IDLE_THREADS", "0"))

    def wait(depth, ev):
        if depth:
            return wait(depth - 1, ev)
        while not ev.wait(0.05):
            pass

    ev = threading.Event()
    for _ in range(n):
        threading.Thread(target=wait, args=(20, ev), daemon=True).start()
    return ev


def _children_cpu_ticks():
    """CPU ticks (user + system) of this process's child processes, each one's own, by pid:
    /proc/self/task/*/children (a kept DataLoader's worker processes); {} where unreadable"""
    ticks = {}
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return ticks
    for t in tasks:
        try:
            with open(f"/proc/self/task/{t}/children") as f:
                pids = f.read().split()
        except OSError:
            continue
        for pid in pids:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    st = f.read()
            except OSError:
                continue
            v = st[st.rindex(")") + 2:].split()  # fields from the 3rd (state) on
            ticks[pid] = int(v[11]) + int(v[12])  # utime, stime (fields 14 and 15)
    return ticks


def settle(limit_s=3.0, quiet_s=0.2):
    """Wait until this process's child processes have used no CPU for quiet_s (at most limit_s;
    SETTLE=0: not at all), and return the ms waited. A kept runner's DataLoader workers refill
    their prefetch after its round: without this they do it during the next form's round, which
    then runs slower than it would alone (GPU run 133: the threaded loader's truth process ran
    its rounds beside the fixed form's 12 persistent workers, 186 ms a step against 130)."""
    if os.environ.get("SETTLE", "1") == "0":
        return 0.0
    t0 = time.monotonic()
    last = _children_cpu_ticks()
    if not last:
        return 0.0
    quiet_since = t0
    while time.monotonic() - t0 < limit_s:
        time.sleep(0.05)
        now = _children_cpu_ticks()
        if now != last:
            quiet_since = time.monotonic()
            last = now
        elif time.monotonic() - quiet_since >= quiet_s:
            break
    return (time.monotonic() - t0) * 1e3


_GC = []


def gc_log():
    """GC_LOG=1: the interpreter's collections timed (gc.callbacks), for gc_line: whether the
    traced steps' spikes are the collector's (scripts/gpu-spikes.sh)"""
    if os.environ.get("GC_LOG") != "1":
        return
    import gc
    start = {}

    def cb(phase, info):
        now = time.perf_counter()
        if phase == "start":
            start["t"] = now
        elif "t" in start:
            _GC.append((info.get("generation", -1), (now - start.pop("t")) * 1e3))

    gc.callbacks.append(cb)


def gc_line(tag):
    """' gc=gen:n:total_ms:max_ms,...' of the collections since the last call (GC_LOG=1)"""
    if os.environ.get("GC_LOG") != "1":
        return ""
    by = {}
    for gen, ms in _GC:
        n, tot, mx = by.get(gen, (0, 0.0, 0.0))
        by[gen] = (n + 1, tot + ms, max(mx, ms))
    _GC.clear()
    return f" gc_{tag}=" + ",".join(f"{g}:{n}:{t:.1f}:{m:.1f}" for g, (n, t, m) in sorted(by.items()))


def loads_of(runner, steps):
    """ ' loads_ms=... copies_ms=...' with the loader's ms and the batch's copies' ms in each of
    the last `steps` steps when the runner times them (`loads` and `copies` lists,
    resnet_seed.py), else ''"""
    out = ""
    for key in ("loads", "copies"):
        v = getattr(runner, key, None)
        if v:
            out += f" {key}_ms=" + ",".join(f"{x:.1f}" for x in v[-steps:])
    return out


def measure(runner, warmup, steps, per_step=None):
    """Mean ms per step over `steps` timed steps between two synchronize() calls; per_step, a
    list, gets the host's interval of each timed step (from one step() return to the next: in
    the steady state of a loop that waits for its data or for the GPU, the step's pace)."""
    seed = getattr(runner, "seed_each_step", False)
    for i in range(warmup):
        if seed:
            torch.manual_seed(1000 + i)
        runner.step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    last = t0
    for i in range(steps):
        if seed:
            torch.manual_seed(2000 + i)
        runner.step()
        if per_step is not None:
            now = time.perf_counter()
            per_step.append((now - last) * 1e3)
            last = now
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / steps * 1e3


def inproc(name, forms, build, form, reps, steps, warmup):
    """`form` traced inside slack's window (SLACK_DURATION_MS), then, once the window has ended
    (CUPTI detached), up to `reps` untraced interleaved repeats of every form."""
    window = int(os.environ.get("SLACK_DURATION_MS", "0")) / 1e3
    traced_steps = int(os.environ.get("TRACED_STEPS", "45"))
    # slack's window opens at the first CUDA call: make it here, so that the window ends by
    # t_traced + window (when the first call came later, inside build(), the untraced rounds
    # could start before the window closed: GPU run 50's tabular trace held one step of them)
    torch.zeros(1, device="cuda")
    t_traced = time.monotonic()
    r = build(form)
    gc_log()
    gc_line("setup")
    per = []
    ms = measure(r, 0, traced_steps, per)
    loads = loads_of(r, traced_steps) + gc_line("steps")
    r.close()
    del r
    print(f"RESULT scenario={name} form={form} step_ms={ms:.4f} steps={traced_steps} warmup=0 "
          f"phase=traced steps_ms={','.join(f'{x:.1f}' for x in per)}{loads}", flush=True)
    if window and time.monotonic() - t_traced > window:
        # GPU run 53: a first optimizer step that imports torch._dynamo (about 5 s) pushed a
        # 200-step loop past a 7 s window; the trace held the model's set-up only
        print(f"WARNING scenario={name} form={form} the traced steps ended "
              f"{time.monotonic() - t_traced:.1f} s after the first CUDA call, past "
              f"SLACK_DURATION_MS ({window:.1f} s): the trace does not hold them all", flush=True)
    wait = t_traced + window + 0.3 - time.monotonic()
    if wait > 0:
        time.sleep(wait)
    only = os.environ.get("INPROC_FORMS", "").replace(",", " ").split()
    forms = [f for f in forms if not only or f in only]
    if form in forms:  # the traced form first: an untraced tail (SLACK_TAIL_MS) times its calls
        forms = [form] + [f for f in forms if f != form]
    repeats(name, forms, build, reps, steps, warmup, " phase=untraced", "INPROC_MEDIAN")


def repeats(name, forms, build, reps, steps, warmup, tag="", label="MEDIAN"):
    """reps interleaved repeats of every form (A B A B...): a RESULT line each (with the timed
    steps' host intervals, steps_ms=), then one `label` line per form with the median.
    BENCH_REUSE=1: each form's runner is built once and kept across the rounds (a DataLoader's
    workers start once; the warm-up steps of each round absorb their refilling; since session
    35 each round also waits for the kept workers' refill to end, settle_ms= on its line), and
    round r starts at form r (mod the count), so that no form always follows the same one."""
    if not forms:  # INPROC_FORMS=none: the traced steps only (slack record on the process)
        return
    reuse = os.environ.get("BENCH_REUSE") == "1"
    kept = {}
    got = {f: [] for f in forms}
    failed = set()
    for rep in range(reps):
        order = forms[rep % len(forms):] + forms[:rep % len(forms)] if reuse else forms
        for f in order:
            if f in failed:
                continue
            try:
                r = kept.get(f) or build(f)
                if reuse:
                    kept[f] = r
                per = []
                gc_line("")  # (the collections before the round's steps: not its own)
                ms = measure(r, warmup, steps, per)
            except Exception as e:  # noqa: BLE001 (any error of the form's own code)
                # a form that cannot run on this machine (a CUDA graph's capture refused, a
                # library missing) is left out of the later rounds, said once; the other forms
                # go on, and the rounds before keep their lines
                failed.add(f)
                kept.pop(f, None)
                print(f"WARNING scenario={name} form={f} failed in round {rep} and is left out "
                      f"of the rounds after: {type(e).__name__}: {str(e)[:300]}", flush=True)
                try:
                    torch.cuda.synchronize()
                except Exception:  # noqa: BLE001 (the device's error, said above)
                    pass
                continue
            loads = loads_of(r, steps) + gc_line("steps")
            # a kept runner's background work (loader threads refilling their queues) would
            # run into the next form's round: it stops here until its next step
            getattr(r, "pause", lambda: None)()
            if not reuse:
                r.close()
            del r
            torch.cuda.synchronize()
            # and its worker processes' refill done before the next round starts (settle)
            waited = settle() if reuse else 0.0
            got[f].append(ms)
            print(f"RESULT scenario={name} form={f} step_ms={ms:.4f} steps={steps} repeat={rep}"
                  f"{tag} steps_ms={','.join(f'{x:.1f}' for x in per)}{loads}"
                  f" settle_ms={waited:.0f}", flush=True)
    for r in kept.values():
        r.close()
    kept.clear()
    for f in forms:
        v = got[f]
        if not v:  # (failed in its first round)
            continue
        print(f"{label} scenario={name} form={f} step_ms={statistics.median(v):.4f} "
              f"min={min(v):.4f} max={max(v):.4f} n={len(v)}", flush=True)


def main(name, forms, build, steps=30, warmup=5):
    ap = argparse.ArgumentParser(description=f"accuracy scenario {name}: forms {', '.join(forms)}")
    ap.add_argument("--form", choices=forms, help="run one form once")
    ap.add_argument("--bench", type=int, default=0, help="interleaved repeats of every form")
    ap.add_argument("--inproc", type=int, default=0,
                    help="--form traced inside SLACK_DURATION_MS, then untraced repeats")
    a = ap.parse_args()
    steps = int(os.environ.get("STEPS", steps))
    warmup = int(os.environ.get("WARMUP", warmup))
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if not torch.cuda.is_available():
        print(f"RESULT scenario={name} error=no_cuda", flush=True)
        sys.exit(1)
    pin_main_thread()
    detect_anomaly()
    idle_threads()
    if a.inproc:
        inproc(name, forms, build, a.form or forms[0], a.inproc, steps, warmup)
        return
    if a.form:
        r = build(a.form)
        ms = measure(r, warmup, steps)
        r.close()
        print(f"RESULT scenario={name} form={a.form} step_ms={ms:.4f} steps={steps} warmup={warmup}",
              flush=True)
        return
    repeats(name, forms, build, max(1, a.bench), steps, warmup)
