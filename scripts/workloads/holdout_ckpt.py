"""Holdout workload `holdout_ckpt` (scripts/gpu-holdout.sh): a checkpoint every few iterations.

Written after the rules of session 18 (docs/CLASSIFICATION.md) as a loop no rule was tuned on:
torchvision ResNet-50 (bf16 autocast, channels-last, SGD with momentum, batch 64) fed by a
DataLoader of 12 workers (the seed's FakeData and CPU transforms, pinned, non_blocking), and
after every EVERY-th iteration the model's and the optimizer's state saved to a file (the
checkpoint a trainer keeps: ~200 MB of fp32 weights, buffers and momentum). The loop's iteration
is the training step; the saves sit between some of them. Forms:

  c      torch.save(state, path) in the loop: every CUDA tensor copied to pageable host memory
         by a synchronous copy (the host waits for the GPU's queue, then for each copy), then
         pickled and written while the GPU waits: a sync, then host work
  a      the usual fix, an asynchronous checkpoint: the state copied into pinned host buffers
         with non_blocking copies on a side stream (the training stream waits for them before
         the next update), and saved by a background thread once an event says the copies are
         done; the loop goes on
  fixed  no checkpoint

Truth rows (ROWS): step(c) - step(a), what the usual fix saves, and step(c) - step(fixed),
untraced, in the traced process's own rounds (BENCH_REUSE=1, STEPS a multiple of EVERY: each
round's timed iterations hold the same number of saves). A step's time is the training
iteration's with the saves shared out: the loop's time over its iterations.
"""
import os
import tempfile
import threading
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from holdout_loader import shared  # ResNet-50, channels-last, SGD with momentum
from resnet_seed import dataset  # the seed's FakeData and CPU transforms
from scenario_common import Runner, main

B, EVERY = 64, 10
FORMS = ["c", "a", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "c", "a", "serialization"),
    ("serialization", ["serialization"], "c", "fixed", "serialization"),
]


def state_of(model, opt):
    return {"model": model.state_dict(), "opt": opt.state_dict()}


def tensors_of(obj, out):
    """The CUDA tensors of a nested state, in a fixed order (dicts by key order, lists by place)."""
    if isinstance(obj, torch.Tensor):
        if obj.is_cuda:
            out.append(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            tensors_of(v, out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            tensors_of(v, out)
    return out


def to_host(obj, host, it):
    """The state with each CUDA tensor replaced by its pinned host copy (same order as tensors_of)."""
    if isinstance(obj, torch.Tensor):
        return next(it) if obj.is_cuda else obj
    if isinstance(obj, dict):
        return {k: to_host(v, host, it) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_host(v, host, it) for v in obj)
    return obj


class AsyncSaver:
    """The usual fix for a checkpoint in the loop: the state's CUDA tensors copied into pinned
    host buffers (kept from save to save) by non_blocking copies on a side stream that the
    training stream then waits for (no update before the copies), and written by a background
    thread once an event says the copies are done; the loop goes on."""

    def __init__(self):
        self.side = torch.cuda.Stream()
        self.host, self.writer = None, None

    def save(self, state, path):
        self.join()  # the previous checkpoint's write (long done at this pace)
        src = tensors_of(state, [])
        if self.host is None or len(self.host) != len(src):
            self.host = [torch.empty(t.shape, dtype=t.dtype, pin_memory=True) for t in src]
        self.side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.side):
            for h, t in zip(self.host, src):
                h.copy_(t, non_blocking=True)
            done = torch.cuda.Event()
            done.record(self.side)
        torch.cuda.current_stream().wait_stream(self.side)
        snapshot = to_host(state, self.host, iter(self.host))

        def write():
            done.synchronize()
            torch.save(snapshot, path)

        self.writer = threading.Thread(target=write, daemon=True)
        self.writer.start()

    def join(self):
        if self.writer is not None:
            self.writer.join()


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model, self.opt = shared()
        self.model.train()
        self.crit = nn.CrossEntropyLoss()
        self.dl = DataLoader(dataset(), batch_size=B, shuffle=False, pin_memory=True,
                             num_workers=12, persistent_workers=True, prefetch_factor=4,
                             multiprocessing_context="fork")
        self.it = iter(self.dl)
        self.dir = tempfile.mkdtemp(prefix="slack-ckpt-")
        self.path = os.path.join(self.dir, f"ckpt-{form}.pt")
        self.saver = AsyncSaver()
        time.sleep(1.5)  # let the workers start and fill their queues (not timed)
        self.n, self.losses = 0, []

    def save_sync(self):
        torch.save(state_of(self.model, self.opt), self.path)

    def save_async(self):
        self.saver.save(state_of(self.model, self.opt), self.path)

    def step(self):
        x, y = next(self.it)
        x = x.cuda(non_blocking=True).to(memory_format=torch.channels_last)
        y = y.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = self.crit(self.model(x), y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.losses.append(loss.detach())
        del self.losses[:-400]
        self.n += 1
        if self.n % EVERY == 0:
            if self.form == "c":
                self.save_sync()
            elif self.form == "a":
                self.save_async()

    def close(self):
        self.saver.join()
        if self.losses:
            torch.stack(self.losses).cpu()
        try:
            os.remove(self.path)
        except OSError:
            pass
        del self.it, self.dl


if __name__ == "__main__":
    main("holdout_ckpt", FORMS, Run, steps=20, warmup=2)
