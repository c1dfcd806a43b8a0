"""Accuracy scenario `mixed` (scripts/accuracy.sh): two causes in one program.

broken:   each step copies its 64 MB input from pageable memory (copy stall) and reads the loss
          with .item() followed by 3 ms of host work (serialization).
fix_copy: pinned inputs copied one step ahead on a side stream; the .item() and host work stay.
fix_sync: pageable copies stay; the losses stay on the GPU, the host work stays.
Truth for each cause: step(broken) - step(the form that fixes only that cause).
The step: a 4096 -> 2048 -> 4096 MLP on 4096 rows x 4096 features, MSE, SGD.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from scenario_common import Runner, main, spin

ROWS, DIM, WIDTH = 4096, 4096, 2048
HOST_MS = 3.0


_HOST = []


def host_buffers():
    """The pageable inputs, made once per process: every form and repeat reads the same pages."""
    if not _HOST:
        g = torch.Generator().manual_seed(3)
        _HOST.extend(torch.randn(ROWS, DIM, generator=g) for _ in range(2))
    return list(_HOST)


class Run(Runner):
    def __init__(self, form):
        self.pinned = form == "fix_copy"
        self.read = form != "fix_sync"
        self.model = nn.Sequential(nn.Linear(DIM, WIDTH), nn.GELU(), nn.Linear(WIDTH, DIM)).cuda()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=1e-3, momentum=0.9)
        self.host = host_buffers()
        self.i = 0
        self.losses = []
        self.seen = []
        if self.pinned:
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
        if self.pinned:
            b = i % 2
            torch.cuda.current_stream().wait_event(self.copied[b])
            x = self.dev[b]
            self.prefetch(i + 1)
        else:
            x = self.host[i % 2].to("cuda")
        self.opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(self.model(x), x)
        loss.backward()
        self.opt.step()
        if self.pinned:
            self.used[i % 2].record()
        if self.read:
            self.seen.append(loss.item())
        else:
            self.losses.append(loss.detach())
        spin(HOST_MS)

    def close(self):
        if self.losses:
            self.seen.extend(torch.stack(self.losses).cpu().tolist())


if __name__ == "__main__":
    main("mixed", ["broken", "fix_copy", "fix_sync"], Run, steps=30)


# truth rows for scripts/holdout_table.py (in-process runs: scripts/gpu-holdout.sh with
# HOLDOUT="mixed:broken:40:6000"); ROWS above is the batch's row count
TRUTH_ROWS = [
    ("copy + copy_stall", ["copy", "copy_stall"], "broken", "fix_copy", "copy_and_copy_stall"),
    ("serialization", ["serialization"], "broken", "fix_sync", "serialization"),
]
