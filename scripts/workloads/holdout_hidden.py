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
  graph  fixed's step (forward, loss, backward, AdamW's step) captured once as a CUDA graph and
         replayed on static copies of the batch: what launch overhead costs fixed, and so the
         broken forms, which launch fixed's kernels and their sync's (written in session 42: GPU
         run 56's verdicts for mask and free, launch overhead, could not be judged against a
         graph's saving)

Truth rows (ROWS): step(form) - step(fixed), untraced, in the traced process's own rounds; fixed's
launch overhead step(fixed) - step(graph).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from scenario_common import Runner, capture_step, main

V, D, L, H, T, B = 8192, 512, 4, 8, 256, 16
FORMS = ["mask", "free", "log", "fixed", "graph"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "mask", "fixed", "serialization"),
    ("serialization", ["serialization"], "free", "fixed", "serialization"),
    ("serialization", ["serialization"], "log", "fixed", "serialization"),
    ("launch_overhead", ["launch_overhead"], "fixed", "graph", "launch_overhead"),
]
_SHARED = []
_GRAPH = {}


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


def graphed(model):
    """fixed's step captured once per process: the shared model, an AdamW of its own (capturable:
    its step count on the GPU), static batch buffers"""
    if not _GRAPH:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, capturable=True)
        idx = torch.zeros(B, T, dtype=torch.long, device="cuda")
        labels = torch.full((B, T), -100, dtype=torch.long, device="cuda")

        def body():
            logits = model(idx)
            loss = F.cross_entropy(logits.view(-1, V), labels.view(-1), ignore_index=-100)
            loss.backward()
            opt.step()

        _GRAPH.update(graph=capture_step(opt, body), idx=idx, labels=labels)
    return _GRAPH


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model, self.opt, self.batches = shared()
        self.i = 0
        self.lines = []

    def step(self):
        idx, labels = self.batches[self.i % 4]
        self.i += 1
        if self.form == "graph":  # the batch into the graph's buffers, fixed's step replayed
            g = graphed(self.model)
            g["idx"].copy_(idx)
            g["labels"].copy_(labels)
            g["graph"].replay()
            return
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
