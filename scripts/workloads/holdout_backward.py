"""Holdout workload `holdout_backward` (scripts/gpu-holdout.sh): a read of a GPU value inside a
custom backward pass.

Written in session 43, after every rule of docs/CLASSIFICATION.md, as a loop no rule was tuned
on: holdout_alloc's transformer encoder (8 layers, d=1024, a tied 8192-token head; bf16
autocast, fused AdamW) on batches of 16 sequences of 512 tokens made on the GPU, with each
layer's output passed through a custom autograd Function that clips the gradient flowing back
through it to a largest magnitude of 1 (a per-layer adaptive clipping, as research code writes
it). PyTorch runs a backward pass on its autograd thread, so that is where the clipping runs:

  b      the backward reads the gradient's largest magnitude (`.item()`) and divides only when
         it is over 1: 8 reads a step on the autograd thread, each waiting for the GPU
  fixed  the same clipping without the read (divided by the magnitude clamped to at least 1, on
         the GPU): the same result

Truth row (ROWS): step(b) - step(fixed), untraced, in the traced process's own rounds.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from holdout_alloc import D, HEADS, LAYERS, V
from scenario_common import Runner, main

B, L = 16, 512
FORMS = ["b", "fixed"]
ROWS = [("serialization", ["serialization"], "b", "fixed", "serialization")]
_SHARED = []


class ClipRead(torch.autograd.Function):
    """Identity forward; backward: the gradient divided by its largest magnitude where that is
    over 1, decided on the host"""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        m = g.abs().max()
        if m.item() > 1.0:
            g = g / m
        return g


class ClipDevice(torch.autograd.Function):
    """The same clipping on the GPU: divided by the largest magnitude clamped to at least 1"""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g / g.abs().max().clamp(min=1.0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(D, HEADS, 4 * D, dropout=0.0, batch_first=True,
                                       norm_first=True) for _ in range(LAYERS))
        self.norm = nn.LayerNorm(D)

    def forward(self, x, clip):
        h = self.emb(x)
        for layer in self.layers:
            h = clip.apply(layer(h))
        return self.norm(h) @ self.emb.weight.t()


def shared():
    if not _SHARED:
        torch.manual_seed(0)
        model = Net().cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        g = torch.Generator(device="cuda").manual_seed(1)
        xs = [torch.randint(0, V, (B, L + 1), device="cuda", generator=g) for _ in range(4)]
        _SHARED.extend([model, opt, xs])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        self.model, self.opt, self.xs = shared()
        self.clip = ClipRead if form == "b" else ClipDevice
        self.i = 0
        self.losses = []

    def step(self):
        x = self.xs[self.i % len(self.xs)]
        self.i += 1
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = self.model(x[:, :-1], self.clip)
            loss = F.cross_entropy(logits.float().flatten(0, 1), x[:, 1:].flatten())
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.losses.append(loss.detach())
        del self.losses[:-100]

    def close(self):
        if self.losses:
            torch.stack(self.losses).sum().item()


if __name__ == "__main__":
    main("holdout_backward", FORMS, Run, steps=30, warmup=5)
