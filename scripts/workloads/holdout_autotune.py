"""Holdout workload `holdout_autotune` (scripts/gpu-holdout.sh): cuDNN's autotuner on input shapes
that keep changing.

Written in session 31 as a loop no rule was tuned on: torchvision ResNet-18 trained with bf16
autocast and SGD on batches of 32 images whose height and width are drawn, each step, from 33
sizes each (128 to 384 pixels in steps of 8: multi-scale training without bucketing, or
detection crops kept at their own aspect ratio), made on the GPU. With
`torch.backends.cudnn.benchmark = True` cuDNN times every candidate algorithm of every
convolution (forward and both backward passes) the first time it sees a shape: with 1,089
shapes, almost every step is a first time. Forms:

  b      cudnn.benchmark = True: each new shape is autotuned in the step
  fixed  cudnn.benchmark = False: cuDNN's heuristics pick an algorithm at once (a plan is still
         built on the host for each new shape)
  s      cudnn.benchmark = True on shapes bucketed to 4 sizes (192, 256, 320, 384 square, in
         turn): each tuned once, in the first steps, then reused (the fix slack's verdict gives)

Truth row (ROWS): step(b) - step(fixed), untraced, in the traced process's own rounds (the shapes
go on from where the traced steps left them, so the rounds meet new shapes too). No stall class
is this cause: the autotuner's work is the host's (cuDNN building and timing plans), which slack
counts as `other` (reason host_outside_cuda) and, where it is half the step, names in the
verdict as host work outside CUDA (GPU run 118; before, "no stall above 2%"). `fixed` still
builds a plan for each new shape on the host (58 ms of a 75 ms step traced).
"""
import torch
import torch.nn as nn
import torchvision

from scenario_common import Runner, main

B = 32
SIZES = list(range(128, 385, 8))
FORMS = ["b", "fixed", "s"]
BUCKETS = [192, 256, 320, 384]
ROWS = [("other", ["other"], "b", "fixed", "other")]
BEYOND_FIXED = ["s"]  # the fix beyond `fixed` (scripts/holdout_table.py: no all-stalls row)
_SHARED = []


def shared():
    if not _SHARED:
        m = torchvision.models.resnet18(num_classes=100).cuda().to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
        # one sequence of shapes for the process, drawn on the host from a seeded generator
        g = torch.Generator().manual_seed(11)
        seq = [(SIZES[int(torch.randint(len(SIZES), (1,), generator=g))],
                SIZES[int(torch.randint(len(SIZES), (1,), generator=g))]) for _ in range(4000)]
        _SHARED.extend([m, opt, seq, [0]])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model, self.opt, self.seq, self.pos = shared()
        self.model.train()
        self.crit = nn.CrossEntropyLoss()
        self.losses = []

    def step(self):
        torch.backends.cudnn.benchmark = self.form in ("b", "s")
        h, w = self.seq[self.pos[0] % len(self.seq)]
        self.pos[0] += 1  # shared by the forms: a shape seen by one form is not new to the other
        if self.form == "s":
            h = w = BUCKETS[self.pos[0] % len(BUCKETS)]
        x = torch.randn(B, 3, h, w, device="cuda").to(memory_format=torch.channels_last)
        y = torch.randint(0, 100, (B,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = self.crit(self.model(x), y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.losses.append(loss.detach())
        del self.losses[:-50]

    def close(self):
        if self.losses:
            torch.stack(self.losses).cpu()


if __name__ == "__main__":
    main("holdout_autotune", FORMS, Run, steps=10, warmup=2)
