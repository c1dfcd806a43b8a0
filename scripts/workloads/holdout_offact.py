"""Holdout workload `holdout_offact` (scripts/gpu-holdout.sh): activations offloaded to the CPU.

Written in session 49, after every rule of docs/CLASSIFICATION.md: a model trained with its saved
activations kept in host memory, to fit a larger batch or model in device memory
(`torch.autograd.graph.save_on_cpu`, the documented recipe, or the same hooks written by hand).
An MLP of 8 blocks (Linear 4096 -> 4096, GELU; bf16 weights) trains with SGD on batches of 2048
random inputs made on the GPU (no loader). Each tensor autograd saves in the forward pass (a
Linear's input, a GELU's input: 16 MB each, 256 MB a step) goes to the host as it is saved and
comes back when the backward pass needs it. The library does the copies; the user's code names
none of them. Forms:

  pageable  `save_on_cpu(pin_memory=False)`: each save is `tensor.cpu()` (the host waits for the
            GPU's queue, then for a copy into pageable memory), each use a blocking copy back
  pinned    `save_on_cpu(pin_memory=True)`: each save a copy into page-locked memory that the
            host still waits for (`copy_` without non_blocking), each use a non_blocking copy
            back on the compute stream
  fixed     the activations kept on the GPU (the usual fix where the memory allows it)

Truth rows (ROWS): step(pageable) - step(pinned), the pageable copies' cost (copy + copy stall by
the stall classes' definitions); step(pinned) - step(fixed), what offloading costs at its best
here: the copies the GPU runs with nothing beside them (the class `copy`, exposed copies) and the
host's wait at each save (serialization), which the fix takes off together. Untraced, in the
traced process's own rounds (BENCH_REUSE=1).
"""
import torch
import torch.nn as nn

from scenario_common import Runner, main

B, W, L = 2048, 4096, 8
FORMS = ["pageable", "pinned", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("copy + copy_stall", ["copy", "copy_stall"], "pageable", "pinned", "copy_and_copy_stall"),
    ("copy + copy_stall", ["copy", "copy_stall", "serialization"], "pinned", "fixed",
     "all_but_launch_overhead"),
]
_SHARED = []


def shared():
    if not _SHARED:
        torch.manual_seed(0)
        blocks = []
        for _ in range(L):
            blocks += [nn.Linear(W, W), nn.GELU()]
        m = nn.Sequential(*blocks, nn.Linear(W, 1)).cuda().to(torch.bfloat16)
        opt = torch.optim.SGD(m.parameters(), lr=1e-4, momentum=0.9, foreach=True)
        _SHARED.extend([m, opt, torch.Generator(device="cuda").manual_seed(0)])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        self.m, self.opt, self.gen = shared()
        self.form = form

    def step(self):
        x = torch.randn(B, W, device="cuda", dtype=torch.bfloat16, generator=self.gen)
        y = torch.randn(B, 1, device="cuda", dtype=torch.bfloat16, generator=self.gen)
        self.opt.zero_grad(set_to_none=True)
        if self.form == "fixed":
            loss = ((self.m(x) - y) ** 2).mean()
            loss.backward()
        else:
            with torch.autograd.graph.save_on_cpu(pin_memory=self.form == "pinned"):
                loss = ((self.m(x) - y) ** 2).mean()
                loss.backward()
        self.opt.step()


if __name__ == "__main__":
    main("holdout_offact", FORMS, Run, steps=20, warmup=3)
