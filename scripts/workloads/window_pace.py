"""The loader's pace inside and outside slack's windows, in one process (scripts/gpu-hostpace.sh).

resnet_seed's form FORM (default `l`: the DataLoader in the main thread, CPU transforms) runs
STEPS steps after 3 untimed ones; each step prints

  STEP i t0 t_loaded t1        (time.monotonic_ns(), the clock of slack's host records)

t0 before the batch is asked for, t_loaded once it is built (host work only: the loader), t1 once
the step's work is launched. Under libslack with SLACK_WINDOW=W/P the steps fall inside and
outside the trace's windows (WINDOW records, same clock): the loader's time inside against
outside, steps interleaved over the whole run, is the tracer's cost on host work that makes no
CUDA call, free of the drift between processes and of the start of the process.
"""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import resnet_seed  # noqa: E402


class TimedLoads:
    """resnet_seed's batch iterator, timed: t_loaded of the last batch taken."""

    def __init__(self, it):
        self.it, self.t_loaded = it, 0

    def __next__(self):
        batch = next(self.it)
        self.t_loaded = time.monotonic_ns()
        return batch


class Timed(resnet_seed.Run):
    """resnet_seed's step itself (the traced workload's lines), the load timed around it."""

    def step(self):
        if not isinstance(self.it, TimedLoads):
            self.it = TimedLoads(self.it)
        t0 = time.monotonic_ns()
        super().step()
        return t0, self.it.t_loaded, time.monotonic_ns()


def main():
    form = os.environ.get("FORM", "l")
    steps = int(os.environ.get("STEPS", "150"))
    torch.manual_seed(0)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    r = Timed(form)
    for i in range(3):
        r.step()
    torch.cuda.synchronize()
    for i in range(steps):
        torch.manual_seed(2000 + i % 8)
        t0, tl, t1 = r.step()
        print(f"STEP {i} {t0} {tl} {t1}", flush=True)
    torch.cuda.synchronize()
    r.close()


if __name__ == "__main__":
    main()
