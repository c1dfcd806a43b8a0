"""Accuracy scenario `serialization` (scripts/accuracy.sh).

broken: every step reads the loss on the host (loss.item(): a device-to-host copy and a stream
        synchronize), then does 3 ms of host work (logging, metrics: a busy loop here) before it
        launches the next step: the GPU drains during the read and waits through the host work.
fixed:  the losses stay on the GPU (detached, stacked and read once at the end); the same 3 ms of
        host work per step now overlaps the GPU's work.
The step: an MLP (1024 -> 4096 -> 4096 -> 1024) on 2048 rows already on the GPU, MSE, SGD.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from scenario_common import Runner, main, spin

ROWS, DIM, WIDTH = 2048, 1024, 4096
HOST_MS = 3.0


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model = nn.Sequential(nn.Linear(DIM, WIDTH), nn.GELU(), nn.Linear(WIDTH, WIDTH),
                                   nn.GELU(), nn.Linear(WIDTH, DIM)).cuda()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=1e-3, momentum=0.9)
        self.xs = [torch.randn(ROWS, DIM, device="cuda") for _ in range(4)]
        self.i = 0
        self.losses = []
        self.seen = []

    def step(self):
        x = self.xs[self.i % 4]
        self.i += 1
        self.opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(self.model(x), x)
        loss.backward()
        self.opt.step()
        if self.form == "broken":
            self.seen.append(loss.item())
        else:
            self.losses.append(loss.detach())
        spin(HOST_MS)

    def close(self):
        if self.losses:
            self.seen.extend(torch.stack(self.losses).cpu().tolist())


if __name__ == "__main__":
    main("serialization", ["broken", "fixed"], Run, steps=40)
