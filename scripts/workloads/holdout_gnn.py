"""Holdout workload `holdout_gnn` (scripts/gpu-holdout.sh): a graph network trained on sampled
neighbourhoods.

Written in session 31 as a loop no rule was tuned on: GraphSAGE-style node classification the way
mini-batch GNN training runs (two layers, mean aggregation, a wide MLP head), on a random graph of
200,000 nodes (Poisson degrees, mean 15) with 128 float features a node kept in host memory.
Each batch: 512 seed nodes, 10 neighbours sampled (with replacement) for each at two hops in
NumPy, the nodes made unique and relabelled (`np.unique(return_inverse=True)`), and their
features gathered from the host's table: about 32,000 nodes, 16 MB of features and 0.4 MB of
indices, of a size that changes from batch to batch. Forms:

  n      the sampler in the main thread (a DataLoader with num_workers=0), its tensors copied
         with blocking `.cuda()` from pageable memory
  np     the sampler in the main thread, the batch pinned there (pin_memory=True) and copied
         with non_blocking=True
  p      6 worker processes sample (persistent), the same pageable blocking copies: the batch
         arrives in shared memory, whose pages the copy maps as it reads them
  fixed  6 worker processes, pin_memory=True, copies with non_blocking=True
  fs     `fixed` with the next batch copied one step ahead on a side stream (the fix slack's
         verdict gives `fixed`, whose pinned copies run on the compute stream alone: GPU run 114)

Truth rows (ROWS): the pageable copies' cost with the loader in the main thread (n against np)
and in workers (p against fixed), and the loader's with pinned copies (np against fixed),
untraced, in the traced process's own rounds (BENCH_REUSE=1: the workers start once). GPU run
112 had no `np`: its loader row, n against p, read 2.34 ms where moving the sampler out saved
about 8 ms, because the workers' batches then copied 7 ms slower from shared memory.
"""
import time

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

from scenario_common import Runner, main

NODES, DEG, FEAT, CLASSES = 200_000, 15, 128, 47
SEEDS, FANOUT, HID = 512, 10, 1024
FORMS = ["n", "np", "p", "fixed", "fs"]
ROWS = [
    ("copy + copy_stall", ["copy", "copy_stall"], "n", "np", "copy_and_copy_stall"),
    ("data_starvation", ["data_starvation"], "np", "fixed", "data_starvation"),
    ("copy + copy_stall", ["copy", "copy_stall"], "p", "fixed", "copy_and_copy_stall"),
    ("copy + copy_stall", ["copy", "copy_stall"], "fixed", "fs", "copy_and_copy_stall"),
]
# the verdict's truth for `n` (scripts/holdout_table.py): its sampler in the main thread is np's,
# whose fix (the workers, pinned as np's batches are) saved step(np) - step(fixed)
VERDICT_ROWS = [("data_starvation", "n", "np", "fixed")]
_SHARED = []


class Graph:
    """A random graph in CSR form with node features and labels (NumPy, seeded)"""

    def __init__(self, seed=0):
        rng = np.random.default_rng(seed)
        deg = rng.poisson(DEG, NODES) + 1
        self.indptr = np.zeros(NODES + 1, np.int64)
        np.cumsum(deg, out=self.indptr[1:])
        self.indices = rng.integers(0, NODES, int(self.indptr[-1]), dtype=np.int64)
        self.x = rng.standard_normal((NODES, FEAT), dtype=np.float32)
        self.y = rng.integers(0, CLASSES, NODES, dtype=np.int64)

    def neighbours(self, nodes, rng):
        """FANOUT neighbours of each node, drawn with replacement: an array (len(nodes), FANOUT)"""
        start = self.indptr[nodes]
        deg = self.indptr[nodes + 1] - start
        pick = rng.integers(0, 1 << 30, (len(nodes), FANOUT)) % deg[:, None]
        return self.indices[start[:, None] + pick]


class Batches(Dataset):
    """Batch i: its seeds' two-hop sample, relabelled, with the features of every node in it"""

    def __init__(self, graph, n=10**6):
        self.g = graph
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        rng = np.random.default_rng(1000 + i)
        seeds = rng.integers(0, NODES, SEEDS)
        n1 = self.g.neighbours(seeds, rng)
        u1, inv1 = np.unique(np.concatenate([seeds, n1.ravel()]), return_inverse=True)
        n2 = self.g.neighbours(u1, rng)
        u2, inv2 = np.unique(np.concatenate([u1, n2.ravel()]), return_inverse=True)
        return {
            "x": torch.from_numpy(self.g.x[u2]),
            "self2": torch.from_numpy(inv2[:len(u1)]),
            "nbr2": torch.from_numpy(inv2[len(u1):].reshape(len(u1), FANOUT)),
            "self1": torch.from_numpy(inv1[:SEEDS]),
            "nbr1": torch.from_numpy(inv1[SEEDS:].reshape(SEEDS, FANOUT)),
            "y": torch.from_numpy(self.g.y[seeds]),
        }


class Sage(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.own = nn.Linear(cin, cout)
        self.nbr = nn.Linear(cin, cout, bias=False)

    def forward(self, h, own, nbr):
        agg = h[nbr.reshape(-1)].reshape(nbr.shape[0], nbr.shape[1], -1).mean(1)
        return self.own(h[own]) + self.nbr(agg)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = Sage(FEAT, HID)
        self.head1 = nn.Sequential(nn.ReLU(), nn.Linear(HID, 4 * HID), nn.ReLU(), nn.Linear(4 * HID, HID), nn.ReLU())
        self.l2 = Sage(HID, HID)
        self.head2 = nn.Sequential(nn.ReLU(), nn.Linear(HID, 4 * HID), nn.ReLU(), nn.Linear(4 * HID, CLASSES))

    def forward(self, b):
        h = self.head1(self.l1(b["x"], b["self2"], b["nbr2"]))
        return self.head2(self.l2(h, b["self1"], b["nbr1"]))


def shared():
    if not _SHARED:
        g = Graph()
        m = Model().cuda()
        opt = torch.optim.Adam(m.parameters(), lr=1e-3)
        _SHARED.extend([g, m, opt])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.graph, self.model, self.opt = shared()
        self.model.train()
        self.crit = nn.CrossEntropyLoss()
        n = 0 if form in ("n", "np") else 6
        self.pinned = form in ("np", "fixed", "fs")
        self.side = torch.cuda.Stream() if form == "fs" else None
        self.ahead = None
        kw = dict(batch_size=None, shuffle=False, num_workers=n, pin_memory=self.pinned)
        if n:
            kw.update(persistent_workers=True, prefetch_factor=4, multiprocessing_context="fork")
        self.dl = DataLoader(Batches(self.graph), **kw)
        self.it = iter(self.dl)
        if n:
            time.sleep(1.5)  # let the workers start (not timed)
        self.losses = []

    def fetch(self):
        """the next batch on the device: copied now, or (fs) on the side stream, one step ahead"""
        if self.side is None:
            return {k: v.cuda(non_blocking=self.pinned) for k, v in next(self.it).items()}
        if self.ahead is None:
            self.ahead = self.copy_ahead()
        b = self.ahead
        torch.cuda.current_stream().wait_stream(self.side)
        for v in b.values():
            v.record_stream(torch.cuda.current_stream())
        self.ahead = self.copy_ahead()
        return b

    def copy_ahead(self):
        with torch.cuda.stream(self.side):
            return {k: v.cuda(non_blocking=True) for k, v in next(self.it).items()}

    def step(self):
        b = self.fetch()
        out = self.model(b)
        loss = self.crit(out, b["y"])
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.losses.append(loss.detach())
        del self.losses[:-50]

    def close(self):
        if self.losses:
            torch.stack(self.losses).cpu()
        del self.it
        del self.dl


if __name__ == "__main__":
    main("holdout_gnn", FORMS, Run, steps=30, warmup=5)
