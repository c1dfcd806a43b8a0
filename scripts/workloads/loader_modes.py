"""Why does resnet_seed's loader form run at two paces? (issue 11; scripts/gpu-modes.sh)

The truth process of GPU run 36 showed the loader forms' steps in two plateaus ~105 ms apart
(l: ~180 or ~290 ms; lcs: ~245 or ~355), switching every few seconds. This times one form (FORM,
default l) for STEPS steps and prints per step: the step's host interval, the time spent in the
loader's next(), the CPU the main thread is on, its involuntary context switches, and the
process's CPU time (user+system, all threads) over the step. MODE=loader times the DataLoader
alone (no model, no GPU work). Variants are set from outside: OMP_NUM_THREADS, SCENARIO_PIN_CPU.
"""
import os
import resource
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
import resnet_seed  # noqa: E402
from scenario_common import pin_main_thread  # noqa: E402


def cpu_of_self():
    with open(f"/proc/self/task/{os.getpid()}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[36])


def machine_busy():
    """(busy, total) jiffies of all CPUs, from /proc/stat"""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


def mhz(cpu):
    try:
        with open(f"/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_cur_freq") as f:
            return int(f.read()) // 1000
    except OSError:
        return -1


def main():
    form = os.environ.get("FORM", "l")
    steps = int(os.environ.get("STEPS", "40"))
    mode = os.environ.get("MODE", "train")
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    pin_main_thread()
    print(f"MODES form={form} mode={mode} threads={torch.get_num_threads()} "
          f"pin={os.environ.get('SCENARIO_PIN_CPU', '-')} "
          f"affinity={len(os.sched_getaffinity(0))}", flush=True)
    if mode == "loader":
        it = iter(torch.utils.data.DataLoader(resnet_seed.dataset(), batch_size=resnet_seed.B,
                                              num_workers=0))
        step = lambda: next(it)  # noqa: E731
        load = None
    else:
        r = resnet_seed.Run(form)
        load = [0.0]
        inner = r.it

        class Timed:
            def __next__(self):
                t = time.perf_counter()
                v = next(inner)
                load[0] += time.perf_counter() - t
                return v
        r.it = Timed()
        step = r.step
    rows = []
    for i in range(steps + 4):
        torch.manual_seed(2000 + i)
        if load:
            load[0] = 0.0
        b0, a0 = machine_busy()
        ru0 = resource.getrusage(resource.RUSAGE_THREAD)
        c0 = time.process_time()
        t0 = time.perf_counter()
        step()
        t1 = time.perf_counter()
        c1 = time.process_time()
        ru1 = resource.getrusage(resource.RUSAGE_THREAD)
        b1, a1 = machine_busy()
        if i >= 4:
            rows.append((t1 - t0) * 1e3)
            print(f"STEP {i - 4} ms={(t1 - t0) * 1e3:.1f} "
                  f"load_ms={(load[0] * 1e3 if load else 0):.1f} cpu={cpu_of_self()} "
                  f"proc_cpu_ms={(c1 - c0) * 1e3:.1f} "
                  f"thread_cpu_ms={(ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime) * 1e3:.1f} "
                  f"nivcsw={ru1.ru_nivcsw - ru0.ru_nivcsw} "
                  f"machine_busy={100 * (b1 - b0) / max(1, a1 - a0):.0f}% mhz={mhz(cpu_of_self())}", flush=True)
    torch.cuda.synchronize()
    rows.sort()
    print(f"MODES_DONE n={len(rows)} median={rows[len(rows) // 2]:.1f} "
          f"p10={rows[len(rows) // 10]:.1f} p90={rows[len(rows) * 9 // 10]:.1f}", flush=True)


if __name__ == "__main__":
    main()
