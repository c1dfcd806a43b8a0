"""Holdout workload `holdout_accum` (scripts/gpu-holdout.sh): gradient accumulation fed by a
DataLoader with too few workers.

Written after the lost lead's copies (docs/CLASSIFICATION.md) as a loop no rule was tuned on:
torchvision ResNet-50, bf16 autocast, channels-last, SGD with momentum; each iteration
accumulates the gradients of 4 micro-batches of 64 images (FakeData with real CPU transforms:
RandomResizedCrop, flip, ToTensor, Normalize; pinned batches copied with non_blocking=True),
then steps the optimizer. Causes, alone and together:

  w  the DataLoader has 3 worker processes, too few for the GPU's pace (the main thread waits on
     their queue); without it 12
  i  each micro-batch's loss read as a Python float to keep a running mean (`loss.item()`, 4
     syncs per iteration); without it the losses are summed on the GPU and read at the end

  n  (not a cause: the loop's form) the optimizer without foreach kernels (SGD with
     foreach=False: a few kernels per parameter, none of them a multi-tensor kernel); forms wn
     (with w's loader) and n (with the fixed one), added in session 17 after GPU run 67
  m  the DataLoader in the main thread (num_workers=0, its batches pinned there): between
     micro-batches the main thread returns from backward() and loads the next batch while the
     autograd thread's kernels drain, then copies it, with no optimizer launch in between
     (added in session 40 for the hand-off of gradient accumulation, issue 11)
  mr m with each micro-batch's loss kept in a Python list (`loss.detach()`, no launch) and summed
     after the optimizer's step: the main thread makes no CUDA call from backward()'s return to
     the next batch's copy, the case the hand-over's CPU-time bound is for (session 40)

Forms: wi, w, i, fixed, wn, n, m. An iteration (one optimizer step) is the loop's step. Truth rows (ROWS):
step(form) - step(form without the cause), untraced, in the traced process's own rounds (run
with BENCH_REUSE=1: each form's loader starts once).
"""
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from holdout_loader import shared  # ResNet-50, channels-last, SGD with momentum
from resnet_seed import dataset  # the seed's FakeData and CPU transforms
from scenario_common import Runner, main

B, MICRO = 64, 4
FORMS = ["wi", "w", "i", "fixed", "wn", "n", "m", "mr"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("data_starvation", ["data_starvation"], "wi", "i", "data_starvation"),
    ("serialization", ["serialization"], "wi", "w", "serialization"),
    ("data_starvation", ["data_starvation"], "w", "fixed", "data_starvation"),
    ("serialization", ["serialization"], "i", "fixed", "serialization"),
    ("data_starvation", ["data_starvation"], "wn", "n", "data_starvation"),
    ("data_starvation", ["data_starvation"], "m", "fixed", "data_starvation"),
    ("data_starvation", ["data_starvation"], "mr", "fixed", "data_starvation"),
]
_PER_PARAM = []


def per_param_sgd(model):
    """The same SGD with momentum, stepped a parameter at a time (foreach=False)"""
    if not _PER_PARAM:
        _PER_PARAM.append(torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9,
                                          foreach=False))
    return _PER_PARAM[0]
# (the model and the dataset were built here, the same, when GPU runs 66 and 67 traced it)


def loader_args(form):
    """The DataLoader's workers: 3 (w), none (m: the main thread loads), else 12"""
    if "m" in form:
        return {"num_workers": 0}
    return {"num_workers": 3 if "w" in form else 12, "persistent_workers": True,
            "prefetch_factor": 4, "multiprocessing_context": "fork"}


class Run(Runner):
    def __init__(self, form):
        causes = "" if form == "fixed" else form
        self.read = "i" in causes
        self.listed = form == "mr"  # the losses kept in a list, summed after the step
        self.model, self.opt = shared()
        if "n" in form:
            self.opt = per_param_sgd(self.model)
        self.model.train()
        self.crit = nn.CrossEntropyLoss()
        self.dl = DataLoader(dataset(), batch_size=B, shuffle=False, pin_memory=True,
                             **loader_args(form))
        self.it = iter(self.dl)
        time.sleep(1.5)  # let the workers start and fill their queues (not timed)
        self.seen, self.total, self.n = [], torch.zeros((), device="cuda"), 0

    def step(self):
        self.opt.zero_grad(set_to_none=True)
        for _ in range(MICRO):
            x, y = next(self.it)
            x = x.cuda(non_blocking=True).to(memory_format=torch.channels_last)
            y = y.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = self.crit(self.model(x), y) / MICRO
            loss.backward()
            if self.read:
                self.seen.append(loss.item())
            elif self.listed:
                self.seen.append(loss.detach())
            else:
                self.total += loss.detach()
            self.n += 1
        self.opt.step()
        if self.listed:
            self.total += torch.stack(self.seen[-MICRO:]).sum()
        del self.seen[:-400]

    def close(self):
        self.total.item()
        del self.it
        del self.dl


if __name__ == "__main__":
    main("holdout_accum", FORMS, Run, steps=6, warmup=2)
