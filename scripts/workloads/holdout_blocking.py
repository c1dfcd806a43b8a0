"""Holdout workload `holdout_blocking` (scripts/gpu-holdout.sh): batches already pinned, copied
without non_blocking.

Written in session 45, after every rule of docs/CLASSIFICATION.md, as a loop no rule was tuned
on: the copy most training scripts make, `x = x.cuda()` (or `.to(device)`) of a batch the
DataLoader has already pinned (pin_memory=True), without `non_blocking=True`. PyTorch queues the
copy and then waits for it (cudaMemcpyAsync, then a stream synchronize), so the host stops
launching until the GPU has run everything queued before the copy and the copy itself.
torchvision ResNet-50 (holdout_loader's: bf16 autocast, channels-last, SGD with momentum) on
batches of 128 uint8 images (19 MB pinned) and their labels, made float and normalized on the
GPU after the copy. The batches come from a ring of 4 pinned host batches made at start: no
loader, whose pace is not what is measured here.

  b      `x.cuda()`, `y.cuda()`: each step's host waits for the previous step's backward pass
         and optimizer step to finish on the GPU, then the GPU waits while the host launches the
         next forward pass until the host is ahead again
  fixed  the same copies with non_blocking=True

A GPU-bound step: the cost is the GPU's wait for the first launches after each copy's wait, a
small share of the step. Truth row (ROWS): step(b) - step(fixed), untraced, in the traced
process's own rounds; a healthy step if it stays under 2% of the step.
"""
import torch
import torch.nn as nn

from holdout_loader import shared  # ResNet-50, channels-last, SGD with momentum
from scenario_common import Runner, main

B = 128
FORMS = ["b", "fixed"]
ROWS = [("copy_stall", ["copy_stall"], "b", "fixed", "copy_stall")]
_BATCHES = []


def batches():
    if not _BATCHES:
        g = torch.Generator().manual_seed(3)
        for _ in range(4):
            x = torch.randint(0, 256, (B, 3, 224, 224), dtype=torch.uint8, generator=g)
            y = torch.randint(0, 1000, (B,), generator=g)
            _BATCHES.append((x.pin_memory(), y.pin_memory()))
    return _BATCHES


class Run(Runner):
    def __init__(self, form):
        self.model, self.opt = shared()
        self.model.train()
        self.crit = nn.CrossEntropyLoss()
        self.nb = form == "fixed"
        self.batches = batches()
        self.mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255
        self.std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255
        self.i = 0
        self.losses = []

    def step(self):
        x, y = self.batches[self.i % len(self.batches)]
        self.i += 1
        x = x.cuda(non_blocking=self.nb)
        y = y.cuda(non_blocking=self.nb)
        x = ((x.float() - self.mean) / self.std).contiguous(memory_format=torch.channels_last)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = self.crit(self.model(x), y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.losses.append(loss.detach())
        del self.losses[:-100]

    def close(self):
        if self.losses:
            torch.stack(self.losses).cpu()


if __name__ == "__main__":
    main("holdout_blocking", FORMS, Run, steps=20, warmup=3)
