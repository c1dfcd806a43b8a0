"""Compute-bound pairs for slack's compute hints (analyzer/hints.c, docs/ACCURACY.md "Compute
hints"): the GPU is busy, the question is how to make its kernels faster.

fp32:     ResNet-50 training step, batch 64, synthetic data already on the GPU, fp32 (TF32 off):
          cuDNN/cuBLAS fp32 kernels without tensor cores.
amp:      the same step under torch.autocast(bfloat16): the same math on tensor cores.
eager:    a stack of 12 elementwise-heavy blocks (layer norm, linear, GELU, gating, residual) on
          a (256, 1024) activation, training step, eager: hundreds of short kernels per step.
compiled: the same model under torch.compile: inductor fuses the elementwise chains.
graphed:  the eager model's whole step captured as a CUDA graph (torch.cuda.graph, the recipe of
          PyTorch's whole-network capture): one launch per step, the kernels unchanged.

Models are built once per form and process (torch.compile's cost is paid once); the harness
(scenario_common.py) times steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from scenario_common import Runner, capture_step, main

FORMS = ["fp32", "amp", "eager", "compiled", "graphed"]
# the eager form's launch overhead against one launch per step (scripts/holdout_table.py)
ROWS = [("launch_overhead", ["launch_overhead"], "eager", "graphed", "launch_overhead")]
_CACHE = {}


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc = nn.Linear(d, d)
        self.gate = nn.Parameter(torch.ones(d))

    def forward(self, x):
        y = self.fc(self.ln(x))
        y = F.gelu(y) * torch.sigmoid(y * self.gate) + 0.5 * y
        y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + 1e-6)
        return x + 0.1 * torch.tanh(y)


def built(form):
    if form in _CACHE:
        return _CACHE[form]
    if form in ("fp32", "amp"):
        import torchvision
        m = torchvision.models.resnet50(num_classes=1000).cuda()
        x = torch.randn(64, 3, 224, 224, device="cuda")
        y = torch.randint(0, 1000, (64,), device="cuda")
    else:
        m = nn.Sequential(*[Block(1024) for _ in range(12)]).cuda()
        x = torch.randn(256, 1024, device="cuda")
        y = torch.randn(256, 1024, device="cuda")
    opt = torch.optim.SGD(m.parameters(), lr=1e-3, momentum=0.9)
    fwd = torch.compile(m) if form == "compiled" else m
    _CACHE[form] = (m, fwd, opt, x, y)
    return _CACHE[form]


def graphed():
    """The eager step captured once per process (scenario_common.capture_step)."""
    if "graph" not in _CACHE:
        m, _, opt, x, y = built("graphed")

        def body():
            F.mse_loss(m(x), y).backward()
            opt.step()

        _CACHE["graph"] = capture_step(opt, body)
    return _CACHE["graph"]


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.m, self.fwd, self.opt, self.x, self.y = built(form)

    def step(self):
        if self.form == "graphed":
            graphed().replay()
            return
        self.opt.zero_grad(set_to_none=True)
        if self.form in ("fp32", "amp"):
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.form == "amp"):
                loss = F.cross_entropy(self.fwd(self.x), self.y)
        else:
            loss = F.mse_loss(self.fwd(self.x), self.y)
        loss.backward()
        self.opt.step()


if __name__ == "__main__":
    main("compute_pairs", FORMS, Run, steps=20, warmup=5)
