"""Holdout workload `holdout_graphs` (scripts/gpu-holdout.sh): a CUDA-graphed step behind its loader.

Written after the rules of session 20 (docs/CLASSIFICATION.md) as a loop no rule was tuned on:
torchvision ResNet-50 (bf16 autocast, channels-last, AdamW capturable) whose whole training step
is captured once as a CUDA graph (PyTorch's whole-network capture: scenario_common.capture_step)
and replayed each iteration after the batch is copied into its static input buffers. The
batches: the seed's FakeData images with CPU transforms (RandomResizedCrop to 160, flip,
normalize), batch 64. Each iteration is a copy or two and one graph launch: no launch overhead
left to blame. Forms:

  l      the DataLoader in the main thread (num_workers=0), pageable batches copied with
         blocking copies: the host decodes and transforms each batch while the GPU waits
  fixed  12 worker processes, persistent, pinned batches, non_blocking copies

Truth row (ROWS): step(l) - step(fixed), untraced, in the traced process's own rounds
(BENCH_REUSE=1): the loader's work and its pageable copies (data starvation and copy stall
summed), against slack's data starvation what-if.
"""
import time

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader

from resnet_seed import dataset  # the seed's FakeData and CPU transforms (cropped to SIZE here)
from scenario_common import Runner, capture_step, main

B, SIZE = 64, 160
FORMS = ["l", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("data_starvation", ["data_starvation", "copy_stall"], "l", "fixed", "data_starvation"),
]


class Run(Runner):
    def __init__(self, form):
        torch.manual_seed(0)
        self.main_loader = form == "l"
        m = torchvision.models.resnet50(num_classes=1000).cuda().to(
            memory_format=torch.channels_last)
        opt = torch.optim.AdamW(m.parameters(), lr=1e-4, capturable=True)
        crit = nn.CrossEntropyLoss()
        sx = torch.randn(B, 3, SIZE, SIZE, device="cuda").to(memory_format=torch.channels_last)
        sy = torch.randint(0, 1000, (B,), device="cuda")

        def body():
            with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
                loss = crit(m(sx), sy)
            loss.backward()
            opt.step()

        self.graph, self.sx, self.sy = capture_step(opt, body), sx, sy
        kw = dict(batch_size=B, shuffle=False, drop_last=True)
        if not self.main_loader:
            kw.update(num_workers=12, pin_memory=True, persistent_workers=True, prefetch_factor=4,
                      multiprocessing_context="fork")
        self.dl = DataLoader(dataset(SIZE), **kw)
        self.it = iter(self.dl)
        if not self.main_loader:
            time.sleep(1.5)  # let the workers start and fill their queues (not timed)

    def step(self):
        x, y = next(self.it)
        nb = not self.main_loader
        self.sx.copy_(x, non_blocking=nb)  # pageable in `l`: the host waits for each copy
        self.sy.copy_(y, non_blocking=nb)
        self.graph.replay()

    def close(self):
        del self.it, self.dl


if __name__ == "__main__":
    main("holdout_graphs", FORMS, Run, steps=12, warmup=3)
