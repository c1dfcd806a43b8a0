"""Holdout workload `holdout_tabular` (scripts/gpu-holdout.sh): a tabular model fed by CPU-side
feature engineering in the main thread and large host-to-device copies.

An MLP (2048 -> 4096 -> 4096 -> 1, bf16 autocast, AdamW) on batches of 8192 rows x 2048
features (64 MB in fp32). Two causes, alone and together:

  p  each batch's features are made on the CPU in the main thread, with torch's CPU operations
     (raw counts drawn, log1p, standardized, clipped): host work outside CUDA that ends in the
     batch's copy; without it the batches come from a ring made before the loop
  m  pageable memory and a blocking copy; without it pinned memory and non_blocking=True (with
     p: two pinned buffers used in turn, each written again only after its copy's event; without
     p: the ring itself pinned)

Forms: pm (both), p, m, fixed. Truth rows (ROWS): step(form) - step(form without the cause),
untraced, in the traced process's own rounds.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from scenario_common import Runner, main

ROWS_N, FEAT, WIDTH = 8192, 2048, 4096
FORMS = ["pm", "p", "m", "fixed"]
ROWS = [
    ("data_starvation", ["data_starvation"], "pm", "m", "data_starvation"),
    ("copy + copy_stall", ["copy", "copy_stall"], "pm", "p", "copy_and_copy_stall"),
    ("data_starvation", ["data_starvation"], "p", "fixed", "data_starvation"),
    ("copy + copy_stall", ["copy", "copy_stall"], "m", "fixed", "copy_and_copy_stall"),
]
_SHARED = []


def shared():
    if not _SHARED:
        m = nn.Sequential(nn.Linear(FEAT, WIDTH), nn.ReLU(), nn.Linear(WIDTH, WIDTH), nn.ReLU(),
                          nn.Linear(WIDTH, 1)).cuda()
        opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
        g = torch.Generator().manual_seed(3)
        mean = torch.rand(FEAT, generator=g) * 3
        std = torch.rand(FEAT, generator=g) + 0.5
        _SHARED.extend([m, opt, mean, std])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        causes = "" if form == "fixed" else form
        self.prep = "p" in causes
        self.pageable = "m" in causes
        self.model, self.opt, self.mean, self.std = shared()
        self.gen = torch.Generator().manual_seed(7)
        self.ring = None if self.prep else [self.features() for _ in range(2)]
        if self.ring and not self.pageable:
            self.ring = [t.pin_memory() for t in self.ring]
        self.bufs = None
        if self.prep and not self.pageable:
            self.bufs = [torch.empty(ROWS_N, FEAT, pin_memory=True) for _ in range(2)]
            self.evs = [None, None]
        self.i = 0
        self.keep = []

    def features(self, out=None):
        raw = torch.randint(0, 1000, (ROWS_N, FEAT), generator=self.gen, dtype=torch.int32)
        x = torch.log1p(raw.float())
        x.sub_(self.mean).div_(self.std).clamp_(-5.0, 5.0)
        if out is None:
            return x
        out.copy_(x)
        return out

    def step(self):
        k = self.i % 2
        self.i += 1
        if self.pageable:
            host = self.features() if self.prep else self.ring[k]
            x = host.cuda()
        elif self.prep:
            if self.evs[k] is not None:
                self.evs[k].synchronize()  # the copy that last read this buffer (long done)
            buf = self.bufs[k]
            x = self.features(buf).cuda(non_blocking=True)
            self.evs[k] = torch.cuda.Event()
            self.evs[k].record()
        else:  # the ring is pinned and never written again
            x = self.ring[k].cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = self.model(x)
            loss = F.mse_loss(pred.float().squeeze(1), x[:, 0])
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.keep.append(loss.detach())

    def close(self):
        if self.keep:
            torch.stack(self.keep).cpu()


if __name__ == "__main__":
    main("holdout_tabular", FORMS, Run, steps=12, warmup=3)
