"""Holdout workload `holdout_hidden` (scripts/gpu-holdout.sh): syncs a user does not see.

A token-classification transformer (masked-language-model style): token and position
embeddings, 4 pre-norm encoder layers (d 512, 8 heads, MLP 2048), an 8,192-word head; batch 16
of 256 tokens of which about 15% carry a label (the rest -100), AdamW, fp32. Each form hides one
host-device synchronization that the code never names:

  mask   the loss over the labelled tokens only, by boolean indexing (`logits[sel]`): indexing
         with a mask is a nonzero() whose size the host needs, so the host waits for the whole
         forward pass in the middle of the step, then launches the loss and the backward pass
         while the GPU waits for it
  free   `torch.cuda.empty_cache()` after every optimizer step (a habit "against fragmentation"):
         cudaFree waits for the device, and the next step allocates its memory again with
         cudaMalloc between its launches
  log    the loss read as a Python float every 10th step for a log line (`loss.item()`)
  fixed  cross-entropy with ignore_index=-100 (the same loss, no sync), no empty_cache, the loss
         kept on the GPU

Truth rows (ROWS): step(form) - step(fixed), untraced, in the traced process's own rounds.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from scenario_common import Runner, main

V, D, L, H, T, B = 8192, 512, 4, 8, 256, 16
FORMS = ["mask", "free", "log", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "mask", "fixed", "serialization"),
    ("serialization", ["serialization"], "free", "fixed", "serialization"),
    ("serialization", ["serialization"], "log", "fixed", "serialization"),
]
_SHARED = []


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.pos = nn.Embedding(T, D)
        layer = nn.TransformerEncoderLayer(D, H, 4 * D, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, L, enable_nested_tensor=False)
        self.ln = nn.LayerNorm(D)
        self.head = nn.Linear(D, V)

    def forward(self, idx):
        x = self.tok(idx) + self.pos.weight[: idx.shape[1]]
        return self.head(self.ln(self.blocks(x)))


def shared():
    if not _SHARED:
        m = Encoder().cuda()
        opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
        g = torch.Generator().manual_seed(7)
        batches = []
        for _ in range(4):
            idx = torch.randint(0, V, (B, T), generator=g)
            labels = torch.randint(0, V, (B, T), generator=g)
            labels[torch.rand(B, T, generator=g) > 0.15] = -100
            batches.append((idx.cuda(), labels.cuda()))
        _SHARED.extend([m, opt, batches])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model, self.opt, self.batches = shared()
        self.i = 0
        self.lines = []

    def step(self):
        idx, labels = self.batches[self.i % 4]
        self.i += 1
        logits = self.model(idx)
        if self.form == "mask":
            sel = labels != -100
            loss = F.cross_entropy(logits[sel], labels[sel])
        else:
            loss = F.cross_entropy(logits.view(-1, V), labels.view(-1), ignore_index=-100)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        if self.form == "free":
            torch.cuda.empty_cache()
        if self.form == "log" and self.i % 10 == 0:
            self.lines.append(f"step {self.i} loss {loss.item():.4f}")
        del self.lines[:-100]


if __name__ == "__main__":
    main("holdout_hidden", FORMS, Run, steps=30, warmup=5)
