"""Shared harness of the labelled accuracy suite (scripts/accuracy.sh, docs/ACCURACY.md).

Every scenario program defines FORMS and build(form) -> a Runner with step() (one training or
inference step, launched and not waited for) and close(). This harness times it:

  python3 X.py --form F      one run of form F: WARMUP steps, then STEPS steps timed between two
                             torch.cuda.synchronize() calls; prints
                             RESULT scenario=X form=F step_ms=... steps=N
  python3 X.py --bench R     R interleaved repeats of every form in this one process (A B A B...),
                             one RESULT line each, then one MEDIAN line per form
  python3 X.py --inproc R --form F
                             truth and trace from one process, under libslack with
                             SLACK_DELAY_MS=D: up to R interleaved repeats of every form while
                             slack waits (untraced: INPROC_MEDIAN lines), then, once D has
                             passed, STEPS steps of form F with no warm-up (traced: the first
                             CUDA call after D starts slack); RESULT phase=traced last

The step time is the program's own timer over the timed steps: no profiler is involved. Data are
synthetic and seeded; nothing is read from disk or the network.
"""
import argparse
import os
import statistics
import sys
import time

import torch

T_START = time.monotonic()  # about the process's start: libslack's SLACK_DELAY_MS counts from load


def spin(ms):
    """Host work of a fixed duration (a busy loop: the GIL is held, the CPU is busy)."""
    end = time.perf_counter() + ms / 1e3
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


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


def measure(runner, warmup, steps):
    for _ in range(warmup):
        runner.step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        runner.step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / steps * 1e3


def inproc(name, forms, build, form, reps, steps, warmup):
    """Untraced repeats of every form while slack's delay lasts, then `form` traced."""
    delay = int(os.environ.get("SLACK_DELAY_MS", "0")) / 1e3
    got = {f: [] for f in forms}
    round_s = 0.0
    for rep in range(reps):
        t = time.monotonic()
        if t - T_START + 1.5 * round_s + 0.5 > delay:
            break
        for f in forms:
            r = build(f)
            ms = measure(r, warmup, steps)
            r.close()
            del r
            torch.cuda.synchronize()
            got[f].append(ms)
            print(f"RESULT scenario={name} form={f} step_ms={ms:.4f} steps={steps} repeat={rep} "
                  f"phase=untraced", flush=True)
        round_s = max(round_s, time.monotonic() - t)
    for f in forms:
        v = got[f]
        if v:
            print(f"INPROC_MEDIAN scenario={name} form={f} step_ms={statistics.median(v):.4f} "
                  f"min={min(v):.4f} max={max(v):.4f} n={len(v)}", flush=True)
    wait = T_START + delay + 0.3 - time.monotonic()
    if wait > 0:
        time.sleep(wait)
    traced_steps = int(os.environ.get("TRACED_STEPS", "45"))
    r = build(form)
    ms = measure(r, 0, traced_steps)
    r.close()
    print(f"RESULT scenario={name} form={form} step_ms={ms:.4f} steps={traced_steps} warmup=0 "
          f"phase=traced", flush=True)


def main(name, forms, build, steps=30, warmup=5):
    ap = argparse.ArgumentParser(description=f"accuracy scenario {name}: forms {', '.join(forms)}")
    ap.add_argument("--form", choices=forms, help="run one form once")
    ap.add_argument("--bench", type=int, default=0, help="interleaved repeats of every form")
    ap.add_argument("--inproc", type=int, default=0,
                    help="untraced repeats while SLACK_DELAY_MS lasts, then --form traced")
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
    reps = max(1, a.bench)
    got = {f: [] for f in forms}
    for rep in range(reps):
        for f in forms:
            r = build(f)
            ms = measure(r, warmup, steps)
            r.close()
            del r
            torch.cuda.synchronize()
            got[f].append(ms)
            print(f"RESULT scenario={name} form={f} step_ms={ms:.4f} steps={steps} repeat={rep}",
                  flush=True)
    for f in forms:
        v = got[f]
        print(f"MEDIAN scenario={name} form={f} step_ms={statistics.median(v):.4f} "
              f"min={min(v):.4f} max={max(v):.4f} n={len(v)}", flush=True)
