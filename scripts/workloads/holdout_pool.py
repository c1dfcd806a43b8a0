"""Holdout workload `holdout_pool` (scripts/gpu-holdout.sh): a loader written in NumPy, run by a
thread pool.

Written in session 34 as a loop no rule was tuned on: torchvision ResNet-50 (holdout_loader's
model and step: bf16 autocast, channels-last, SGD) on batches of 64 images that the script makes
itself, in NumPy, as many scripts do when their data is not images on disk (or decode with
OpenCV, which has no Python frames either): each sample a 256 x 256 x 3 uint8 array drawn from
its seed (the stand-in for a decoded file), cropped at random to 224, flipped, scaled to float32
and normalized, then made channels-first. No data-loading library runs: the loader's frames are
the script's own. Forms:

  m      the main thread makes each batch, then pins and copies it
  p      a ThreadPoolExecutor of 2 threads makes the samples of the next 2 batches ahead (NumPy
         releases the GIL inside its larger loops; the threads' Python between them takes it);
         the main thread waits on the futures, stacks, pins and copies each batch. The threads
         never call CUDA
  fixed  the same samples made by a DataLoader's 12 worker processes (persistent, pinned,
         prefetching): the GPU's step is the pace

Truth rows (ROWS): step(form) - step(fixed) for m and p, untraced, in the traced process's own
rounds (BENCH_REUSE=1): data starvation by the stall classes' definition.
"""
import time

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

from holdout_io import PoolLoader  # a pool making samples ahead, the main thread pinning
from holdout_loader import shared, train_step  # ResNet-50, channels-last, SGD; its step
from scenario_common import Runner, main

B, SIDE, CROP, THREADS = 64, 256, 224, 2  # B and the batches ahead (2): holdout_io's
FORMS = ["m", "p", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("data_starvation", ["data_starvation"], "m", "fixed", "data_starvation"),
    ("data_starvation", ["data_starvation"], "p", "fixed", "data_starvation"),
]
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32) * 255
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32) * 255


def sample(i):
    """Sample i as the script makes it: (3 x CROP x CROP float32 array, label)"""
    rng = np.random.default_rng(i)
    img = rng.integers(0, 256, (SIDE, SIDE, 3), dtype=np.uint8)
    y0, x0 = rng.integers(0, SIDE - CROP + 1, 2)
    img = img[y0:y0 + CROP, x0:x0 + CROP]
    if rng.random() < 0.5:
        img = img[:, ::-1]
    x = (img.astype(np.float32) - MEAN) / STD
    return np.ascontiguousarray(x.transpose(2, 0, 1)), i % 1000


def collate(items):
    x = torch.from_numpy(np.stack([a for a, _ in items]))
    return x, torch.tensor([lab for _, lab in items])


class Samples(Dataset):
    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        return sample(i)


class MainLoader:
    def __init__(self):
        self.b = 0

    def __next__(self):
        items = [sample(i) for i in range(self.b * B, (self.b + 1) * B)]
        self.b += 1
        x, y = collate(items)
        return x.pin_memory(), y.pin_memory()


class Run(Runner):
    def __init__(self, form):
        self.model, self.opt = shared()
        self.model.train()
        self.crit = nn.CrossEntropyLoss()
        if form == "m":
            self.it = MainLoader()
        elif form == "p":
            self.it = PoolLoader(THREADS, sample, collate)
        else:
            self.dl = DataLoader(Samples(), batch_size=B, shuffle=False, num_workers=12,
                                 pin_memory=True, persistent_workers=True, prefetch_factor=4,
                                 multiprocessing_context="fork", collate_fn=collate)
            self.it = iter(self.dl)
            time.sleep(1.5)  # let the workers start (not timed)
        self.losses = []

    def step(self):
        x, y = next(self.it)
        train_step(self.model, self.opt, self.crit, x, y, self.losses)
        del self.losses[:-100]

    def pause(self):
        if isinstance(self.it, PoolLoader):
            self.it.pause()

    def close(self):
        if self.losses:
            torch.stack(self.losses).cpu()
        if isinstance(self.it, PoolLoader):
            self.it.close()
        del self.it


if __name__ == "__main__":
    main("holdout_pool", FORMS, Run, steps=20, warmup=3)
