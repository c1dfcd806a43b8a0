"""Accuracy scenario `resnet_seed` (scripts/gpu-diagnosis.sh): the seed's case, a real model.

torchvision ResNet-50 trained on FakeData with real CPU transforms (RandomResizedCrop, flip,
ToTensor, Normalize), batch 64, SGD with momentum, fp32. Three causes, each switched on by a
letter in the form's name, alone or together (a factorial suite: 8 forms):

  l  the DataLoader runs in the main thread (num_workers=0); without it: 12 worker processes,
     persistent, prefetching
  c  pageable memory and blocking copies (pin_memory=False, .cuda(non_blocking=False)); without
     it: pin_memory=True and non_blocking=True
  s  loss.item() every step; without it the losses stay on the GPU and are read at the end

Forms: lcs (the seed's broken job), lc, ls, cs, l, c, s, fixed (none of the three).
Truth for a cause on form X: step(X) - step(X without that cause), measured untraced; the
all-stalls truth: step(X) - step(fixed). The model is built once per process and reused by every
form (the weights do not change the time of a step).
"""
import time

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader
from torchvision import transforms

from scenario_common import Runner, main

B = 64
WORKERS = 12
FORMS = ["lcs", "lc", "ls", "cs", "l", "c", "s", "fixed"]

_MODEL = []


def model_and_opt():
    if not _MODEL:
        m = torchvision.models.resnet50(num_classes=1000).cuda()
        opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
        _MODEL.extend([m, opt])
    return _MODEL


def dataset():
    tf = transforms.Compose([
        transforms.RandomResizedCrop(224),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
    ])
    return torchvision.datasets.FakeData(size=10**6, image_size=(3, 256, 256), num_classes=1000,
                                         transform=tf, random_offset=0)


class Run(Runner):
    def __init__(self, form):
        causes = "" if form == "fixed" else form
        self.loader_main = "l" in causes
        self.pageable = "c" in causes
        self.read = "s" in causes
        self.model, self.opt = model_and_opt()
        self.model.train()
        self.crit = nn.CrossEntropyLoss()
        kw = dict(batch_size=B, shuffle=False, pin_memory=not self.pageable,
                  num_workers=0 if self.loader_main else WORKERS)
        if not self.loader_main:
            kw.update(persistent_workers=True, prefetch_factor=4, multiprocessing_context="fork")
        self.dl = DataLoader(dataset(), **kw)
        self.it = iter(self.dl)
        if not self.loader_main:
            time.sleep(1.5)  # let the workers start and fill their queues (not timed)
        self.losses = []
        self.seen = []

    def step(self):
        x, y = next(self.it)
        nb = not self.pageable
        x = x.cuda(non_blocking=nb)
        y = y.cuda(non_blocking=nb)
        out = self.model(x)
        loss = self.crit(out, y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        if self.read:
            self.seen.append(loss.item())
        else:
            self.losses.append(loss.detach())

    def close(self):
        if self.losses:
            self.seen.extend(torch.stack(self.losses).cpu().tolist())
        del self.it
        del self.dl


# the harness seeds torch's generator before each step (scenario_common.measure): the loader's
# random crops of step k are the same in every form, so the rounds of the truth compare like
# with like (after GPU run 28; kept below the step so that its lines stay those of the traces)
Run.seed_each_step = True



class _TimedIter:
    """The loader's iterator, timed: `loads` gets the ms of each next() (with the loader in the
    main thread, its work; with workers, the wait for their queue). Lets the accuracy table
    compare slack with the truth at the loader pace of the traced run (GPU run 38: this VM's
    CPU speed drifts by +-25% for seconds at a time, with one thread and the machine 94% idle).
    The model's forward pre-hook then times from the batch's arrival to the forward's start
    (`copies`: the two .cuda() copies; the pageable copy's pace drifts with the host's memory
    bandwidth)."""

    def __init__(self, run):
        self.run, self.it = run, run.it

    def __next__(self):
        t = time.perf_counter()
        v = next(self.it)
        now = time.perf_counter()
        self.run.loads.append((now - t) * 1e3)
        _ARRIVED[:] = [self.run, now]
        return v


_ARRIVED = []  # [run, time] of the last batch taken, until the forward starts


def _forward_starts(module, args):
    if _ARRIVED:
        run, t = _ARRIVED
        run.copies.append((time.perf_counter() - t) * 1e3)
        _ARRIVED.clear()


_plain_init = Run.__init__


def _timed_init(self, form):
    _plain_init(self, form)
    self.loads, self.copies = [], []
    self.it = _TimedIter(self)
    if not getattr(self.model, "_slack_timed", False):  # the model is shared by every form
        self.model.register_forward_pre_hook(_forward_starts)
        self.model._slack_timed = True


Run.__init__ = _timed_init


# truth rows for scripts/holdout_table.py (in-process runs: scripts/gpu-holdout.sh with
# HOLDOUT="resnet_seed:cs,s,c:40:12000"): each cause of each form against the form without it (kept at the
# end so that the lines of the step stay those of the traces)
ROWS = [
    ('data_starvation', ['data_starvation'], 'lcs', 'cs', 'data_starvation'),
    ('copy + copy_stall', ['copy', 'copy_stall'], 'lcs', 'ls', 'copy_and_copy_stall'),
    ('serialization', ['serialization'], 'lcs', 'lc', 'serialization'),
    ('data_starvation', ['data_starvation'], 'lc', 'c', 'data_starvation'),
    ('copy + copy_stall', ['copy', 'copy_stall'], 'lc', 'l', 'copy_and_copy_stall'),
    ('data_starvation', ['data_starvation'], 'ls', 's', 'data_starvation'),
    ('serialization', ['serialization'], 'ls', 'l', 'serialization'),
    ('copy + copy_stall', ['copy', 'copy_stall'], 'cs', 's', 'copy_and_copy_stall'),
    ('serialization', ['serialization'], 'cs', 'c', 'serialization'),
    ('data_starvation', ['data_starvation'], 'l', 'fixed', 'data_starvation'),
    ('copy + copy_stall', ['copy', 'copy_stall'], 'c', 'fixed', 'copy_and_copy_stall'),
    ('serialization', ['serialization'], 's', 'fixed', 'serialization'),
]


if __name__ == "__main__":
    main("resnet_seed", FORMS, Run, steps=8, warmup=2)
