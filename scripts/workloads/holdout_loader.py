"""Holdout workload `holdout_loader` (scripts/gpu-holdout.sh): a DataLoader with too few workers.

torchvision ResNet-50, bf16 autocast, channels-last, batch 128, SGD with momentum, on FakeData
with CPU transforms (RandomResizedCrop, flip, ToTensor, Normalize); pinned batches copied with
non_blocking=True in every form, so only the loader differs:

  w0     the DataLoader in the main thread (num_workers=0)
  w2     two worker processes: the main thread waits on their queue for most of each step
  w2u    the same with the DataLoader's defaults otherwise (pin_memory=False: no pin-memory
         thread, the main thread waits on the workers' queue itself, and its non_blocking copies
         come from pageable memory; session 33)
  w2s    w2 with the loss read every step (`loss.item()` for a progress bar): a sync on a loop
         that waits for its loader, whose removal saves next to nothing (session 33)
  fixed  12 worker processes, persistent, prefetching: the GPU's step is the pace

Truth rows (ROWS): a form's data starvation is step(form) - step(fixed), untraced, in the traced
process's own rounds (the runners kept across rounds: BENCH_REUSE=1); w2s's serialization is
step(w2s) - step(w2), its data starvation step(w2s) - step(fixed).
"""
import time

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader
from resnet_seed import dataset  # the seed's FakeData and CPU transforms
from scenario_common import Runner, main

B = 128
FORMS = ["w0", "w2", "w2u", "w2s", "fixed"]
WORKERS = {"w0": 0, "w2": 2, "w2u": 2, "w2s": 2, "fixed": 12}
ROWS = [
    ("data_starvation", ["data_starvation"], "w0", "fixed", "data_starvation"),
    ("data_starvation", ["data_starvation"], "w2", "fixed", "data_starvation"),
    ("data_starvation", ["data_starvation"], "w2u", "fixed", "data_starvation"),
    ("data_starvation", ["data_starvation"], "w2s", "fixed", "data_starvation"),
    ("serialization", ["serialization"], "w2s", "w2", "serialization"),
]
_SHARED = []


def shared():
    if not _SHARED:
        m = torchvision.models.resnet50(num_classes=1000).cuda().to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
        _SHARED.extend([m, opt])
    return _SHARED


def train_step(model, opt, crit, x, y, losses):
    """One step of the shared ResNet-50 on a host batch (pinned: non_blocking copies), its loss
    kept on the GPU in `losses` (holdout_epochs and holdout_threads train the same way)"""
    x = x.cuda(non_blocking=True).to(memory_format=torch.channels_last)
    y = y.cuda(non_blocking=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = crit(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    losses.append(loss.detach())


class Run(Runner):
    def __init__(self, form):
        self.model, self.opt = shared()
        self.model.train()
        self.crit = nn.CrossEntropyLoss()
        n = WORKERS[form]
        kw = dict(batch_size=B, shuffle=False, pin_memory=form != "w2u", num_workers=n)
        if n:
            kw.update(persistent_workers=True, prefetch_factor=2, multiprocessing_context="fork")
        self.dl = DataLoader(dataset(), **kw)
        self.it = iter(self.dl)
        if n:
            time.sleep(1.5)  # let the workers start (not timed)
        self.losses = []
        self.read = form == "w2s"

    def step(self):
        x, y = next(self.it)
        train_step(self.model, self.opt, self.crit, x, y, self.losses)
        if self.read:
            self.shown = self.losses.pop().item()

    def close(self):
        if self.losses:
            torch.stack(self.losses).cpu()
        del self.it
        del self.dl


if __name__ == "__main__":
    main("holdout_loader", FORMS, Run, steps=10, warmup=3)
