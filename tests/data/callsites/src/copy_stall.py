"""Accuracy scenario `copy_stall` (scripts/accuracy.sh).

broken: each step's 64 MB input is copied from pageable host memory (tensor.to("cuda")): the host
        stages it through the driver's bounce buffer and waits, and the copy runs between the
        steps' compute.
fixed:  the inputs sit in pinned memory and are copied with non_blocking=True on a side stream,
        one step ahead (double buffer, events order the streams): the copy overlaps compute.
The step: a 4096 -> 2048 -> 4096 MLP on 4096 rows x 4096 features, MSE, SGD.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from scenario_common import Runner, main

ROWS, DIM, WIDTH = 4096, 4096, 2048


_HOST = []


def host_buffers():
    """The pageable inputs, made once per process: every form and repeat reads the same pages."""
    if not _HOST:
        g = torch.Generator().manual_seed(2)
        _HOST.extend(torch.randn(ROWS, DIM, generator=g) for _ in range(2))
    return list(_HOST)


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model = nn.Sequential(nn.Linear(DIM, WIDTH), nn.GELU(), nn.Linear(WIDTH, DIM)).cuda()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=1e-3, momentum=0.9)
        self.host = host_buffers()
        self.i = 0
        if form == "fixed":
            self.host = [h.pin_memory() for h in self.host]  # pinned copies of the same data
            self.dev = [torch.empty(ROWS, DIM, device="cuda") for _ in range(2)]
            self.side = torch.cuda.Stream()
            self.copied = [torch.cuda.Event() for _ in range(2)]
            self.used = [torch.cuda.Event() for _ in range(2)]
            for e in self.used:
                e.record()
            self.prefetch(0)

    def prefetch(self, i):
        b = i % 2
        with torch.cuda.stream(self.side):
            self.side.wait_event(self.used[b])
            self.dev[b].copy_(self.host[b], non_blocking=True)
            self.copied[b].record(self.side)

    def step(self):
        i = self.i
        self.i += 1
        if self.form == "broken":
            x = self.host[i % 2].to("cuda")
        else:
            b = i % 2
            torch.cuda.current_stream().wait_event(self.copied[b])
            x = self.dev[b]
            self.prefetch(i + 1)
        self.opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(self.model(x), x)
        loss.backward()
        self.opt.step()
        if self.form == "fixed":
            self.used[i % 2].record()


if __name__ == "__main__":
    main("copy_stall", ["broken", "fixed"], Run, steps=30)
