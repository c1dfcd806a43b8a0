"""Holdout workload `holdout_gpt` (scripts/gpu-holdout.sh): a loop the classifier was not tuned on.

A GPT-style language model: token and position embeddings, 6 pre-norm transformer layers (d 512,
8 heads, MLP 2048, causal mask), a 32,000-word head; batch 32 of 256 tokens, AdamW, bf16
autocast, the gradient clipped to norm 1 every step. Two causes, alone and together:

  t  the batch is tokenized in the main thread each step: Python turns 32 lines of synthetic
     text into ids through a vocabulary dict (lower-case, strip, split long words in two), then
     torch.tensor, pinned, and copied with non_blocking=True; without it the same kind of batch
     comes from a ring of pinned tensors tokenized before the loop (the same copy)
  g  every step logs its metrics on the host: loss, gradient norm and perplexity as Python
     floats (each a device-to-host read that waits for the GPU), formatted into a log line;
     without it the metrics stay on the GPU and are read once at the end

Forms: tg (both), t, g, fixed. Truth rows (ROWS): a cause's class on a form is
step(form) - step(form without the cause), untraced, in the traced process's own rounds.
"""
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

from scenario_common import Runner, main

V, D, L, H, T, B = 32000, 512, 6, 8, 256, 32
FORMS = ["tg", "t", "g", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("data_starvation", ["data_starvation"], "tg", "g", "data_starvation"),
    ("serialization", ["serialization"], "tg", "t", "serialization"),
    ("data_starvation", ["data_starvation"], "t", "fixed", "data_starvation"),
    ("serialization", ["serialization"], "g", "fixed", "serialization"),
]

_SHARED = []


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.pos = nn.Embedding(T, D)
        layer = nn.TransformerEncoderLayer(D, H, 4 * D, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, L, enable_nested_tensor=False)
        self.ln = nn.LayerNorm(D)
        self.head = nn.Linear(D, V, bias=False)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(T))

    def forward(self, idx):
        x = self.tok(idx) + self.pos.weight[: idx.shape[1]]
        x = self.blocks(x, mask=self.mask, is_causal=True)
        return self.head(self.ln(x))


def shared():
    if not _SHARED:
        m = GPT().cuda()
        opt = torch.optim.AdamW(m.parameters(), lr=3e-4, weight_decay=0.1)
        words = [f"Word{i}" for i in range(V - 1)]
        vocab = {w.lower(): i + 1 for i, w in enumerate(words)}
        _SHARED.extend([m, opt, words, vocab])
    return _SHARED


class Tokenizer:
    """A deliberately plain Python tokenizer: the host work of a loader in the main thread."""

    def __init__(self, words, vocab, seed):
        self.words, self.vocab, self.rng = words, vocab, random.Random(seed)

    def line(self):
        text = " ".join(self.rng.choice(self.words) + self.rng.choice(",. ")
                        for _ in range(T + 1))
        ids = []
        for w in text.split():
            w = w.lower().strip(",.")
            i = self.vocab.get(w)
            if i is None and len(w) > 6:  # an unknown word: its two halves
                ids.append(self.vocab.get(w[: len(w) // 2], 0))
                i = self.vocab.get(w[len(w) // 2:], 0)
            ids.append(i or 0)
        ids = (ids + [0] * (T + 1))[: T + 1]
        return ids

    def batch(self):
        return torch.tensor([self.line() for _ in range(B)], dtype=torch.long).pin_memory()


class Run(Runner):
    def __init__(self, form):
        causes = "" if form == "fixed" else form
        self.tokenize = "t" in causes
        self.log = "g" in causes
        self.model, self.opt, words, vocab = shared()
        self.model.train()
        self.tk = Tokenizer(words, vocab, 1)
        self.ring = [self.tk.batch() for _ in range(4)] if not self.tokenize else None
        self.i = 0
        self.lines, self.keep = [], []

    def step(self):
        cpu = self.tk.batch() if self.tokenize else self.ring[self.i % 4]
        self.i += 1
        t = cpu.cuda(non_blocking=True)
        x, y = t[:, :-1], t[:, 1:]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = self.model(x)
            loss = F.cross_entropy(logits.reshape(-1, V).float(), y.reshape(-1))
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        if self.log:
            m = {"loss": loss.item(), "gnorm": norm.item()}
            m["ppl"] = math.exp(min(m["loss"], 20.0))
            self.lines.append(f"step {self.i} " + " ".join(f"{k}={v:.4f}" for k, v in m.items()))
        else:
            self.keep.append(torch.stack([loss.detach(), norm.detach()]))

    def close(self):
        if self.keep:
            self.lines.append(str(torch.stack(self.keep).cpu().tolist()[-1]))


if __name__ == "__main__":
    main("holdout_gpt", FORMS, Run, steps=12, warmup=3)
