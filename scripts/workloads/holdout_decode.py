"""Holdout workload `holdout_decode` (scripts/gpu-holdout.sh): a generation loop, token by token.

Written after the rules of session 17 (docs/CLASSIFICATION.md) as a loop no rule was tuned on: a
GPT-style decoder (8 layers, 1024 wide, 16 heads, vocabulary 32,000, bf16 weights) serving
requests of BATCH prompts of PROMPT tokens: each request's prompts are tokenized on the host
(random ids here) and copied in, one prefill pass fills a key/value cache, then NEW tokens are
sampled one at a time (temperature 0.8), each fed back through the model against the cache; the
finished flags are read every 16 tokens (the usual stop check), and the generated ids are
copied back to the host at the end of the request (detokenizing needs them). A request is the
loop's iteration; its tokens are an inner loop. Causes:

  h  sampling on the host: each token's last-position probabilities copied to the host and
     sampled there with torch.multinomial on the CPU, the token copied back (a sync per token,
     then host work while the GPU waits); without it sampled on the GPU
  k  the stop check every token (`finished.all().item()`: a sync per token) instead of every 16

Forms: h, k, fixed. Truth rows (ROWS): step(form) - step(fixed), untraced, in the traced
process's own rounds. The step is a request.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from scenario_common import Runner, main

L, D, H, V = 8, 1024, 16, 32000
BATCH, PROMPT, NEW, EOS = 16, 128, 48, 2
FORMS = ["h", "k", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "h", "fixed", "serialization"),
    ("serialization", ["serialization"], "k", "fixed", "serialization"),
]


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.fc1, self.fc2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x, kc, vc, pos):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(D, -1)
        q, k, v = (z.view(b, t, H, D // H).transpose(1, 2) for z in (q, k, v))
        kc[:, :, pos:pos + t] = k
        vc[:, :, pos:pos + t] = v
        a = F.scaled_dot_product_attention(q, kc[:, :, :pos + t], vc[:, :, :pos + t],
                                           is_causal=t > 1)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, D))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.pos = nn.Embedding(PROMPT + NEW, D)
        self.blocks = nn.ModuleList(Block() for _ in range(L))
        self.ln = nn.LayerNorm(D)
        self.head = nn.Linear(D, V, bias=False)

    def forward(self, ids, caches, pos):
        t = ids.shape[1]
        x = self.emb(ids) + self.pos(torch.arange(pos, pos + t, device=ids.device))
        for blk, (kc, vc) in zip(self.blocks, caches):
            x = blk(x, kc, vc, pos)
        return self.head(self.ln(x[:, -1]))  # the last position's logits


_SHARED = []


def shared():
    if not _SHARED:
        m = Decoder().cuda().to(torch.bfloat16).eval()
        shape = (BATCH, H, PROMPT + NEW, D // H)
        caches = [(torch.empty(shape, device="cuda", dtype=torch.bfloat16),
                   torch.empty(shape, device="cuda", dtype=torch.bfloat16)) for _ in range(L)]
        _SHARED.extend([m, caches])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        causes = "" if form == "fixed" else form
        self.host_sample = "h" in causes
        self.check_every = 1 if "k" in causes else 16
        self.model, self.caches = shared()
        self.gen = torch.Generator().manual_seed(5)
        self.texts = []

    @torch.no_grad()
    def step(self):
        prompt = torch.randint(3, V, (BATCH, PROMPT), generator=self.gen)  # tokenized on the host
        ids = prompt.cuda()
        out = torch.empty((BATCH, NEW), dtype=torch.int64, device="cuda")
        finished = torch.zeros(BATCH, dtype=torch.bool, device="cuda")
        logits = self.model(ids, self.caches, 0)
        for i in range(NEW):
            probs = (logits.float() / 0.8).softmax(-1)
            if self.host_sample:
                tok = torch.multinomial(probs.cpu(), 1, generator=self.gen).cuda()
            else:
                tok = torch.multinomial(probs, 1)
            out[:, i] = tok[:, 0]
            finished |= tok[:, 0] == EOS
            if (i + 1) % self.check_every == 0 and finished.all().item():
                break
            if i + 1 < NEW:
                logits = self.model(tok, self.caches, PROMPT + i)
        self.texts.append(out.cpu())  # detokenized on the host
        del self.texts[:-16]


if __name__ == "__main__":
    main("holdout_decode", FORMS, Run, steps=6, warmup=2)
