"""Holdout workload `holdout_epochs` (scripts/gpu-holdout.sh): short epochs, loader workers restarted.

Written after the rules of session 20 (docs/CLASSIFICATION.md) as a loop no rule was tuned on:
torchvision ResNet-50 (bf16 autocast, channels-last, SGD with momentum; holdout_loader's model)
trained on a small dataset (the seed's FakeData and CPU transforms, EPOCH=12 batches of 64
images), epoch after epoch, with a DataLoader of 12 worker processes, pinned batches,
non_blocking copies. The loop's iteration is the training step; an epoch ends every 12th.
Forms:

  e      the DataLoader's default persistent_workers=False: each epoch's iterator forks 12 new
         workers, and the first batch of the epoch waits for one of them to start and load it
         (64 images decoded and transformed) while the GPU waits; the old workers are joined
         when the epoch ends
  p      persistent_workers=True, the usual advice: the workers live across epochs, but they
         prefetch nothing across the epoch's end (the next epoch's indices come with its
         iterator), so the epoch's first batch still waits for a worker to load it
  fixed  one iterator over all the epochs (a sampler of EPOCH batches' worth of indices drawn
         again and again: RandomSampler with replacement, num_samples far past the run): the
         workers never stop prefetching

Truth rows (ROWS): step(e) - step(fixed) and step(p) - step(fixed), untraced, in the traced
process's own rounds (BENCH_REUSE=1; STEPS a multiple of EPOCH, so that each round's timed steps
hold the same number of epoch starts): the epoch's start shared out over the steps, data
starvation by the stall classes' definition (the GPU waits for the next batch).
"""
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, RandomSampler, Subset

from holdout_loader import shared, train_step  # ResNet-50, channels-last, SGD; its step
from resnet_seed import dataset  # the seed's FakeData and CPU transforms
from scenario_common import Runner, main

B, EPOCH, WORKERS = 64, 12, 12
FORMS = ["e", "p", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("data_starvation", ["data_starvation"], "e", "fixed", "data_starvation"),
    ("data_starvation", ["data_starvation"], "p", "fixed", "data_starvation"),
]


class Run(Runner):
    def __init__(self, form):
        self.model, self.opt = shared()
        self.model.train()
        self.crit = nn.CrossEntropyLoss()
        data = Subset(dataset(), range(B * EPOCH))
        kw = dict(batch_size=B, drop_last=True, pin_memory=True, num_workers=WORKERS,
                  persistent_workers=form != "e", prefetch_factor=2, multiprocessing_context="fork")
        if form == "fixed":  # one iterator for the whole run: no epoch ends
            kw["sampler"] = RandomSampler(data, replacement=True, num_samples=B * 10**6)
        else:
            kw["shuffle"] = True
        self.dl = DataLoader(data, **kw)
        self.it = iter(self.dl)
        time.sleep(1.5)  # let the first workers start (not timed)
        self.losses = []
        self.epochs = 0

    def batch(self):
        try:
            return next(self.it)
        except StopIteration:  # the epoch's end: a new epoch's iterator
            self.epochs += 1
            self.it = iter(self.dl)
            return next(self.it)

    def step(self):
        x, y = self.batch()
        train_step(self.model, self.opt, self.crit, x, y, self.losses)
        del self.losses[:-100]

    def close(self):
        if self.losses:
            torch.stack(self.losses).cpu()
        del self.it
        del self.dl


if __name__ == "__main__":
    main("holdout_epochs", FORMS, Run, steps=24, warmup=2)
