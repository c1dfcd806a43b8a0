"""Holdout workload `holdout_wide` (scripts/gpu-holdout.sh): a launch-bound step behind a copy
of wide pinned rows that the host waits for.

Written in session 45, after every rule of docs/CLASSIFICATION.md, as a loop no rule was tuned
on: a model of wide tabular or embedding rows (512 rows of 16384 float32 features, 32 MB a batch,
from a ring of 4 pinned host batches made at start) projected to 512 by one matmul, then 12
residual blocks of LayerNorm, Linear(512, 512) and GELU, a 64-class head, cross-entropy, AdamW
(foreach): a step of a few hundred short kernels that the host launches more slowly than the
GPU runs them, behind a copy of about a millisecond.

  b      `x.cuda()`, `y.cuda()` without non_blocking (the batch pinned already): the host waits
         for the copy (and stops launching) each step
  fixed  the same copies with non_blocking=True: the host launches the step while the copy runs
  graph  fixed's step (forward, loss, backward, AdamW's step) captured once as a CUDA graph and
         replayed, the batch copied into its static buffers with non_blocking=True

Truth rows (ROWS): step(b) - step(fixed), the blocking copies' cost; step(fixed) - step(graph),
the launch overhead a graph saves; untraced, in the traced process's own rounds.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from scenario_common import Runner, capture_step, main

B, FEAT, W, DEPTH, C = 512, 16384, 512, 12, 64
FORMS = ["b", "fixed", "graph"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("copy_stall", ["copy_stall"], "b", "fixed", "copy_stall"),
    ("launch_overhead", ["launch_overhead"], "fixed", "graph", "launch_overhead"),
]
_SHARED = []
_GRAPH = {}


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(W)
        self.fc = nn.Linear(W, W)

    def forward(self, h):
        return h + F.gelu(self.fc(self.ln(h)))


class Wide(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(FEAT, W)
        self.blocks = nn.ModuleList(Block() for _ in range(DEPTH))
        self.head = nn.Linear(W, C)

    def forward(self, x):
        h = self.proj(x)
        for b in self.blocks:
            h = b(h)
        return self.head(h)


def shared():
    if not _SHARED:
        torch.manual_seed(0)
        m = Wide().cuda()
        opt = torch.optim.AdamW(m.parameters(), lr=1e-4, foreach=True)
        g = torch.Generator().manual_seed(5)
        ring = []
        for _ in range(4):
            x = torch.randn(B, FEAT, generator=g)
            y = torch.randint(0, C, (B,), generator=g)
            ring.append((x.pin_memory(), y.pin_memory()))
        _SHARED.extend([m, opt, ring])
    return _SHARED


def graphed(model):
    """fixed's step captured once per process: the shared model, an AdamW of its own
    (capturable: its step count on the GPU), static batch buffers"""
    if not _GRAPH:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, capturable=True, foreach=True)
        xs = torch.zeros(B, FEAT, device="cuda")
        ys = torch.zeros(B, dtype=torch.long, device="cuda")

        def body():
            loss = F.cross_entropy(model(xs), ys)
            loss.backward()
            opt.step()

        _GRAPH.update(graph=capture_step(opt, body), xs=xs, ys=ys)
    return _GRAPH


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model, self.opt, self.ring = shared()
        self.i = 0
        self.losses = []

    def step(self):
        x, y = self.ring[self.i % len(self.ring)]
        self.i += 1
        if self.form == "graph":
            g = graphed(self.model)
            g["xs"].copy_(x, non_blocking=True)
            g["ys"].copy_(y, non_blocking=True)
            g["graph"].replay()
            return
        nb = self.form == "fixed"
        x = x.cuda(non_blocking=nb)
        y = y.cuda(non_blocking=nb)
        loss = F.cross_entropy(self.model(x), y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.losses.append(loss.detach())
        del self.losses[:-100]

    def close(self):
        if self.losses:
            torch.stack(self.losses).cpu()


if __name__ == "__main__":
    main("holdout_wide", FORMS, Run, steps=100, warmup=10)
