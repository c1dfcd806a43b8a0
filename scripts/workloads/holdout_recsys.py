"""Holdout workload `holdout_recsys` (scripts/gpu-holdout.sh): a click-through-rate model whose
categorical features are hashed on the host.

Written in session 42 as a loop no rule was tuned on, the shape of a DLRM-style recommender's
training loop on Criteo-like logs: each sample is 13 dense values and NT categorical values that
arrive as strings (a user id, an item id, a site); the script hashes each string into its
table's rows with Python's hash, as a preprocessing step written in Python does. The model: NT
embedding tables of NROWS rows of D (dense gradients, 2 GB of weights), a bottom MLP for the dense
values, a top MLP over the concatenation, binary cross-entropy; SGD with momentum (foreach), fp32,
batches of B. Forms:

  h      the hashing in the main thread (a DataLoader with num_workers=0: its collate hashes the
         batch's B x NT strings, then the batch is pinned and copied non_blocking): the GPU waits
         while the host makes the next batch
  u      the hashing in WORKERS worker processes, but the step deduplicates each table's ids
         before its lookup (torch.unique with return_inverse, then the unique rows gathered back:
         a common cut of embedding traffic): unique's output size is read by the host, a sync
         per table, NT a step, each followed by the host's launches while the GPU waits
  us     u's deduplication without the sync: each table's ids sorted, the distinct ones
         scattered to the front of a buffer of B (its size known on the host, the tail left
         zero), the inverse from the sort's order, the same lookup and gather: unique's kind of
         work launched, nothing read (written after GPU run 147, whose only form without u's
         syncs, `fixed`, dropped the deduplication's launches with them)
  fixed  the hashing in WORKERS worker processes (persistent, pinned, prefetching), the lookups
         without deduplication

Truth rows (ROWS): step(h) - step(fixed), data starvation; step(u) - step(fixed) and step(u) -
step(us), serialization (the second the syncs alone); untraced, in the traced process's own
rounds (BENCH_REUSE=1).
"""
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

from scenario_common import Runner, main

B, NT, NDENSE, NROWS, D, WORKERS = 2048, 8, 13, 1 << 20, 64, 12
FORMS = ["h", "u", "us", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("data_starvation", ["data_starvation"], "h", "fixed", "data_starvation"),
    ("serialization", ["serialization"], "u", "fixed", "serialization"),
    ("serialization", ["serialization"], "u", "us", "serialization"),
]
_MODEL = []


class Logs(Dataset):
    """Sample i: its dense values, its categorical values as strings, its click"""
    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        rng = random.Random(i)
        dense = [rng.random() for _ in range(NDENSE)]
        cats = [f"{t}:{rng.getrandbits(24):06x}" for t in range(NT)]
        return dense, cats, float(rng.random() < 0.25)


def collate(items):
    """The batch's strings hashed into their tables' rows (the preprocessing written in Python)"""
    ids = torch.tensor([[hash(s) % NROWS for s in cats] for _, cats, _ in items])
    dense = torch.tensor([d for d, _, _ in items])
    return dense, ids, torch.tensor([y for _, _, y in items])


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.ModuleList(nn.Embedding(NROWS, D) for _ in range(NT))
        self.bottom = nn.Sequential(nn.Linear(NDENSE, 512), nn.ReLU(), nn.Linear(512, 256),
                                    nn.ReLU(), nn.Linear(256, D), nn.ReLU())
        self.top = nn.Sequential(nn.Linear(D * (NT + 1), 1024), nn.ReLU(), nn.Linear(1024, 1024),
                                 nn.ReLU(), nn.Linear(1024, 512), nn.ReLU(), nn.Linear(512, 1))


def shared():
    if not _MODEL:
        torch.manual_seed(0)
        m = Model().cuda()
        opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9, foreach=True)
        _MODEL.extend([m, opt])
    return _MODEL


def dedup(col):
    """torch.unique(col, return_inverse=True) without reading its size: the distinct ids first in
    a buffer of len(col) (the rest 0), and each id's slot among them"""
    srt, order = torch.sort(col)
    new = torch.ones_like(srt, dtype=torch.bool)
    new[1:] = srt[1:] != srt[:-1]
    slot = torch.cumsum(new, 0) - 1
    uq = torch.zeros_like(col).scatter_(0, slot, srt)
    return uq, torch.empty_like(col).scatter_(0, order, slot)


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model, self.opt = shared()
        workers = 0 if form == "h" else WORKERS
        kw = dict(persistent_workers=True, prefetch_factor=4,
                  multiprocessing_context="fork") if workers else {}
        self.dl = DataLoader(Logs(), batch_size=B, shuffle=False, num_workers=workers,
                             pin_memory=True, collate_fn=collate, **kw)
        self.it = iter(self.dl)
        if workers:
            time.sleep(2.0)  # let the workers start (not timed)
        self.losses = []

    def step(self):
        dense, ids, y = next(self.it)
        dense = dense.cuda(non_blocking=True)
        ids = ids.cuda(non_blocking=True)
        y = y.cuda(non_blocking=True)
        embs = []
        for t in range(NT):
            if self.form in ("u", "us"):  # each table's distinct ids looked up once, spread back
                if self.form == "u":
                    uq, inv = torch.unique(ids[:, t], return_inverse=True)
                else:
                    uq, inv = dedup(ids[:, t])
                embs.append(self.model.emb[t](uq)[inv])
            else:
                embs.append(self.model.emb[t](ids[:, t]))
        z = torch.cat([self.model.bottom(dense)] + embs, 1)
        loss = F.binary_cross_entropy_with_logits(self.model.top(z).squeeze(1), y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.losses.append(loss.detach())
        del self.losses[:-100]

    def close(self):
        if self.losses:
            torch.stack(self.losses).cpu()
        del self.it


if __name__ == "__main__":
    main("holdout_recsys", FORMS, Run, steps=20, warmup=3)
