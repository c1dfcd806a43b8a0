"""Holdout workload `holdout_tabular` (scripts/gpu-holdout.sh): a tabular model fed by CPU-side
feature engineering in the main thread and large host-to-device copies.

An MLP (2048 -> 4096 -> 4096 -> 1, bf16 autocast, AdamW) on batches of 8192 rows x 2048
features (64 MB in fp32). Two causes, alone and together:

  p  each batch's features are made on the CPU in the main thread, with torch's CPU operations
     (raw counts drawn, log1p, standardized, clipped): host work outside CUDA that ends in the
     batch's copy; without it the batches come from a ring made before the loop
  m  pageable memory and a blocking copy; without it the usual fix: pinned memory, the copy
     issued with non_blocking=True on a side stream right after the step's compute is launched
     (the next batch prefetched under it), the compute waiting for its event (with p: two
     pinned buffers used in turn, each written again only after its copy's event; without p:
     the ring itself pinned)

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
        self.side = None if self.pageable else torch.cuda.Stream()
        self.next = None
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

    def fetch(self, k):
        """batch k's copy, issued on the side stream (pinned memory, non_blocking): its GPU
        tensor and the event the compute waits for"""
        if self.prep:
            if self.evs[k % 2] is not None:
                self.evs[k % 2].synchronize()  # the copy that last read this buffer (long done)
            host = self.features(self.bufs[k % 2])
        else:
            host = self.ring[k % 2]  # pinned, never written again
        with torch.cuda.stream(self.side):
            x = host.cuda(non_blocking=True)
            ev = torch.cuda.Event()
            ev.record()
        if self.prep:
            self.evs[k % 2] = ev
        return x, ev

    def step(self):
        k = self.i
        self.i += 1
        if self.pageable:
            host = self.features() if self.prep else self.ring[k % 2]
            x = host.cuda()
        else:
            if self.next is None:
                self.next = self.fetch(k)
            x, ev = self.next
            torch.cuda.current_stream().wait_event(ev)
            x.record_stream(torch.cuda.current_stream())
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = self.model(x)
            loss = F.mse_loss(pred.float().squeeze(1), x[:, 0])
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.keep.append(loss.detach())
        if not self.pageable:  # the next batch's copy under this step's compute
            self.next = self.fetch(k + 1)

    def close(self):
        if self.keep:
            torch.stack(self.keep).cpu()


if __name__ == "__main__":
    main("holdout_tabular", FORMS, Run, steps=12, warmup=3)
