"""Holdout workload `holdout_moe` (scripts/gpu-holdout.sh): a mixture-of-experts layer routed on the host.

Written after the rules of session 21 (docs/CLASSIFICATION.md) as a loop no rule was tuned on:
the shape of a sparse mixture-of-experts transformer's feed-forward (Mixtral's, as Hugging Face
first wrote it). 4 blocks, each a dense projection (Linear 1024 -> 1024, GELU) and a layer of 8
experts (Linear 1024 -> 2048, GELU, Linear 2048 -> 1024), a router picking 2 experts per token
(softmax, top-2, weights renormalized); 8192 tokens a step made on the GPU, bf16 autocast,
AdamW (foreach). The experts' weights are stacked (8 x 1024 x 2048) and shared by every form.
Forms:

  w      each expert's tokens found with torch.where on the routing mask, expert by expert (a
         nonzero: the host waits for the GPU to learn how many), gathered, run through the
         expert, weighted and added back (index_add_): 8 syncs per layer, 32 a step
  c      the tokens sorted by expert once per layer and the per-expert counts read as a list
         (bincount(...).tolist(): one sync per layer), then the same experts on the same
         token sets (torch.split by the counts)
  fixed  capacity dispatch (GShard's and Switch's way, the usual fix where the host must not
         wait): each token's slot in its expert's buffer of 1.25x the mean load computed on
         the GPU (cumsum of the one-hot routing), one batched matmul per projection over the 8
         experts; nothing read back. It does 1.25x the experts' FLOPs of the other forms and
         drops a token routed to a full expert (none at this routing's balance, as a rule)

Truth rows (ROWS): step(w) - step(c), the 7 syncs per layer the counts' read saves (the same
experts on the same tokens: the same GPU work but the where's); step(c) - step(fixed), the one
sync per layer left (the fixed form's GPU work differs: 1.25x FLOPs, batched). Untraced, in the
traced process's own rounds (BENCH_REUSE=1).
"""
import torch
import torch.nn.functional as F

from scenario_common import Runner, main

N, D, FF, E, K, L = 8192, 1024, 2048, 8, 2, 4
CAP = 1.25
FORMS = ["w", "c", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "w", "c", "serialization"),
    ("serialization", ["serialization"], "c", "fixed", "serialization"),
]
_PARAMS = []


def params():
    if not _PARAMS:
        g = torch.Generator().manual_seed(0)

        def w(*shape, scale):
            return (torch.randn(*shape, generator=g) * scale).cuda().requires_grad_()

        ps = []
        for _ in range(L):
            ps.append(dict(
                dw=w(D, D, scale=D ** -0.5), db=torch.zeros(D, device="cuda", requires_grad=True),
                rw=w(D, E, scale=D ** -0.5),
                w1=w(E, D, FF, scale=D ** -0.5), b1=torch.zeros(E, 1, FF, device="cuda",
                                                                 requires_grad=True),
                w2=w(E, FF, D, scale=FF ** -0.5), b2=torch.zeros(E, 1, D, device="cuda",
                                                                  requires_grad=True)))
        _PARAMS.append(ps)
    return _PARAMS[0]


def route(h, p):
    probs = torch.softmax(h @ p["rw"], dim=-1, dtype=torch.float32)
    topw, topi = probs.topk(K, dim=-1)
    topw = (topw / topw.sum(-1, keepdim=True)).to(h.dtype)
    return topw, topi


def expert(x, p, e):
    return F.gelu(x @ p["w1"][e] + p["b1"][e]) @ p["w2"][e] + p["b2"][e]


def moe_where(h, p):
    """Hugging Face's first Mixtral block: expert by expert, its tokens by torch.where"""
    topw, topi = route(h, p)
    out = torch.zeros_like(h)
    mask = F.one_hot(topi, E).permute(2, 1, 0)  # E x K x N
    for e in range(E):
        k, idx = torch.where(mask[e])  # a nonzero: the host waits for the count
        y = expert(h[idx], p, e) * topw[idx, k, None]
        out = out.index_add(0, idx, y)
    return out


def moe_counts(h, p):
    """sorted by expert, the counts read once: torch.split needs them on the host"""
    topw, topi = route(h, p)
    flat = topi.reshape(-1)
    order = torch.argsort(flat, stable=True)
    counts = torch.bincount(flat, minlength=E).tolist()  # one sync per layer
    tok = order // K
    xs = torch.split(h[tok], counts)
    ys = torch.cat([expert(x, p, e) for e, x in enumerate(xs)])
    ys = ys * topw.reshape(-1)[order, None]
    return torch.zeros_like(h).index_add(0, tok, ys)


def moe_capacity(h, p):
    """capacity dispatch: every index computed on the GPU, one batched matmul per projection"""
    topw, topi = route(h, p)
    cap = int(CAP * N * K / E)
    flat = topi.reshape(-1)  # N*K, token-major
    oh = F.one_hot(flat, E)
    pos = (oh.cumsum(0) * oh).sum(-1) - 1  # the slot in its expert's buffer
    keep = pos < cap
    slot = torch.where(keep, flat * cap + pos, E * cap)  # a dropped token goes to a spare row
    buf = h.new_zeros(E * cap + 1, D).index_copy(0, slot, h.repeat_interleave(K, 0))
    xe = buf[:E * cap].view(E, cap, D)
    ye = torch.bmm(F.gelu(torch.bmm(xe, p["w1"].to(h.dtype)) + p["b1"].to(h.dtype)),
                   p["w2"].to(h.dtype)) + p["b2"].to(h.dtype)
    yflat = torch.cat([ye.reshape(E * cap, D), h.new_zeros(1, D)])
    y = yflat[slot] * (topw.reshape(-1, 1) * keep[:, None].to(h.dtype))
    return y.view(N, K, D).sum(1)


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.ps = params()
        flat = [t for p in self.ps for t in p.values()]
        self.opt = torch.optim.AdamW(flat, lr=1e-4, foreach=True)
        self.moe = {"w": moe_where, "c": moe_counts, "fixed": moe_capacity}[form]
        self.gen = torch.Generator(device="cuda").manual_seed(0)

    def step(self):
        x = torch.randn(N, D, device="cuda", generator=self.gen)
        y = torch.randn(N, D, device="cuda", generator=self.gen)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = x
            for p in self.ps:
                h = h + F.gelu(h @ p["dw"] + p["db"])
                h = h + self.moe(h, p)
            loss = F.mse_loss(h.float(), y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()


if __name__ == "__main__":
    main("holdout_moe", FORMS, Run, steps=20, warmup=3)
