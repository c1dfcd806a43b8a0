"""scripts/bench: training steps of a small decoder-only transformer, the larger-model workload.

8 layers, d_model 1024, 16 heads, MLP 4096, vocabulary 8192, batch 16 x 512 tokens, bf16
autocast, causal scaled_dot_product_attention, AdamW: about 117 M parameters, ~6 TFLOP per step
(6 x params x tokens, plus attention), so the GPU (not the launches) sets the pace. Random tokens
on the GPU (no input pipeline). WARMUP steps, then STEPS timed steps between two
synchronizations; also checks that the loss is finite.

  python3 transformer_step.py        prints RESULT workload=transformer steps_per_s=...
  import transformer_step; transformer_step.run()   returns (steps_per_s, loss)
"""
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

LAYERS, D, HEADS, FF, VOCAB, BATCH, SEQ = 8, 1024, 16, 4096, 8192, 16, 512
WARMUP, STEPS = 3, 15


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.fc1, self.fc2 = nn.Linear(D, FF), nn.Linear(FF, D)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, D))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.pos = nn.Parameter(torch.zeros(SEQ, D))
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln = nn.LayerNorm(D)
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, idx):
        x = self.emb(idx) + self.pos
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x))


def run(warmup=WARMUP, steps=STEPS, dev="cuda"):
    torch.manual_seed(0)
    model = Model().to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ + 1), device=dev)
    x, y = tokens[:, :-1], tokens[:, 1:]

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast(torch.device(dev).type, dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x).float().view(-1, VOCAB), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
    torch.cuda.synchronize()
    sps = steps / (time.perf_counter() - t0)
    loss = float(loss)
    if loss != loss or loss in (float("inf"), float("-inf")):
        raise SystemExit("transformer_step: non-finite loss")
    return sps, loss


def main():
    sps, loss = run()
    print("RESULT workload=transformer steps_per_s=%.3f loss=%.4f" % (sps, loss), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
