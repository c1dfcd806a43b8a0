"""Holdout workload `holdout_timing` (scripts/gpu-holdout.sh): a training loop that times each of
its steps.

Written in session 43, after every rule of docs/CLASSIFICATION.md, as a loop no rule was tuned
on: holdout_alloc's transformer encoder (8 layers, d=1024, a tied 8192-token head; bf16
autocast, fused AdamW) on batches of 16 sequences of 1024 tokens made on the GPU, a GPU-bound
step (its kernels 42 ms a step on an H100, GPU run 153; the host's 704 launches about 16 ms at
the 23.6 us apart that GPU run 151's untraced tail measured for the same model). Training scripts
time their steps, and most do it the way that waits for the GPU:

  sync   `torch.cuda.synchronize()` and a host clock at the end of every step, the step's time
         kept for a log: the GPU runs dry at each, and the next step's first launches start the
         queue again
  ev     CUDA events around each step, `end.synchronize()` and `start.elapsed_time(end)` right
         after it (what benchmark code recommends): the same wait
  fixed  the same events, each step's time read a step later (its end event long done): no wait

Truth rows (ROWS): step(sync) - step(fixed) and step(ev) - step(fixed), untraced, in the traced
process's own rounds. On a GPU-bound step the wait costs little (the host's lead, lost and made
up again): near or under the healthy bar of 2%, where slack should name no stall.
"""
import time

import torch

from holdout_alloc import Net, V, train
from scenario_common import Runner, main

B, L = 16, 1024
FORMS = ["sync", "ev", "fixed"]
ROWS = [("serialization", ["serialization"], "sync", "fixed", "serialization"),
        ("serialization", ["serialization"], "ev", "fixed", "serialization")]
_SHARED = []


def shared():
    if not _SHARED:
        torch.manual_seed(0)
        model = Net().cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        g = torch.Generator(device="cuda").manual_seed(1)
        xs = [torch.randint(0, V, (B, L + 1), device="cuda", generator=g) for _ in range(4)]
        _SHARED.extend([model, opt, xs])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        self.model, self.opt, self.xs = shared()
        self.form = form
        self.i = 0
        self.losses, self.times = [], []
        self.pending = None

    def step(self):
        x = self.xs[self.i % len(self.xs)]
        self.i += 1
        if self.form == "sync":
            t0 = time.perf_counter()
            self.losses.append(train(self.model, self.opt, x))
            torch.cuda.synchronize()
            self.times.append(time.perf_counter() - t0)
        else:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            self.losses.append(train(self.model, self.opt, x))
            end.record()
            if self.form == "ev":
                end.synchronize()
                self.times.append(start.elapsed_time(end))
            else:
                if self.pending:  # the step before's events: done by now
                    a, b = self.pending
                    b.synchronize()
                    self.times.append(a.elapsed_time(b))
                self.pending = (start, end)
        del self.losses[:-100]
        del self.times[:-100]

    def close(self):
        if self.losses:
            torch.stack(self.losses).sum().item()


if __name__ == "__main__":
    main("holdout_timing", FORMS, Run, steps=30, warmup=5)
