"""Holdout workload `holdout_anomaly` (scripts/gpu-holdout.sh): autograd's anomaly detection left on.

Written in session 47, after every rule of docs/CLASSIFICATION.md: a debugging switch that
training scripts leave on after the bug it was for is gone (`torch.autograd.detect_anomaly()`,
or `torch.autograd.set_detect_anomaly(True)` at the top of the script). The user's code reads
nothing from the GPU; the library does, twice over:
  - in the backward pass, autograd's engine checks each function's outputs for NaN and reads
    the answer on the host (a device-to-host read and a stream synchronize per output, on
    autograd's own thread, which runs no Python);
  - in the forward pass, each operation that records for autograd stores the Python stack that
    made it (for the error message a NaN would raise): host work between the forward's
    launches.
torchvision ResNet-18 (bf16 autocast, channels-last, SGD with momentum) on batches of 128
pinned uint8 images from a ring of 4 made at start (no loader), copied with non_blocking=True.
Forms:

  anomaly  forward and backward inside `torch.autograd.detect_anomaly()` (check_nan=True, the
           default): the NaN checks' reads in the backward pass and the stacks in the forward
  trace    `detect_anomaly(check_nan=False)`: the stacks only, no read
  fixed    no anomaly detection

Truth rows (ROWS): step(anomaly) - step(trace), the backward pass's reads: serialization by the
stall classes' definition (the host waits for the GPU, then the GPU waits for the host's next
launches); step(trace) - step(fixed), the stacks: host work outside CUDA between launches (`other`
in slack's classes, reason host_outside_cuda; no stall class is its cause). Untraced, in the traced
process's own rounds; the verdict's truth for `anomaly` is the larger of the two, and the usual fix
(detection off) removes both: step(anomaly) - step(fixed).
"""
import torch
import torch.nn as nn
import torchvision

from scenario_common import Runner, main

B = 128
FORMS = ["anomaly", "trace", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "anomaly", "trace", "serialization"),
    ("other", ["other"], "trace", "fixed", "other"),
]
_SHARED = []


def shared():
    if not _SHARED:
        torch.manual_seed(0)
        m = torchvision.models.resnet18().cuda().to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
        g = torch.Generator().manual_seed(3)
        ring = []
        for _ in range(4):
            x = torch.randint(0, 256, (B, 3, 224, 224), dtype=torch.uint8, generator=g)
            y = torch.randint(0, 1000, (B,), generator=g)
            ring.append((x.pin_memory(), y.pin_memory()))
        _SHARED.extend([m, opt, ring])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        self.model, self.opt, self.ring = shared()
        self.model.train()
        self.crit = nn.CrossEntropyLoss()
        self.form = form
        self.i = 0
        self.losses = []

    def train(self, x, y):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = self.crit(self.model(x), y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        return loss

    def step(self):
        x, y = self.ring[self.i % len(self.ring)]
        self.i += 1
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        x = x.float().div_(255).contiguous(memory_format=torch.channels_last)
        if self.form == "fixed":
            loss = self.train(x, y)
        else:
            # the context restores the mode on exit: the other forms' rounds run without it
            with torch.autograd.detect_anomaly(check_nan=self.form == "anomaly"):
                loss = self.train(x, y)
        self.opt.step()
        self.losses.append(loss.detach())
        del self.losses[:-100]

    def close(self):
        if self.losses:
            torch.stack(self.losses).cpu()


if __name__ == "__main__":
    main("holdout_anomaly", FORMS, Run, steps=20, warmup=3)
