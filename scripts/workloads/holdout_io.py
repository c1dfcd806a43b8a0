"""Holdout workload `holdout_io` (scripts/gpu-holdout.sh): a loader that waits on storage, not the CPU.

Written in session 33 as a loop no rule was tuned on: torchvision ResNet-50 (holdout_loader's
model and step: bf16 autocast, channels-last, SGD) trained on batches of 64 images of 160 x 160
read one file per sample from a store whose every request waits IO_LAT_MS (default 2 ms) before
its bytes come back: the shape of a dataset on a network file system or an object store (S3,
GCS), where a sample's cost is the request's latency, not the CPU. The latency is a sleep (the
thread waits, holds no GIL and uses no CPU, as in a socket's recv), then the file's bytes are read
from a local directory (written once per process) and viewed as a uint8 image; the batch is
pinned, copied non_blocking and normalized on the GPU. Forms:

  m      a DataLoader with num_workers=0: the main thread makes the 64 requests of each batch
         one after the other (128 ms a batch at 2 ms)
  t      a prefetcher of the kind written by hand for I/O-bound data: a ThreadPoolExecutor of 2
         threads fetching the samples of the next 2 batches (64 ms a batch at 2 ms): the main
         thread waits on the futures, the threads sleep in the requests, the main thread stacks
         and pins each batch
  w      a DataLoader with 2 worker processes and its defaults otherwise (pin_memory=False): the
         main thread waits on the workers' queue, each worker makes a whole batch
  fixed  a DataLoader with 16 worker processes, pinned, persistent, prefetching 4 batches each
         (the usual fix of a latency-bound loader: more requests in flight; 10 ms a batch at
         2 ms): the GPU's step is the pace

Truth rows (ROWS): step(form) - step(fixed) for m, t and w, untraced, in the traced process's own
rounds (BENCH_REUSE=1): data starvation by the stall classes' definition (the GPU waits for the
next batch). Between rounds a prefetcher finishes the requests in flight and drops their batches
(Run.pause), so that its threads do not run into the next form's round and each round starts
with nothing prefetched; the DataLoaders' workers refill their queues in each round's warm-up
steps. GPU run 125 ran `fixed` as a pool of 32 threads: 64 ms a step against the GPU's 10, the
threads' Python (each sample's read and view) and the main thread's taking turns on the GIL.
"""
import atexit
import concurrent.futures
import os
import shutil
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

from holdout_loader import shared, train_step  # ResNet-50, channels-last, SGD; its step
from scenario_common import Runner, main

B, SIDE, NFILES = 64, 160, 512
LAT = float(os.environ.get("IO_LAT_MS", "2")) / 1e3
THREADS = {"t": 2}
WORKERS = {"w": 2, "fixed": 16}
AHEAD = 2  # batches requested ahead of the one being trained on
FORMS = ["m", "t", "w", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("data_starvation", ["data_starvation"], "m", "fixed", "data_starvation"),
    ("data_starvation", ["data_starvation"], "t", "fixed", "data_starvation"),
    ("data_starvation", ["data_starvation"], "w", "fixed", "data_starvation"),
]
_STORE = []
MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1) * 255
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1) * 255


def store():
    """The directory of NFILES raw images (3 x SIDE x SIDE bytes each), written once a process"""
    if not _STORE:
        d = tempfile.mkdtemp(prefix="holdout_io.")
        atexit.register(shutil.rmtree, d, True)
        rng = np.random.default_rng(0)
        for i in range(NFILES):
            rng.integers(0, 256, 3 * SIDE * SIDE, dtype=np.uint8).tofile(os.path.join(d, f"{i}.raw"))
        _STORE.append(d)
    return _STORE[0]


def fetch(i):
    """Sample i: one request to the store (its latency, then the file's bytes) -> (image, label)"""
    time.sleep(LAT)
    with open(os.path.join(store(), f"{i % NFILES}.raw"), "rb") as f:
        raw = f.read()
    im = torch.from_numpy(np.frombuffer(raw, dtype=np.uint8).reshape(3, SIDE, SIDE).copy())
    return im, i % 1000


class Remote(Dataset):
    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        return fetch(i)


def stack(items):
    """[(image tensor, label)] -> (images, labels)"""
    return torch.stack([im for im, _ in items]), torch.tensor([lab for _, lab in items])


class PoolLoader:
    """Batches of B in order, each sample made by make(i) in a pool of `threads`, AHEAD batches
    ahead; the main thread puts each batch together (collate) and pins it (holdout_pool too)"""

    def __init__(self, threads, make=fetch, collate=stack):
        self.pool = concurrent.futures.ThreadPoolExecutor(threads)
        self.make, self.collate = make, collate
        self.next_b, self.q = 0, []

    def _fill(self):
        while len(self.q) < AHEAD + 1:
            b = self.next_b
            self.q.append([self.pool.submit(self.make, i) for i in range(b * B, (b + 1) * B)])
            self.next_b += 1

    def __next__(self):
        self._fill()
        x, y = self.collate([f.result() for f in self.q.pop(0)])
        return x.pin_memory(), y.pin_memory()

    def pause(self):
        """The requests in flight finish, their batches are dropped: nothing runs between rounds"""
        for fs in self.q:
            concurrent.futures.wait(fs)
        self.q = []

    def close(self):
        self.pause()
        self.pool.shutdown(wait=True)


class Run(Runner):
    def __init__(self, form):
        store()
        self.model, self.opt = shared()
        self.model.train()
        self.crit = nn.CrossEntropyLoss()
        if form == "t":
            self.it = PoolLoader(THREADS[form])
        else:
            n = WORKERS.get(form, 0)
            kw = dict(batch_size=B, shuffle=False, num_workers=n, pin_memory=form != "w")
            if form == "fixed":
                kw.update(persistent_workers=True, prefetch_factor=4)
            if n:
                kw.update(multiprocessing_context="fork")
            self.dl = DataLoader(Remote(), **kw)
            self.it = iter(self.dl)
            if n:
                time.sleep(1.5)  # let the workers start (not timed)
        self.losses = []
        self.mean, self.std = MEAN.cuda(), STD.cuda()

    def step(self):
        x, y = next(self.it)
        x = x.cuda(non_blocking=True).float().sub_(self.mean).div_(self.std)
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
    main("holdout_io", FORMS, Run, steps=20, warmup=3)
