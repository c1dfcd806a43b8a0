"""Holdout workload `holdout_libread` (scripts/gpu-holdout.sh): reads that a library call makes from
an argument the script passes it.

Written in session 49, after every rule of docs/CLASSIFICATION.md: torchvision ResNet-18 (bf16
autocast, channels-last, SGD with momentum) on batches of 128 images of 224 x 224 made on the GPU
(no loader), its gradients clipped each step (`clip_grad_norm_(..., 1.0)`). Forms:

  plateau  `ReduceLROnPlateau.step(loss)` every step with the loss tensor: the scheduler reads it
           as a Python float (`float(metrics)` in torch/optim/lr_scheduler.py)
  clipnf   `clip_grad_norm_(..., error_if_nonfinite=True)`: the clip reads whether the norm is
           finite (an `if` on a CUDA tensor in torch/nn/utils/clip_grad.py)
  fixed    neither: the losses kept on the GPU and the scheduler stepped on their mean every 50
           steps (one read), the clip without the check

Truth rows (ROWS): step(form) - step(fixed) for plateau and clipnf, untraced, in the traced
process's own rounds: a read each step (serialization by the stall classes' definitions).
"""
import torch
import torch.nn as nn
import torchvision

from scenario_common import Runner, main

B, EVERY = 128, 50
FORMS = ["plateau", "clipnf", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "plateau", "fixed", "serialization"),
    ("serialization", ["serialization"], "clipnf", "fixed", "serialization"),
]
_SHARED = []


def shared():
    if not _SHARED:
        torch.manual_seed(0)
        m = torchvision.models.resnet18().cuda().to(memory_format=torch.channels_last)
        _SHARED.extend([m, torch.Generator(device="cuda").manual_seed(0)])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        self.m, self.gen = shared()
        self.form = form
        self.opt = torch.optim.SGD(self.m.parameters(), lr=0.01, momentum=0.9, foreach=True)
        self.sched = torch.optim.lr_scheduler.ReduceLROnPlateau(self.opt, patience=1000)
        self.crit = nn.CrossEntropyLoss()
        self.losses, self.n = [], 0

    def step(self):
        x = torch.randn(B, 3, 224, 224, device="cuda", generator=self.gen)
        x = x.to(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (B,), device="cuda", generator=self.gen)
        self.opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = self.crit(self.m(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(self.m.parameters(), 1.0,
                                 error_if_nonfinite=self.form == "clipnf")
        self.opt.step()
        self.n += 1
        if self.form == "plateau":
            self.sched.step(loss)  # the scheduler reads the loss
        else:
            self.losses.append(loss.detach())
            if self.n % EVERY == 0:
                self.sched.step(torch.stack(self.losses).mean())  # one read every EVERY steps
                self.losses.clear()


if __name__ == "__main__":
    main("holdout_libread", FORMS, Run, steps=40, warmup=5)
