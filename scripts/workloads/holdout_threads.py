"""Holdout workload `holdout_threads` (scripts/gpu-holdout.sh): a loader in threads, not processes.

Written after the rules of session 20 (docs/CLASSIFICATION.md) as a loop no rule was tuned on:
torchvision ResNet-50 (bf16 autocast, channels-last, SGD; holdout_loader's model), batch 64 of
the seed's FakeData images and CPU transforms, fed by an in-process prefetcher of the kind many
training scripts write by hand: THREADS Python threads each build whole batches (index the
dataset, stack, pin) and put them in a queue 8 deep; the main thread takes the next batch from
the queue, copies it non_blocking and trains. The threads share the main thread's GIL: their
Python (the transforms' glue, PIL's and torch's calls) runs between the main thread's launches.
Forms:

  t      4 loader threads in the training process
  u      the same threads without pinning (they never call CUDA: slack saw them only from format
         2.9, which samples every Python thread); the main thread pins each batch before its
         copy (written in session 34)
  fixed  the DataLoader's 12 worker processes (persistent, pinned), the same batches

Truth row (ROWS): step(t) - step(fixed), untraced, in the traced process's own rounds
(BENCH_REUSE=1): the threads' pace against the processes', data starvation by the stall classes'
definition (the GPU waits for the next batch) whatever share of it the GIL takes from the main
thread. Between rounds the threads finish the batches they are building and start no more
(Run.pause): refilling their queues during the next form's round slowed it 3x in GPU run 82.
"""
import queue
import threading
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from holdout_loader import shared, train_step  # ResNet-50, channels-last, SGD; its step
from resnet_seed import dataset  # the seed's FakeData and CPU transforms
from scenario_common import Runner, main

B, THREADS, DEPTH = 64, 4, 8
FORMS = ["t", "u", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("data_starvation", ["data_starvation"], "t", "fixed", "data_starvation"),
    ("data_starvation", ["data_starvation"], "u", "fixed", "data_starvation"),
]


class ThreadLoader:
    """Batches b, b + THREADS, ... built by thread b, handed out in order"""

    def __init__(self, ds, pin=True):
        self.ds, self.q, self.stop = ds, [queue.Queue(DEPTH // THREADS) for _ in range(THREADS)], False
        self.pin = pin
        self.n = 0
        self.go = threading.Event()  # cleared by pause(): no new batch is started
        self.go.set()
        self.busy = threading.Semaphore(THREADS)  # held by a thread while it builds a batch
        self.threads = [threading.Thread(target=self.run, args=(k,), daemon=True)
                        for k in range(THREADS)]
        for th in self.threads:
            th.start()

    def pause(self):
        """Between rounds (scenario_common.repeats): the batches being built are finished, no
        new one is started until the next step, so the other forms' rounds run alone"""
        self.go.clear()
        for _ in range(THREADS):
            self.busy.acquire()
        for _ in range(THREADS):
            self.busy.release()

    def run(self, k):
        b = k
        while not self.stop:
            while not self.go.wait(0.1):
                if self.stop:
                    return
            with self.busy:
                if not self.go.is_set():
                    continue
                items = [self.ds[i] for i in range(b * B, (b + 1) * B)]
                x = torch.stack([im for im, _ in items])
                y = torch.tensor([lab for _, lab in items])
                if self.pin:
                    x, y = x.pin_memory(), y.pin_memory()
            while not self.stop:
                try:
                    self.q[k].put((x, y), timeout=0.1)
                    break
                except queue.Full:
                    pass
            b += THREADS

    def __next__(self):
        self.go.set()
        x = self.q[self.n % THREADS].get()
        self.n += 1
        return x

    def close(self):
        self.stop = True
        for th in self.threads:
            th.join()


class Run(Runner):
    def __init__(self, form):
        self.model, self.opt = shared()
        self.model.train()
        self.crit = nn.CrossEntropyLoss()
        self.pin = form == "u"  # the main thread pins what the threads built
        if form in ("t", "u"):
            self.it = ThreadLoader(dataset(), pin=form == "t")
        else:
            self.dl = DataLoader(dataset(), batch_size=B, shuffle=False, pin_memory=True,
                                 num_workers=12, persistent_workers=True, prefetch_factor=2,
                                 multiprocessing_context="fork")
            self.it = iter(self.dl)
        time.sleep(1.5)  # let the loader start and fill its queue (not timed)
        self.losses = []

    def step(self):
        x, y = next(self.it)
        if self.pin:
            x, y = x.pin_memory(), y.pin_memory()
        train_step(self.model, self.opt, self.crit, x, y, self.losses)
        del self.losses[:-100]

    def pause(self):
        if isinstance(self.it, ThreadLoader):
            self.it.pause()

    def close(self):
        if self.losses:
            torch.stack(self.losses).cpu()
        if isinstance(self.it, ThreadLoader):
            self.it.close()
        del self.it


if __name__ == "__main__":
    main("holdout_threads", FORMS, Run, steps=12, warmup=3)
