"""Holdout workload `holdout_matcher` (scripts/gpu-holdout.sh): a set-prediction loss whose
matching runs on the host, DETR's way.

Written in session 43, after every rule of docs/CLASSIFICATION.md, as a loop no rule was tuned
on: a ResNet-18 trunk (bf16 autocast, channels-last, AdamW) predicting 100 queries per image
(91 class logits and a box each) for batches of 64 images of 640x640 with 5 to 20 target objects
each (made on the GPU, 4 batches reused; GPU run 153 had 16 images of 256x256, a launch-bound
step in which the GPU's matching, 160 more launches, ran slower than the host's). The loss matches each image's queries to its targets
one to one by a cost (class probability and box L1), then takes cross entropy over the matched
classes and L1 over the matched boxes. The matching is a greedy assignment (the cheapest
remaining query-target pair, again and again), written the two ways training code has it:

  cpu    the batch's cost matrix read to the host (`.cpu()`: one sync a step), each image's
         matching done in NumPy, the queries matched sent back to the GPU (`torch.as_tensor(...)
         .to(device)`, from pageable memory): the GPU waits through the read, the matching and
         the copy back (the round trip)
  dsync  the same greedy matching on the GPU for the whole batch at once (a masked argmin per
         round, 20 rounds), its matched rows and columns struck out with
         `c[rows, r, :] = float("inf")`: PyTorch makes each such Python number a tensor in
         pageable host memory, copies it in and waits for it, 40 times a step (what GPU run 154
         ran as `fixed`: slack's verdict there was this copy stall, 15% of the step)
  fixed  the same with the infinity kept as a CUDA tensor: nothing read, the same pairs

Truth rows (ROWS): step(cpu) - step(fixed) and step(dsync) - step(fixed), untraced, in the
traced process's own rounds.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

from scenario_common import Runner, main

B, Q, C, H, NMAX = 64, 100, 91, 640, 20
FORMS = ["cpu", "dsync", "fixed"]
ROWS = [("serialization", ["serialization"], "cpu", "fixed", "serialization"),
        ("copy_stall", ["copy_stall"], "dsync", "fixed", "copy_stall")]
_SHARED = []


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        r = torchvision.models.resnet18()
        self.trunk = nn.Sequential(*list(r.children())[:-2])
        self.query = nn.Linear(512, Q * 64)
        self.cls = nn.Linear(64, C)
        self.box = nn.Linear(64, 4)

    def forward(self, x):
        f = self.trunk(x).mean((2, 3))
        q = F.relu(self.query(f)).view(-1, Q, 64)
        return self.cls(q), self.box(q).sigmoid()


def shared():
    if not _SHARED:
        torch.manual_seed(0)
        m = Detector().cuda().to(memory_format=torch.channels_last)
        opt = torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True)
        g = torch.Generator(device="cuda").manual_seed(1)
        rng = np.random.default_rng(2)
        batches = []
        for _ in range(4):
            x = torch.randn(B, 3, H, H, device="cuda", generator=g)
            n = [int(k) for k in rng.integers(5, NMAX + 1, B)]
            # targets padded to NMAX: class -1 where there is none
            cls = torch.full((B, NMAX), -1, dtype=torch.long, device="cuda")
            box = torch.rand(B, NMAX, 4, device="cuda", generator=g)
            for i, k in enumerate(n):
                cls[i, :k] = torch.randint(0, C, (k,), device="cuda", generator=g)
            # the matched pairs' places, fixed per batch: image of each target, and the target's
            # place in the [B, NMAX] padding (targets first in each image)
            valid = [(i, t) for i, k in enumerate(n) for t in range(k)]
            bidx = torch.tensor([i for i, _ in valid], device="cuda")
            tflat = torch.tensor([i * NMAX + t for i, t in valid], device="cuda")
            batches.append((x.contiguous(memory_format=torch.channels_last), cls, box, n, bidx,
                            tflat))
        _SHARED.extend([m, opt, batches])
    return _SHARED


def costs(logits, boxes, cls, tbox):
    """[B, Q, NMAX]: the pair's cost (padding targets: +inf)"""
    p = logits.float().softmax(-1)
    c = -torch.gather(p, 2, cls.clamp(min=0).unsqueeze(1).expand(-1, Q, -1))
    c = c + torch.cdist(boxes.float(), tbox, p=1)
    return c.masked_fill((cls < 0).unsqueeze(1), float("inf"))


def match_host(cost, n):
    """Each image's greedy matching in NumPy; the query per target, [B, NMAX], back on the GPU"""
    q = np.zeros((B, NMAX), dtype=np.int64)
    for i, c in enumerate(cost.cpu().numpy()):
        c = c[:, :n[i]].copy()
        for _ in range(n[i]):
            r, t = np.unravel_index(np.argmin(c), c.shape)
            q[i, t] = r
            c[r, :] = np.inf
            c[:, t] = np.inf
    return torch.as_tensor(q).to("cuda")


def match_device(cost, n, inf=float("inf")):
    """The same greedy matching for the whole batch on the GPU: NMAX rounds of a masked argmin;
    inf, what strikes a row or column out (a Python float: copied in each time)"""
    c = cost.clone()
    q = torch.zeros(B, NMAX, dtype=torch.long, device="cuda")
    rows = torch.arange(B, device="cuda")
    for _ in range(NMAX):
        flat = c.view(B, -1).argmin(1)
        r, t = flat // NMAX, flat % NMAX
        live = torch.isfinite(c.view(B, -1).gather(1, flat[:, None]))[:, 0]
        q[rows, t] = torch.where(live, r, q[rows, t])
        c[rows, r, :] = inf
        c[rows, :, t] = inf
    return q


class Run(Runner):
    def __init__(self, form):
        self.model, self.opt, self.batches = shared()
        self.form = form
        self.inf = torch.tensor(float("inf"), device="cuda")
        self.i = 0
        self.losses = []

    def step(self):
        x, cls, tbox, n, bidx, tflat = self.batches[self.i % len(self.batches)]
        self.i += 1
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, boxes = self.model(x)
        with torch.no_grad():
            cost = costs(logits, boxes, cls, tbox)
        if self.form == "cpu":
            q = match_host(cost, n)
        else:
            q = match_device(cost, n, self.inf if self.form == "fixed" else float("inf"))
        q = q.view(-1)[tflat]
        lg, bx = logits[bidx, q].float(), boxes[bidx, q].float()
        tc, tb = cls.view(-1)[tflat], tbox.view(-1, 4)[tflat]
        loss = F.cross_entropy(lg, tc) + F.l1_loss(bx, tb)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.losses.append(loss.detach())
        del self.losses[:-100]

    def close(self):
        if self.losses:
            torch.stack(self.losses).sum().item()


if __name__ == "__main__":
    main("holdout_matcher", FORMS, Run, steps=30, warmup=5)
