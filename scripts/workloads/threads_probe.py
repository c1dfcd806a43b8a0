"""Why a loader in threads slows the training thread's own work (holdout_threads, GPU runs 82-133:
the main thread's CPU time per step 1.9x the fixed form's, 37.7 ms against 20.1 traced,
scripts/thread_cpu.py, beside the GIL waits slack's loader_wait finds). Untraced, interleaved rounds of holdout_threads' loop
(ResNet-50, the seed's FakeData and CPU transforms, batch 64) in one process, fed four ways:

  t      4 loader threads (holdout_threads.ThreadLoader, pinned), torch's intra-op threads as
         they come (each thread's parallel regions get a team of as many threads as CPUs)
  t1     the same threads, each calling torch.set_num_threads(1) first (what a DataLoader's
         worker processes do, torch/utils/data/_utils/worker.py)
  fixed  holdout_threads' fixed form: a DataLoader of 12 worker processes, pinned
  t1w    t1's threads, each step's batch built before it and the threads idle during the step
         (its wait for them not timed): the launching thread's pace with no loader beside it

Each round: ROUND_STEPS steps; printed per form and round: the step (ms), the main thread's CPU
(time.thread_time) and the process's own CPU (os.times, children apart) per step, and the
process's thread count; the main thread's user and system CPU, minor faults and context switches
(voluntary, involuntary) per step (/proc/thread-self). One RESULT line per form and round, a
MEDIAN line per form last.
"""
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from holdout_loader import shared, train_step  # noqa: E402
from holdout_threads import B, ThreadLoader  # noqa: E402
from resnet_seed import dataset  # noqa: E402
from scenario_common import settle  # noqa: E402

ROUNDS = int(os.environ.get("ROUNDS", "4"))
ROUND_STEPS = int(os.environ.get("ROUND_STEPS", "12"))


class OneThreadLoader(ThreadLoader):
    def run(self, k):
        torch.set_num_threads(1)
        super().run(k)


def proc_cpu_ms():
    t = os.times()
    return (t.user + t.system) * 1e3


def main_counts():
    """The calling thread's user and system CPU (ms), minor faults, and voluntary and
    involuntary context switches, from /proc/thread-self (zeros where unreadable)"""
    try:
        with open("/proc/thread-self/stat") as f:
            st = f.read()
        v = st[st.rindex(")") + 2:].split()
        tick = 1e3 / os.sysconf("SC_CLK_TCK")
        out = [int(v[11]) * tick, int(v[12]) * tick, float(v[7])]
        with open("/proc/thread-self/status") as f:
            for line in f:
                if line.startswith(("voluntary_ctxt", "nonvoluntary_ctxt")):
                    out.append(float(line.split()[1]))
        return out
    except (OSError, ValueError, IndexError):
        return [0.0] * 5


def nthreads():
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return -1


def main():
    model, opt = shared()
    model.train()
    crit = nn.CrossEntropyLoss()
    losses = []
    # the worker processes forked first: with the loader threads started first, GPU run 159
    # printed nothing in 400 s (a fork while threads run can leave a child with their locks
    # held)
    loaders = {"fixed": iter(DataLoader(dataset(), batch_size=B, shuffle=False, pin_memory=True,
                                        num_workers=12, persistent_workers=True,
                                        prefetch_factor=2, multiprocessing_context="fork"))}
    next(loaders["fixed"])
    print("SETUP workers up", flush=True)
    loaders["t"] = ThreadLoader(dataset())
    loaders["t1"] = OneThreadLoader(dataset())
    loaders["t1w"] = loaders["t1"]
    for it in loaders.values():
        if isinstance(it, ThreadLoader):
            it.pause()
    time.sleep(1.5)

    def step(it, batch=None):
        x, y = batch if batch is not None else next(it)
        train_step(model, opt, crit, x, y, losses)
        del losses[:-100]

    for it in set(loaders.values()):  # warm-up: cuDNN's plans, the allocator
        for _ in range(3):
            step(it)
        if isinstance(it, ThreadLoader):
            it.pause()
    torch.cuda.synchronize()
    print("SETUP warmed up", flush=True)
    res = {f: [] for f in loaders}
    for r in range(ROUNDS):
        for form in ("t", "t1", "fixed", "t1w"):
            it = loaders[form]
            settle()  # the fixed form's workers refill their prefetch before the next round
            torch.cuda.synchronize()
            w0, c0, p0 = time.perf_counter(), time.thread_time() * 1e3, proc_cpu_ms()
            k0 = main_counts()
            wait = 0.0
            for _ in range(ROUND_STEPS):
                batch = None
                if form == "t1w":  # the next batch built, the threads idle, before the step
                    torch.cuda.synchronize()
                    t = time.perf_counter()
                    it.go.set()
                    while it.q[it.n % len(it.q)].qsize() < 1:
                        time.sleep(0.002)
                    it.pause()
                    batch = it.q[it.n % len(it.q)].get()
                    it.n += 1
                    wait += time.perf_counter() - t
                step(it, batch)
            torch.cuda.synchronize()
            wall = (time.perf_counter() - w0 - wait) * 1e3 / ROUND_STEPS
            main_cpu = (time.thread_time() * 1e3 - c0) / ROUND_STEPS
            proc = (proc_cpu_ms() - p0) / ROUND_STEPS
            n = nthreads()
            k = [(b - a) / ROUND_STEPS for a, b in zip(k0, main_counts())]
            if isinstance(it, ThreadLoader):
                it.pause()
            res[form].append((wall, main_cpu, proc))
            print(f"RESULT form={form} round={r} step_ms={wall:.2f} main_cpu_ms={main_cpu:.2f} "
                  f"proc_cpu_ms={proc:.2f} threads={n} main_user_ms={k[0]:.1f} main_sys_ms={k[1]:.1f} "
                  f"main_minflt={k[2]:.0f} main_vcsw={k[3]:.0f} main_ivcsw={k[4]:.0f}", flush=True)
    for form, v in res.items():
        med = [statistics.median(x[k] for x in v) for k in range(3)]
        print(f"MEDIAN form={form} step_ms={med[0]:.2f} main_cpu_ms={med[1]:.2f} "
              f"proc_cpu_ms={med[2]:.2f} rounds={len(v)}", flush=True)
    for it in set(loaders.values()):
        if isinstance(it, ThreadLoader):
            it.close()
    os._exit(0)


if __name__ == "__main__":
    main()
