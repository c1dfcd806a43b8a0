"""Holdout workload `holdout_nanogpt` (scripts/gpu-holdout.sh): nanoGPT's character-level loop.

Written in session 32 as a loop no rule was tuned on: the training loop of Karpathy's nanoGPT
(train.py) with its `shakespeare_char` configuration, the "baby GPT" (6 layers, 6 heads, 384
wide, context 256, batch 64, dropout 0.2, AdamW fused, bf16 autocast, gradient clipping at 1.0,
cosine learning rate set in Python each iteration), on 1M random tokens of a 65-symbol vocabulary
held in a NumPy array (the memmap of train.bin, in memory). As in train.py, `get_batch` slices
64 windows out of the array on the host, stacks them, pins them and copies them non_blocking,
and the next batch is fetched right after the forward pass, while the GPU still works. A step of
about 500 kernels of a few microseconds to a few hundred: the host's launches and the GPU's
work are of the same order. An evaluation (`estimate_loss`: EVAL_ITERS batches of each split
through the model in eval mode, no gradient) runs every EVAL_EVERY iterations in every form.

  l      the loss read with `.item()` after every iteration (train.py with log_interval=1, as
         users often set it): the host waits for the GPU to drain, then launches the next
         iteration with nothing queued
  e      estimate_loss as train.py writes it: `losses[k] = loss.item()` after each evaluation
         batch, a wait for the GPU per batch
  n      both (train.py as configured by many users)
  fixed  the losses kept on the GPU (training losses in a list, evaluation losses written
         into a CUDA tensor) and read only at the end
  graph  fixed with the training step (forward, backward, clipping, AdamW) captured once as a
         CUDA graph and replayed each iteration (the usual fix of launch overhead: its own
         AdamW, fused and capturable, the learning rate a device tensor set before each
         replay; the batch copied into static buffers; the evaluation eager, as in fixed)
  lg     l with the graph: the loss read with `.item()` after each replay

Truth rows (ROWS): step(form) - step(fixed), untraced, in the traced process's own rounds; the
launch overhead a graph saves, step(fixed) - step(graph), and beside the per-iteration read,
step(l) - step(lg) (written in session 36; GPU run 137: the graph saves 8.08 ms of fixed's
step and 4.91 of l's, more than any read, as slack's verdicts on l, e and fixed name it).
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from scenario_common import Runner, capture_step, main

N_LAYER, N_HEAD, N_EMBD, BLOCK, BATCH, VOCAB, DROPOUT = 6, 6, 384, 256, 64, 65, 0.2
LR, MIN_LR, WARMUP_ITERS, DECAY_ITERS = 1e-3, 1e-4, 100, 5000
EVAL_EVERY, EVAL_ITERS = 5, 4
FORMS = ["l", "e", "n", "fixed", "graph", "lg"]
ROWS = [
    ("serialization", ["serialization"], "l", "fixed", "serialization"),
    ("serialization", ["serialization"], "e", "fixed", "serialization"),
    ("serialization", ["serialization"], "n", "fixed", "serialization"),
    ("launch_overhead", ["launch_overhead"], "fixed", "graph", "launch_overhead"),
    ("launch_overhead", ["launch_overhead"], "l", "lg", "launch_overhead"),
]
_SHARED = []
_GRAPH = {}


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(N_EMBD, 3 * N_EMBD, bias=False)
        self.c_proj = nn.Linear(N_EMBD, N_EMBD, bias=False)
        self.resid_dropout = nn.Dropout(DROPOUT)

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(N_EMBD, dim=2)
        q = q.view(b, t, N_HEAD, c // N_HEAD).transpose(1, 2)
        k = k.view(b, t, N_HEAD, c // N_HEAD).transpose(1, 2)
        v = v.view(b, t, N_HEAD, c // N_HEAD).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=DROPOUT if self.training else 0.0,
                                           is_causal=True)
        y = y.transpose(1, 2).contiguous().view(b, t, c)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = nn.Linear(N_EMBD, 4 * N_EMBD, bias=False)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * N_EMBD, N_EMBD, bias=False)
        self.dropout = nn.Dropout(DROPOUT)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(N_EMBD, bias=False)
        self.attn = CausalSelfAttention()
        self.ln_2 = nn.LayerNorm(N_EMBD, bias=False)
        self.mlp = MLP()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, N_EMBD)
        self.wpe = nn.Embedding(BLOCK, N_EMBD)
        self.drop = nn.Dropout(DROPOUT)
        self.h = nn.ModuleList([Block() for _ in range(N_LAYER)])
        self.ln_f = nn.LayerNorm(N_EMBD, bias=False)
        self.lm_head = nn.Linear(N_EMBD, VOCAB, bias=False)
        self.wte.weight = self.lm_head.weight  # weight tying, as nanoGPT
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                std = 0.02 / math.sqrt(2 * N_LAYER) if name.endswith("c_proj.weight") else 0.02
                torch.nn.init.normal_(p, mean=0.0, std=std)

    def forward(self, idx, targets):
        t = idx.size(1)
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss


def shared():
    if not _SHARED:
        model = GPT().cuda()
        decay = [p for p in model.parameters() if p.dim() >= 2]
        no_decay = [p for p in model.parameters() if p.dim() < 2]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                 {"params": no_decay, "weight_decay": 0.0}],
                                lr=LR, betas=(0.9, 0.99), fused=True)
        rng = np.random.default_rng(7)
        train = rng.integers(0, VOCAB, size=1_000_000, dtype=np.uint16)
        val = rng.integers(0, VOCAB, size=100_000, dtype=np.uint16)
        _SHARED.extend([model, opt, train, val])
    return _SHARED


def get_lr(it):
    """nanoGPT's schedule: linear warm-up, then cosine decay to MIN_LR"""
    if it < WARMUP_ITERS:
        return LR * (it + 1) / (WARMUP_ITERS + 1)
    if it > DECAY_ITERS:
        return MIN_LR
    ratio = (it - WARMUP_ITERS) / (DECAY_ITERS - WARMUP_ITERS)
    return MIN_LR + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (LR - MIN_LR)


def graphed():
    """The fixed form's training step captured once per process (scenario_common.capture_step):
    the shared model, its own AdamW (fused, capturable; the learning rate a device tensor, set
    before each replay), static input buffers the batch is copied into, the static loss."""
    if not _GRAPH:
        model = shared()[0]
        decay = [p for p in model.parameters() if p.dim() >= 2]
        no_decay = [p for p in model.parameters() if p.dim() < 2]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                 {"params": no_decay, "weight_decay": 0.0}],
                                lr=torch.tensor(LR, device="cuda"), betas=(0.9, 0.99),
                                fused=True, capturable=True)
        sx = torch.zeros(BATCH, BLOCK, dtype=torch.long, device="cuda")
        sy = torch.zeros_like(sx)
        out = {}

        def body():
            with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
                _, loss = model(sx, sy)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            out["loss"] = loss

        model.train()
        graph = capture_step(opt, body)
        _GRAPH.update(graph=graph, opt=opt, x=sx, y=sy, loss=out["loss"])
    return _GRAPH


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model, self.opt, self.train, self.val = shared()
        self.model.train()
        self.gen = torch.Generator().manual_seed(1234)
        self.it = 0
        self.losses = []
        self.log = []
        self.eval_losses = []
        self.x, self.y = self.get_batch(self.train)

    def get_batch(self, data):
        """nanoGPT's get_batch: windows sliced on the host, stacked, pinned, copied non_blocking"""
        ix = torch.randint(len(data) - BLOCK, (BATCH,), generator=self.gen).tolist()
        x = torch.stack([torch.from_numpy(data[i:i + BLOCK].astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + BLOCK].astype(np.int64)) for i in ix])
        return x.pin_memory().to("cuda", non_blocking=True), y.pin_memory().to("cuda", non_blocking=True)

    @torch.no_grad()
    def estimate_loss(self):
        self.model.eval()
        out = {}
        for split, data in (("train", self.train), ("val", self.val)):
            if self.form in ("e", "n"):
                losses = torch.zeros(EVAL_ITERS)
                for k in range(EVAL_ITERS):
                    x, y = self.get_batch(data)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        _, loss = self.model(x, y)
                    losses[k] = loss.item()
                out[split] = losses.mean()
            else:
                losses = torch.zeros(EVAL_ITERS, device="cuda")
                for k in range(EVAL_ITERS):
                    x, y = self.get_batch(data)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        _, loss = self.model(x, y)
                    losses[k] = loss.detach().float()
                out[split] = losses.mean()
        self.model.train()
        return out

    def step(self):
        lr = get_lr(self.it)
        if self.form in ("graph", "lg"):
            return self.graph_step(lr)
        for g in self.opt.param_groups:
            g["lr"] = lr
        if self.it % EVAL_EVERY == 0 and self.it > 0:
            ev = self.estimate_loss()
            if self.form in ("e", "n"):
                self.log.append(f"step {self.it}: train loss {float(ev['train']):.4f}, "
                                f"val loss {float(ev['val']):.4f}")
            else:
                self.eval_losses.append(torch.stack([ev["train"], ev["val"]]))
                del self.eval_losses[:-20]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            _, loss = self.model(self.x, self.y)
        self.x, self.y = self.get_batch(self.train)  # the next batch while the GPU works
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        if self.form in ("l", "n"):
            lossf = loss.item()
            self.log.append(f"iter {self.it}: loss {lossf:.4f}, lr {lr:.2e}")
        else:
            self.losses.append(loss.detach())
            del self.losses[:-50]
        del self.log[:-50]
        self.it += 1

    def graph_step(self, lr):
        """fixed's iteration (lg: l's) with the training step replayed from its graph"""
        g = graphed()
        if self.it % EVAL_EVERY == 0 and self.it > 0:
            ev = self.estimate_loss()  # eager and on the GPU, as fixed's
            self.eval_losses.append(torch.stack([ev["train"], ev["val"]]))
            del self.eval_losses[:-20]
        for group in g["opt"].param_groups:
            if torch.is_tensor(group["lr"]):
                group["lr"].fill_(lr)
        g["x"].copy_(self.x, non_blocking=True)
        g["y"].copy_(self.y, non_blocking=True)
        g["graph"].replay()
        self.x, self.y = self.get_batch(self.train)  # the next batch while the GPU works
        if self.form == "lg":
            lossf = g["loss"].item()
            self.log.append(f"iter {self.it}: loss {lossf:.4f}, lr {lr:.2e}")
        else:
            self.losses.append(g["loss"].detach().clone())
            del self.losses[:-50]
        del self.log[:-50]
        self.it += 1

    def close(self):
        if self.losses:
            torch.stack(self.losses).cpu()
        if self.eval_losses:
            torch.stack(self.eval_losses).cpu()


if __name__ == "__main__":
    main("holdout_nanogpt", FORMS, Run, steps=30, warmup=5)
