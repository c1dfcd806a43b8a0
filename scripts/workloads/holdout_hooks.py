"""Holdout workload `holdout_hooks` (scripts/gpu-holdout.sh): a per-layer timer left on.

Written in session 49, after every rule of docs/CLASSIFICATION.md: forward hooks that time each
block of a model, the kind written once to find a slow layer and left in the training script.
torchvision's ViT-B/16 (bf16 autocast, SGD with momentum) on batches of 64 images of 224 x 224
made on the GPU (no loader). Forms:

  sync    a forward pre-hook and a forward hook on each of the 12 encoder blocks call
          `torch.cuda.synchronize()` and read `time.perf_counter()`: 24 waits for the GPU in each
          forward pass, the times kept in a Python list
  events  the same hooks record CUDA events instead (no wait), and the times are read once
          every 50 steps (the usual fix that keeps the timer)
  fixed   no hooks

Truth rows (ROWS): step(sync) - step(fixed), the waits (serialization by the stall classes'
definitions: the host waits for the GPU, then the GPU waits for the host's next launches);
step(events) - step(fixed), what the events cost (a healthy form: no stall of note). Untraced, in
the traced process's own rounds (BENCH_REUSE=1).
"""
import time

import torch
import torch.nn as nn
import torchvision

from scenario_common import Runner, main

B, READ_EVERY = 64, 50
FORMS = ["sync", "events", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "sync", "fixed", "serialization"),
]
_SHARED = []


def shared():
    if not _SHARED:
        torch.manual_seed(0)
        m = torchvision.models.vit_b_16().cuda()
        opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9, foreach=True)
        _SHARED.extend([m, opt, torch.Generator(device="cuda").manual_seed(0)])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        self.m, self.opt, self.gen = shared()
        self.crit = nn.CrossEntropyLoss()
        self.form = form
        self.times, self.pending, self.handles, self.n = [], [], [], 0
        # the model is shared by every form's runner in the rounds (BENCH_REUSE=1): the hooks
        # act only inside this runner's own step
        self.on = False
        if form == "fixed":
            return
        for i, blk in enumerate(self.m.encoder.layers):
            self.handles.append(blk.register_forward_pre_hook(self.mark(i, "in")))
            self.handles.append(blk.register_forward_hook(self.mark(i, "out")))

    def mark(self, i, where):
        if self.form == "sync":
            def hook(*_):
                if not self.on:
                    return
                torch.cuda.synchronize()  # the timer's wait
                self.times.append((i, where, time.perf_counter()))
        else:
            def hook(*_):
                if not self.on:
                    return
                e = torch.cuda.Event(enable_timing=True)
                e.record()
                self.pending.append((i, where, e))
        return hook

    def step(self):
        x = torch.randn(B, 3, 224, 224, device="cuda", generator=self.gen)
        y = torch.randint(0, 1000, (B,), device="cuda", generator=self.gen)
        self.opt.zero_grad(set_to_none=True)
        self.on = True
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = self.crit(self.m(x), y)
        self.on = False
        loss.backward()
        self.opt.step()
        self.n += 1
        if self.form == "events" and self.n % READ_EVERY == 0 and self.pending:
            self.pending[-1][2].synchronize()
            first = self.pending[0][2]
            self.times.extend((i, w, first.elapsed_time(e)) for i, w, e in self.pending)
            self.pending.clear()
        del self.times[:-10000]  # the timer's log, bounded

    def close(self):
        for h in self.handles:
            h.remove()
        self.handles.clear()


if __name__ == "__main__":
    main("holdout_hooks", FORMS, Run, steps=30, warmup=5)
