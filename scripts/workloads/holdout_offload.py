"""Holdout workload `holdout_offload` (scripts/gpu-holdout.sh): the optimizer offloaded to the CPU.

Written after the rules of session 19 (docs/CLASSIFICATION.md) as a loop no rule was tuned on:
the shape of an optimizer offload (ZeRO-Offload's, or a hand-written one to save GPU memory). An
MLP of 8 blocks (Linear 2048 -> 2048, GELU; 33.6 M parameters, fp32) trains on batches of 1024
random inputs made on the GPU; its fp32 master weights and Adam's moments live in host memory.
Each iteration: forward and backward on the GPU, the gradients copied to the host, Adam on the
CPU (torch.optim.Adam, foreach, on the master weights), the weights copied back. Forms:

  o      pageable host buffers: each gradient's copy to the host and each weight's copy back is
         synchronous (the host waits on the GPU's queue, then on the copy)
  p      pinned host buffers: the copies non_blocking, one stream synchronize before the CPU's
         step (the gradients must have landed), the weights' copies back left queued
  fixed  Adam on the GPU (the usual fix where the memory allows it): nothing read back

Truth rows (ROWS): step(o) - step(p), the pinned copies' saving; step(p) - step(fixed), the
round trip to the CPU's optimizer (the host waits for the gradients, then the GPU waits for
the host's Adam: serialization, docs/CLASSIFICATION.md). Untraced, in the traced process's own
rounds (BENCH_REUSE=1).
"""
import torch
import torch.nn as nn

from scenario_common import Runner, main

B, D, L = 1024, 2048, 8
FORMS = ["o", "p", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("copy + copy_stall", ["copy", "copy_stall"], "o", "p", "copy_and_copy_stall"),
    ("serialization", ["serialization", "data_starvation"], "p", "fixed", "serialization"),
]
# the verdict's truth for `o` (scripts/holdout_table.py): the round trip's fix, the optimizer on
# the GPU, leaves no copy to fix either: step(o) - step(fixed) is what it saves there
VERDICT_ROWS = [("serialization", "o", "o", "fixed")]
_MODEL = []


def model():
    if not _MODEL:
        torch.manual_seed(0)
        blocks = []
        for _ in range(L):
            blocks += [nn.Linear(D, D), nn.GELU()]
        _MODEL.append(nn.Sequential(*blocks, nn.Linear(D, 1)).cuda())
    return _MODEL[0]


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.m = model()
        self.params = list(self.m.parameters())
        if form == "fixed":
            self.opt = torch.optim.Adam(self.params, lr=1e-4, foreach=True)
        else:
            pin = form == "p"
            # the master weights and their gradients in host memory, Adam's state with them
            self.master = [p.detach().to("cpu").clone() for p in self.params]
            if pin:
                self.master = [t.pin_memory() for t in self.master]
            self.grads = [torch.empty_like(t, pin_memory=pin) for t in self.master]
            for t, g in zip(self.master, self.grads):
                t.grad = g
            self.opt = torch.optim.Adam(self.master, lr=1e-4, foreach=True)
        self.gen = torch.Generator(device="cuda").manual_seed(0)

    def step(self):
        x = torch.randn(B, D, device="cuda", generator=self.gen)
        y = torch.randn(B, 1, device="cuda", generator=self.gen)
        loss = ((self.m(x) - y) ** 2).mean()
        if self.form == "fixed":
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            return
        for p in self.params:
            p.grad = None
        loss.backward()
        nb = self.form == "p"
        for p, g in zip(self.params, self.grads):
            g.copy_(p.grad, non_blocking=nb)  # pageable: each copy waits for the GPU
        if nb:
            torch.cuda.current_stream().synchronize()  # the gradients must have landed
        self.opt.step()  # Adam on the CPU
        with torch.no_grad():
            for p, t in zip(self.params, self.master):
                p.copy_(t, non_blocking=nb)


if __name__ == "__main__":
    main("holdout_offload", FORMS, Run, steps=10, warmup=3)
