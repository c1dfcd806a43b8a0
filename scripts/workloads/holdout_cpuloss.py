"""Holdout workload `holdout_cpuloss` (scripts/gpu-holdout.sh): the loss computed on the CPU.

Written in session 49, after every rule of docs/CLASSIFICATION.md: a token tagger (a transformer
encoder: d 1024, 6 layers, 16 heads, MLP 4096; bf16 autocast, AdamW) on batches of 64 sequences
of 512 tokens made on the GPU, 64 tags, whose loss runs on the host: the logits read with `.cpu()`
(the host waits for the forward pass), a class-weighted, label-smoothed cross-entropy computed by
CPU ops, and the backward pass started from that CPU loss, so autograd copies the logits' gradient
back to the device before the encoder's backward kernels can run. The shape of a loss or decoder
that only has a CPU implementation (a CRF, a Python-level matching) or of code written on a laptop
and moved to a GPU. Forms:

  cpu    the logits to the host, the loss there, its gradient back
  fixed  the same loss on the GPU (the usual fix): nothing read in the step

Truth row (ROWS): step(cpu) - step(fixed), untraced, in the traced process's own rounds: the
host waits for the GPU, then the GPU waits for the host's loss and its gradient's copy
(serialization by the stall classes' definitions: a round trip through the host).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from scenario_common import Runner, main

B, T, D, L, H, TAGS, V = 64, 512, 1024, 6, 16, 64, 8192
FORMS = ["cpu", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "cpu", "fixed", "serialization"),
]
_SHARED = []


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.pos = nn.Parameter(torch.zeros(T, D))
        layer = nn.TransformerEncoderLayer(D, H, 4 * D, batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, L, enable_nested_tensor=False)
        self.head = nn.Linear(D, TAGS)

    def forward(self, ids):
        return self.head(self.enc(self.emb(ids) + self.pos))


def shared():
    if not _SHARED:
        torch.manual_seed(0)
        m = Tagger().cuda()
        opt = torch.optim.AdamW(m.parameters(), lr=1e-4, foreach=True)
        w = torch.linspace(0.5, 2.0, TAGS)
        _SHARED.extend([m, opt, w, w.cuda(), torch.Generator(device="cuda").manual_seed(0)])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        self.m, self.opt, self.w_cpu, self.w_gpu, self.gen = shared()
        self.on_cpu = form == "cpu"

    def step(self):
        ids = torch.randint(0, V, (B, T), device="cuda", generator=self.gen)
        tags = torch.randint(0, TAGS, (B, T), device="cuda", generator=self.gen)
        self.opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = self.m(ids)
        logits = logits.float().reshape(-1, TAGS)
        if self.on_cpu:
            # the host's loss: logits and targets read, the loss and its gradient on the CPU
            loss = F.cross_entropy(logits.cpu(), tags.reshape(-1).cpu(), weight=self.w_cpu,
                                   label_smoothing=0.1)
        else:
            loss = F.cross_entropy(logits, tags.reshape(-1), weight=self.w_gpu, label_smoothing=0.1)
        loss.backward()
        self.opt.step()


if __name__ == "__main__":
    main("holdout_cpuloss", FORMS, Run, steps=30, warmup=5)
