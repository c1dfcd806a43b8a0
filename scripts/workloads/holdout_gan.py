"""Holdout workload `holdout_gan` (scripts/gpu-holdout.sh): a GAN, two optimizers per iteration.

Written after the rules of session 18 (docs/CLASSIFICATION.md) as a loop no rule was tuned on:
a DCGAN (generator of 5 transposed convolutions from 128 latent channels to 3x64x64, a
discriminator of 5 convolutions; batch norm, fp32) trained on FakeData images of 3x80x80 with CPU transforms (RandomResizedCrop to 64, flip,
ToTensor, Normalize), batch 128. Each iteration is the usual two updates: the discriminator on a
real batch and a generated one (Adam, foreach), then the generator through the discriminator
(another Adam, foreach): two optimizer steps per loop iteration, with kernels of the same names.
The loop's iteration is one real batch and both updates. Causes:

  l  the DataLoader in the main thread (num_workers=0, pageable): the host decodes and
     transforms each batch while the GPU waits; without it 12 worker processes, persistent,
     pinned, non_blocking copies
  i  both losses read every iteration with .item() for the log line (two syncs, each draining
     the queue of work launched ahead); without it they are kept on the GPU and read every
     50 iterations

Forms: li, l, i, fixed. Truth rows (ROWS): step(form) - step(form without the cause), untraced,
in the traced process's own rounds (BENCH_REUSE=1).
"""
import time

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader
from torchvision import transforms

from scenario_common import Runner, main

B, NZ, NGF, NDF = 128, 128, 64, 64
FORMS = ["li", "l", "i", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("data_starvation", ["data_starvation"], "l", "fixed", "data_starvation"),
    ("data_starvation", ["data_starvation"], "li", "i", "data_starvation"),
    ("serialization", ["serialization"], "i", "fixed", "serialization"),
    ("serialization", ["serialization"], "li", "l", "serialization"),
]


def dataset():
    tf = transforms.Compose([
        transforms.RandomResizedCrop(64, scale=(0.5, 1.0)),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5]),
    ])
    return torchvision.datasets.FakeData(size=10**6, image_size=(3, 80, 80), num_classes=10,
                                         transform=tf, random_offset=0)


def generator():
    return nn.Sequential(
        nn.ConvTranspose2d(NZ, NGF * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(NGF * 8), nn.ReLU(True),
        nn.ConvTranspose2d(NGF * 8, NGF * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(NGF * 4),
        nn.ReLU(True),
        nn.ConvTranspose2d(NGF * 4, NGF * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(NGF * 2),
        nn.ReLU(True),
        nn.ConvTranspose2d(NGF * 2, NGF, 4, 2, 1, bias=False), nn.BatchNorm2d(NGF), nn.ReLU(True),
        nn.ConvTranspose2d(NGF, 3, 4, 2, 1, bias=False), nn.Tanh())


def discriminator():
    return nn.Sequential(
        nn.Conv2d(3, NDF, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True),
        nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(NDF * 2),
        nn.LeakyReLU(0.2, True),
        nn.Conv2d(NDF * 2, NDF * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(NDF * 4),
        nn.LeakyReLU(0.2, True),
        nn.Conv2d(NDF * 4, NDF * 8, 4, 2, 1, bias=False), nn.BatchNorm2d(NDF * 8),
        nn.LeakyReLU(0.2, True),
        nn.Conv2d(NDF * 8, 1, 4, 1, 0, bias=False), nn.Flatten())


_SHARED = []


def shared():
    if not _SHARED:
        torch.manual_seed(0)
        g, d = generator().cuda(), discriminator().cuda()
        og = torch.optim.Adam(g.parameters(), lr=2e-4, betas=(0.5, 0.999), foreach=True)
        od = torch.optim.Adam(d.parameters(), lr=2e-4, betas=(0.5, 0.999), foreach=True)
        _SHARED.extend([g, d, og, od])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        causes = "" if form == "fixed" else form
        self.read_each = "i" in causes
        self.g, self.d, self.og, self.od = shared()
        kw = dict(batch_size=B, shuffle=False, drop_last=True)
        self.nb = "l" not in causes
        if self.nb:
            kw.update(num_workers=12, pin_memory=True, persistent_workers=True, prefetch_factor=4,
                      multiprocessing_context="fork")
        self.dl = DataLoader(dataset(), **kw)
        self.it = iter(self.dl)
        if self.nb:
            time.sleep(1.5)  # let the workers start and fill their queues (not timed)
        self.crit = nn.BCEWithLogitsLoss()
        self.ones = torch.ones(B, 1, device="cuda")
        self.zeros = torch.zeros(B, 1, device="cuda")
        self.log, self.kept, self.n = [], [], 0

    def step(self):
        real, _ = next(self.it)
        real = real.cuda(non_blocking=self.nb)
        z = torch.randn(B, NZ, 1, 1, device="cuda")
        fake = self.g(z)
        # the discriminator: real against generated
        self.od.zero_grad(set_to_none=True)
        loss_d = self.crit(self.d(real), self.ones) + self.crit(self.d(fake.detach()), self.zeros)
        loss_d.backward()
        self.od.step()
        # the generator, through the discriminator
        self.og.zero_grad(set_to_none=True)
        loss_g = self.crit(self.d(fake), self.ones)
        loss_g.backward()
        self.og.step()
        self.n += 1
        if self.read_each:
            self.log.append((loss_d.item(), loss_g.item()))  # the log line, every iteration
        else:
            self.kept.append(torch.stack([loss_d.detach(), loss_g.detach()]))
            if self.n % 50 == 0:
                self.log.extend(map(tuple, torch.stack(self.kept).tolist()))
                self.kept = []
        del self.log[:-1000]

    def close(self):
        if self.kept:
            torch.stack(self.kept).cpu()
        del self.it, self.dl


if __name__ == "__main__":
    main("holdout_gan", FORMS, Run, steps=20, warmup=3)
