"""Holdout workload `holdout_detect` (scripts/gpu-holdout.sh): an object detector's training loop.

Written in session 30 as a real model no rule was tuned on: torchvision's Faster R-CNN (ResNet-50
FPN backbone, no pretrained weights, 11 classes; its own transform resizes to 512 on the GPU),
SGD with momentum, fp32 with cuDNN's TF32 (torch's default), batch 4, trained on synthetic photos (random 480x640 RGB images through
PIL's ColorJitter and a flip, with 1 to 8 random boxes each; seeded), the way torchvision's
detection reference script feeds it: a list of image tensors and a list of target dicts.

The model syncs by itself every step (proposal filtering, NMS, the sampler's nonzero: each reads
a data-dependent size), so a step holds many short GPU idle stretches behind the model's own
reads and its kernels change with the boxes found. Forms:

  l      the DataLoader in the main thread (num_workers=0): each batch's PIL work in the step
  s      workers load (as fixed); the reference script's per-step `loss_value = losses.item()`,
         its isfinite check and a log line
  fixed  6 worker processes, persistent, pinned batches copied with non_blocking=True, the
         losses kept on the GPU and read at close

Truth rows (ROWS): step(form) - step(fixed), untraced, in the traced process's own rounds
(BENCH_REUSE=1: the loaders' workers start once).
"""
import math
import time

import torch
import torchvision
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms
from torchvision.transforms import functional as TF

from scenario_common import Runner, main

B = 4
FORMS = ["l", "s", "fixed"]
ROWS = [
    ("data_starvation", ["data_starvation"], "l", "fixed", "data_starvation"),
    ("serialization", ["serialization"], "s", "fixed", "serialization"),
]
_SHARED = []


class Photos(Dataset):
    """Synthetic photos with boxes: each item an image tensor (3x480x640) and its target dict"""

    def __init__(self, n=10**6):
        self.n = n
        self.jitter = transforms.ColorJitter(0.4, 0.4, 0.4, 0.1)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        img = TF.to_pil_image(torch.randint(0, 256, (3, 480, 640), dtype=torch.uint8, generator=g))
        img = self.jitter(img)
        k = int(torch.randint(1, 9, (1,), generator=g))
        xy = torch.rand(k, 2, generator=g) * torch.tensor([560.0, 400.0])
        wh = 16 + torch.rand(k, 2, generator=g) * 64
        boxes = torch.cat([xy, xy + wh], 1)
        if torch.rand(1, generator=g).item() < 0.5:
            img = TF.hflip(img)
            boxes = torch.stack([640 - boxes[:, 2], boxes[:, 1], 640 - boxes[:, 0], boxes[:, 3]], 1)
        labels = torch.randint(1, 11, (k,), generator=g)
        return TF.to_tensor(img), {"boxes": boxes, "labels": labels}


def collate(batch):
    return tuple(zip(*batch))


def shared():
    if not _SHARED:
        # torch's default for cuDNN (scenario_common.main turns TF32 off for the fp32 scenarios):
        # in strict fp32 cuDNN ran this model's convolutions by FFT, 68 k kernels an iteration of
        # 0.9-1.3 s, mostly one small complex GEMM after another (GPU run 108)
        torch.backends.cudnn.allow_tf32 = True
        m = torchvision.models.detection.fasterrcnn_resnet50_fpn(
            weights=None, weights_backbone=None, num_classes=11, min_size=512, max_size=704).cuda()
        params = [p for p in m.parameters() if p.requires_grad]
        opt = torch.optim.SGD(params, lr=0.005, momentum=0.9, weight_decay=1e-4)
        _SHARED.extend([m, opt])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model, self.opt = shared()
        self.model.train()
        n = 0 if form == "l" else 6
        kw = dict(batch_size=B, shuffle=False, pin_memory=True, num_workers=n, collate_fn=collate)
        if n:
            kw.update(persistent_workers=True, prefetch_factor=4, multiprocessing_context="fork")
        self.dl = DataLoader(Photos(), **kw)
        self.it = iter(self.dl)
        if n:
            time.sleep(1.5)  # let the workers start (not timed)
        self.losses = []
        self.log = []

    def step(self):
        images, targets = next(self.it)
        images = [im.cuda(non_blocking=True) for im in images]
        targets = [{k: v.cuda(non_blocking=True) for k, v in t.items()} for t in targets]
        loss_dict = self.model(images, targets)
        losses = sum(loss for loss in loss_dict.values())
        self.opt.zero_grad(set_to_none=True)
        losses.backward()
        self.opt.step()
        if self.form == "s":
            loss_value = losses.item()
            if not math.isfinite(loss_value):
                raise SystemExit(f"loss is {loss_value}, stopping")
            self.log.append(f"loss {loss_value:.4f} lr {self.opt.param_groups[0]['lr']:.5f}")
            del self.log[:-50]
        else:
            self.losses.append(losses.detach())
            del self.losses[:-50]

    def close(self):
        if self.losses:
            torch.stack(self.losses).cpu()
        del self.it
        del self.dl


if __name__ == "__main__":
    main("holdout_detect", FORMS, Run, steps=10, warmup=3)
