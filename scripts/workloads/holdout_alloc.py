"""Holdout workload `holdout_alloc` (scripts/gpu-holdout.sh): the caching allocator at its limit.

Written in session 43, after every rule of docs/CLASSIFICATION.md, as a loop no rule was tuned
on: a pre-norm transformer encoder (8 layers, d=1024, 16 heads, a tied 8192-token head; bf16
autocast, AdamW) trained on batches of 16 sequences whose length changes every step (192 to
1024 tokens, a seeded draw: variable-length text without bucketing), under a device-memory limit
the way a shared or crowded GPU sets one (torch.cuda.set_per_process_memory_fraction, or a
second model on the same card). Its limit is 1.1x the step's own peak at the longest length plus
256 MB, measured at start: enough for any one step, not for the cache of blocks that
every length leaves behind. When a new length's block fits no cached one and a new segment would
pass the limit, PyTorch's allocator frees every unused cached segment (cudaFree, which waits for
the whole GPU) and allocates again (`num_alloc_retries` in torch.cuda.memory_stats(), printed per
round as ALLOC lines).

  cap    the lengths above, under the limit (GPU run 151: no retry in any round, the allocator
         splitting its cached blocks for every length; what its trace showed was cuDNN's plan
         for each length met the first time, docs/CLASSIFICATION.md "Steps on a new shape")
  fixed  the same lengths and the same steps with the limit lifted (the cache keeps a block for
         every length after the first steps: no cudaMalloc or cudaFree in the loop)
  tight  as `cap`, each step's logits kept for 3 steps (a view of the last token's, for a log:
         it holds the whole tensor, up to 268 MB, of another size each step) under a limit of
         the step's peak plus 64 MB; raised a twentieth at each out-of-memory error (ALLOC's
         `ooms`) until the steps fit, the kept tensors' holes left in the cache
  tfixed as `tight` with the limit lifted
  frag   as `tight` (logits kept 3 steps), its limit set between what one pass over every length
         allocated at most and what the cache then held at most (`max_memory_allocated` and
         `max_memory_reserved` after `empty_cache()`, no limit): room for the tensors, not for
         the cache's holes, so that the allocator keeps freeing and allocating (GPU runs 151 and
         152: `cap` and `tight` settled with no retry); raised a fiftieth per out-of-memory error
  ffixed as `frag` with the limit lifted

Truth rows (ROWS): step(cap) - step(fixed), step(tight) - step(tfixed) and step(frag) -
step(ffixed), untraced, in the traced process's own rounds. The
usual fixes (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, lengths padded to a few buckets,
more memory) change the process's allocator or its work; lifting the limit is the one that
changes neither, and what any of them saves is the frees' and the allocations' time.
"""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

from scenario_common import Runner, main

D, LAYERS, HEADS, B, V = 1024, 8, 16, 16, 8192
LENS = list(range(192, 1025, 64))
FORMS = ["cap", "fixed", "tight", "tfixed", "frag", "ffixed"]
ROWS = [("serialization", ["serialization"], "cap", "fixed", "serialization"),
        ("serialization", ["serialization"], "tight", "tfixed", "serialization"),
        ("serialization", ["serialization"], "frag", "ffixed", "serialization")]
_SHARED = {}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        layer = nn.TransformerEncoderLayer(D, HEADS, 4 * D, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.enc = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(D)

    def forward(self, x):
        h = self.norm(self.enc(self.emb(x)))
        return h @ self.emb.weight.t()


def train(model, opt, x, kept=None):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(x[:, :-1])
        loss = F.cross_entropy(logits.float().flatten(0, 1), x[:, 1:].flatten())
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if kept is not None:  # the last token's logits for a log: a view that holds all of them
        kept.append(logits.detach()[:, -1])
        del kept[:-3]
    return loss.detach()


def shared():
    """The model, its optimizer and the limit (bytes), built once for both forms: the limit from
    three steps at the longest length with none set"""
    if not _SHARED:
        torch.manual_seed(0)
        model = Net().cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        g = torch.Generator(device="cuda").manual_seed(1)
        torch.cuda.reset_peak_memory_stats()
        for _ in range(3):
            train(model, opt, torch.randint(0, V, (B, LENS[-1] + 1), device="cuda", generator=g))
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
        total = torch.cuda.get_device_properties(0).total_memory
        _SHARED.update(model=model, opt=opt, gen=g, limit=int(peak * 1.1) + (256 << 20),
                       tight=peak + (64 << 20), total=total)
        print(f"ALLOC peak_mb={peak >> 20} limit_mb={_SHARED['limit'] >> 20} "
              f"total_mb={total >> 20}", flush=True)
    return _SHARED


def frag_limit():
    """`frag`'s limit: one pass over every length with the logits kept, no limit, the cache
    emptied first; between the most it allocated and the most the cache held"""
    s = shared()
    if "frag" not in s:
        limit(s["total"])
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        kept = []
        for n in LENS:
            train(s["model"], s["opt"], torch.randint(0, V, (B, n + 1), device="cuda",
                                                      generator=s["gen"]), kept)
        torch.cuda.synchronize()
        a, r = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
        s["frag"] = max(int(a * 1.01), (a + r) // 2)
        print(f"ALLOC frag allocated_mb={a >> 20} reserved_mb={r >> 20} "
              f"limit_mb={s['frag'] >> 20}", flush=True)
    return s["frag"]


class Run(Runner):
    def __init__(self, form):
        s = shared()
        self.form, self.model, self.opt, self.gen = form, s["model"], s["opt"], s["gen"]
        self.limit = {"cap": s["limit"], "tight": s["tight"]}.get(form, s["total"])
        if form == "frag":
            self.limit = frag_limit()
        self.kept = [] if form in ("tight", "tfixed", "frag", "ffixed") else None
        self.rng = random.Random(2)
        self.losses = []
        self.ooms = 0
        self.st0 = counts()

    def step(self):
        limit(self.limit)  # each step: with BENCH_REUSE=1 the forms' rounds alternate
        n = self.rng.choice(LENS)
        x = torch.randint(0, V, (B, n + 1), device="cuda", generator=self.gen)
        try:
            self.losses.append(train(self.model, self.opt, x, self.kept))
        except torch.OutOfMemoryError:
            # past the limit within a step (`cap`: not expected, its limit holds the longest
            # step's peak; `tight` and `frag`: until the limit has risen enough): raise it a
            # twentieth (`frag`: a fiftieth) and go on, counted in the ALLOC line
            self.ooms += 1
            self.opt.zero_grad(set_to_none=True)
            grow = 1.02 if self.form == "frag" else 1.05
            self.limit = min(int(self.limit * grow), _SHARED["total"])
        del self.losses[:-50]

    def pause(self):
        """After each round: what the allocator did in it (an ALLOC line)"""
        now = counts()
        d = [a - b for a, b in zip(now, self.st0)]
        self.st0 = now
        print(f"ALLOC form={self.form} retries={d[0]} segments_allocated={d[1]} "
              f"segments_freed={d[2]} ooms={self.ooms} limit_mb={self.limit >> 20}", flush=True)

    def close(self):
        if self.losses:
            torch.stack(self.losses).sum().item()
        if self.kept:
            self.kept.clear()
        self.pause()
        limit(_SHARED["total"])  # the default for whatever runs after


def counts():
    st = torch.cuda.memory_stats()
    return (st.get("num_alloc_retries", 0), st.get("segment.all.allocated", 0),
            st.get("segment.all.freed", 0))


def limit(nbytes):
    """The process's device-memory limit, set where it changes"""
    if _SHARED.get("set") != nbytes:
        torch.cuda.set_per_process_memory_fraction(nbytes / _SHARED["total"])
        _SHARED["set"] = nbytes


if __name__ == "__main__":
    main("holdout_alloc", FORMS, Run, steps=30, warmup=5)
