"""Holdout workload `holdout_trainer` (scripts/gpu-holdout.sh): a trainer's loop with everything
a trainer does between steps.

Written after the rules of session 19 (docs/CLASSIFICATION.md) as a loop no rule was tuned on,
the shape of a library trainer's inner loop: torchvision ResNet-50 (bf16 autocast,
channels-last, SGD with momentum, foreach) fed by 12 loader workers (the seed's FakeData and
CPU transforms, pinned, non_blocking); each iteration accumulates ACCUM micro-batches of MB
images before the optimizer's step; every LOG_EVERY-th iteration a log line (the loss read
from the GPU and written with the logging module to a file); after every EVAL_EVERY-th
iteration an evaluation on VAL_BATCHES batches from a validation loader of 4 workers (top-1
hits counted on the GPU and read once); after every CKPT_EVERY-th iteration a checkpoint of
the model and optimizer. Causes:

  l  the log line every iteration (a `.item()` each iteration) instead of every 10th
  c  the checkpoint saved in the loop with torch.save instead of asynchronously (pinned
     buffers filled by a side stream, written by a background thread)

Forms: lc, l, c, fixed, and graph: fixed with its training step (the ACCUM micro-batches'
forward and backward passes and SGD's step, its own optimizer over the shared model) captured
once as a CUDA graph (scenario_common.capture_step) and replayed each iteration, the batches
copied into static buffers, the evaluation and the checkpoint eager as in fixed (the usual fix of
launch overhead; written in session 37: the verdicts on lc and c name launch overhead beside the
checkpoint, which no form had measured). Truth rows (ROWS): step(form) - step(fixed), untraced,
in the traced process's own rounds (BENCH_REUSE=1, STEPS a multiple of CKPT_EVERY: each round's
timed iterations hold the same evaluations and checkpoints); the launch overhead a graph saves,
step(fixed) - step(graph). The loop's iteration is the optimizer's step.
"""
import logging
import os
import tempfile
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from holdout_ckpt import AsyncSaver, state_of
from holdout_loader import shared  # ResNet-50, channels-last, SGD with momentum
from holdout_periodic import val_dataset
from resnet_seed import dataset  # the seed's FakeData and CPU transforms
from scenario_common import Runner, capture_step, main

MB, ACCUM, LOG_EVERY, EVAL_EVERY, CKPT_EVERY, VAL_BATCHES = 32, 2, 10, 5, 10, 2
FORMS = ["lc", "l", "c", "fixed", "graph"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "lc", "fixed", "serialization"),
    ("serialization", ["serialization"], "l", "fixed", "serialization"),
    ("serialization", ["serialization"], "c", "fixed", "serialization"),
    ("launch_overhead", ["launch_overhead"], "fixed", "graph", "launch_overhead"),
]
_GRAPH = {}


def graphed(model, crit):
    """fixed's training step captured once per process: the shared model, an SGD of its own
    (momentum buffers made by the capture's warm-up steps), static input buffers for the ACCUM
    micro-batches, the static loss"""
    if not _GRAPH:
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=True)
        xs = [torch.zeros(MB, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
              for _ in range(ACCUM)]
        ys = [torch.zeros(MB, dtype=torch.int64, device="cuda") for _ in range(ACCUM)]
        out = {}

        def body():
            total = None
            for x, y in zip(xs, ys):
                with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
                    loss = crit(model(x), y) / ACCUM
                loss.backward()
                total = loss.detach() if total is None else total + loss.detach()
            opt.step()
            out["loss"] = total

        model.train()
        _GRAPH.update(graph=capture_step(opt, body), opt=opt, xs=xs, ys=ys, out=out)
    return _GRAPH


class Run(Runner):
    def __init__(self, form):
        causes = "" if form in ("fixed", "graph") else form
        self.graph = form == "graph"
        self.log_each = "l" in causes
        self.sync_ckpt = "c" in causes
        self.model, self.opt = shared()
        self.model.train()
        self.crit = nn.CrossEntropyLoss()
        self.dl = DataLoader(dataset(), batch_size=MB, shuffle=False, pin_memory=True,
                             num_workers=12, persistent_workers=True, prefetch_factor=4,
                             multiprocessing_context="fork")
        self.it = iter(self.dl)
        self.vdl = DataLoader(val_dataset(), batch_size=64, shuffle=False, pin_memory=True,
                              num_workers=4, persistent_workers=True, prefetch_factor=2,
                              multiprocessing_context="fork")
        self.vit = iter(self.vdl)
        self.dir = tempfile.mkdtemp(prefix="slack-trainer-")
        self.path = os.path.join(self.dir, f"ckpt-{form}.pt")
        self.log = logging.getLogger(f"trainer-{form}")
        self.log.propagate = False
        self.log.setLevel(logging.INFO)
        self.log.addHandler(logging.FileHandler(os.path.join(self.dir, "train.log")))
        self.saver = AsyncSaver()
        time.sleep(1.5)  # let the workers start and fill their queues (not timed)
        self.n, self.kept, self.acc = 0, [], []

    def graph_step(self):
        """fixed's iteration with the training step replayed from its graph"""
        g = graphed(self.model, self.crit)
        for x, y in zip(g["xs"], g["ys"]):
            bx, by = next(self.it)
            x.copy_(bx, non_blocking=True)
            y.copy_(by, non_blocking=True)
        g["graph"].replay()
        self.after_step(g["out"]["loss"].clone(), g["opt"])

    def after_step(self, total, opt):
        """what the trainer does between optimizer steps: the log line, the evaluation, the
        checkpoint (of the model and `opt`)"""
        self.n += 1
        if self.log_each:
            self.log.info("step %d loss %.4f", self.n, total.item())
        else:
            self.kept.append(total)
            if self.n % LOG_EVERY == 0:
                for k, v in enumerate(torch.stack(self.kept).tolist()):
                    self.log.info("step %d loss %.4f", self.n - len(self.kept) + 1 + k, v)
                self.kept = []
        if self.n % EVAL_EVERY == 0:
            self.evaluate()
        if self.n % CKPT_EVERY == 0:
            self.save(opt)

    def evaluate(self):
        self.model.eval()
        hits = torch.zeros((), dtype=torch.int64, device="cuda")
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            for _ in range(VAL_BATCHES):
                x, y = next(self.vit)
                x = x.cuda(non_blocking=True).to(memory_format=torch.channels_last)
                y = y.cuda(non_blocking=True)
                hits += (self.model(x).argmax(1) == y).sum()
        self.acc.append(hits.item())  # once per evaluation
        self.model.train()

    def save(self, opt):
        if self.sync_ckpt:
            torch.save(state_of(self.model, opt), self.path)
        else:
            self.saver.save(state_of(self.model, opt), self.path)

    def step(self):
        if self.graph:
            return self.graph_step()
        self.opt.zero_grad(set_to_none=True)
        total = None
        for _ in range(ACCUM):
            x, y = next(self.it)
            x = x.cuda(non_blocking=True).to(memory_format=torch.channels_last)
            y = y.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = self.crit(self.model(x), y) / ACCUM
            loss.backward()
            total = loss.detach() if total is None else total + loss.detach()
        self.opt.step()
        self.after_step(total, self.opt)

    def close(self):
        self.saver.join()
        if self.kept:
            torch.stack(self.kept).cpu()
        try:
            os.remove(self.path)
        except OSError:
            pass
        del self.it, self.dl, self.vit, self.vdl


if __name__ == "__main__":
    main("holdout_trainer", FORMS, Run, steps=20, warmup=2)
