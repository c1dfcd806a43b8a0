"""Holdout workload `holdout_pin` (scripts/gpu-holdout.sh): a DataLoader whose pin-memory thread
is the bottleneck.

Written in session 43, after every rule of docs/CLASSIFICATION.md, as a loop no rule was tuned
on: torchvision ResNet-18 (bf16 autocast, channels-last, SGD) on batches of 64 images of 448x448
made by 12 persistent DataLoader workers with pin_memory=True, copied with non_blocking=True. The
workers keep up; the DataLoader's one pin-memory thread in the training process copies every
batch into page-locked memory before the loop can take it:

  f32    the workers return float32 images (154 MB a batch to pin)
  fixed  the workers return uint8 images (38 MB a batch to pin), made float and scaled on the GPU
         after the copy

Truth row (ROWS): step(f32) - step(fixed), untraced, in the traced process's own rounds.
"""
import time

import torch
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader, Dataset

from scenario_common import Runner, main

B, H = 64, 448
FORMS = ["f32", "fixed"]
ROWS = [("data_starvation", ["data_starvation"], "f32", "fixed", "data_starvation")]
_SHARED = []


class Images(Dataset):
    def __init__(self, u8):
        self.u8 = u8

    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        if self.u8:
            x = torch.randint(0, 256, (3, H, H), dtype=torch.uint8, generator=g)
        else:
            x = torch.rand(3, H, H, generator=g)
        return x, i % 1000


def shared():
    if not _SHARED:
        torch.manual_seed(0)
        m = torchvision.models.resnet18().cuda().to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
        _SHARED.extend([m, opt])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        self.model, self.opt = shared()
        self.u8 = form == "fixed"
        self.dl = DataLoader(Images(self.u8), batch_size=B, num_workers=12, pin_memory=True,
                             persistent_workers=True, prefetch_factor=4,
                             multiprocessing_context="fork")
        self.it = iter(self.dl)
        time.sleep(2.0)  # the workers start and fill their queue (not timed)
        self.losses = []

    def step(self):
        x, y = next(self.it)
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        if self.u8:
            x = x.float().div_(255)
        x = x.contiguous(memory_format=torch.channels_last)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(self.model(x), y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.losses.append(loss.detach())
        del self.losses[:-100]

    def close(self):
        if self.losses:
            torch.stack(self.losses).sum().item()
        del self.it, self.dl


if __name__ == "__main__":
    main("holdout_pin", FORMS, Run, steps=30, warmup=5)
