"""Accuracy scenario `healthy` (scripts/accuracy.sh): a compute-bound job with nothing to fix.

A 4-layer MLP (4096 wide) on 2048 rows already on the GPU, MSE, SGD; no host reads, no copies,
few large kernels. slack should find no stall class above 2% of its step time.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from scenario_common import Runner, main

ROWS, WIDTH, LAYERS = 2048, 4096, 4


class Run(Runner):
    def __init__(self, form):
        layers = []
        for _ in range(LAYERS):
            layers += [nn.Linear(WIDTH, WIDTH), nn.GELU()]
        self.model = nn.Sequential(*layers).cuda()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=1e-4, momentum=0.9)
        self.xs = [torch.randn(ROWS, WIDTH, device="cuda") for _ in range(2)]
        self.i = 0

    def step(self):
        x = self.xs[self.i % 2]
        self.i += 1
        self.opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(self.model(x), x)
        loss.backward()
        self.opt.step()


if __name__ == "__main__":
    main("healthy", ["healthy"], Run, steps=20)
