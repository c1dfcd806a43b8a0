"""Holdout workload `holdout_gc` (scripts/gpu-holdout.sh): host work before each batch's copy that
is not a loader's.

Written in session 45, after every rule of docs/CLASSIFICATION.md: `gc.collect()` after every
optimizer step, a habit of scripts that chase host memory, in a process whose Python heap holds
300,000 small lists (a dataset's index kept as Python objects, as many scripts keep one;
lists, since the collector stops tracking tuples of plain values after its first pass).
torchvision ResNet-18 (bf16 autocast, channels-last, SGD with momentum) on batches of 128
pinned uint8 images from a ring of 4 made at start (no loader), copied with non_blocking=True.

  gc     `gc.collect()` after each optimizer step: a full collection walks the heap while the
         GPU runs out of queued work, then the next batch's copy and forward pass
  fixed  no collection in the loop
  pf     fixed with each batch copied on a side stream one step ahead (the prefetcher of
         holdout_streams' fixed form), the compute stream waiting for it by wait_stream: written
         in session 46, after GPU run 163 read `fixed` (ResNet-18's 19 MB batch copied on the
         compute stream, 0.45 ms of the step with no kernel beside it) as a copy stall of 2.9% of
         the step, its fix a side-stream prefetch, which no form measured

Truth rows (ROWS): step(gc) - step(fixed), untraced, in the traced process's own rounds; the
copies' saving, step(fixed) - step(pf). No stall
class names this cause (the host's own work, outside CUDA, before the batch's copy): slack's rules
read host work that ends in the batch's copy as data starvation, and the report's fix text, where
the thread's samples are in no data-loading library, names the lines and says to take work that
does not build the batch off the step (docs/CLASSIFICATION.md, the fixes). Its rows are read
against data starvation: GPU run 163 (windowed) 149.19 ms against 148.62 measured, run 165
(recorded whole) 154.04 against 161.07, both with that fix (docs/ACCURACY.md, "Runs 163 to 165").
"""
import gc

import torch
import torch.nn as nn
import torchvision

from scenario_common import Runner, main

B, OBJECTS = 128, 300_000
FORMS = ["gc", "fixed", "pf"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("data_starvation", ["data_starvation"], "gc", "fixed", "data_starvation"),
    ("copy + copy_stall", ["copy", "copy_stall"], "fixed", "pf", "copy_and_copy_stall"),
]
_SHARED = []


def shared():
    if not _SHARED:
        torch.manual_seed(0)
        m = torchvision.models.resnet18().cuda().to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
        g = torch.Generator().manual_seed(3)
        ring = []
        for _ in range(4):
            x = torch.randint(0, 256, (B, 3, 224, 224), dtype=torch.uint8, generator=g)
            y = torch.randint(0, 1000, (B,), generator=g)
            ring.append((x.pin_memory(), y.pin_memory()))
        index = [[i, str(i), i * 0.5] for i in range(OBJECTS)]  # a dataset's index in Python
        _SHARED.extend([m, opt, ring, index, torch.cuda.Stream()])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        self.model, self.opt, self.ring, self.index, self.side = shared()
        self.model.train()
        self.crit = nn.CrossEntropyLoss()
        self.collect = form == "gc"
        self.prefetch = form == "pf"
        self.next = None
        self.i = 0
        self.losses = []

    def copy(self):
        """the next batch's copy to the device: on the compute stream, or (pf) on the side stream"""
        x, y = self.ring[self.i % len(self.ring)]
        self.i += 1
        if not self.prefetch:
            return x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        with torch.cuda.stream(self.side):
            return x.cuda(non_blocking=True), y.cuda(non_blocking=True)

    def step(self):
        if self.prefetch:
            if self.next is None:
                self.next = self.copy()
            cur = torch.cuda.current_stream()
            cur.wait_stream(self.side)
            x, y = self.next
            x.record_stream(cur)
            y.record_stream(cur)
            self.next = self.copy()
        else:
            x, y = self.copy()
        x = x.float().div_(255).contiguous(memory_format=torch.channels_last)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = self.crit(self.model(x), y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.losses.append(loss.detach())
        del self.losses[:-100]
        if self.collect:
            gc.collect()

    def close(self):
        if self.losses:
            torch.stack(self.losses).cpu()


if __name__ == "__main__":
    main("holdout_gc", FORMS, Run, steps=20, warmup=3)
