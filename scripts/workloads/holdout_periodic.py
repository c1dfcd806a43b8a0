"""Holdout workload `holdout_periodic` (scripts/gpu-holdout.sh): training with a validation pass
every few iterations.

Written after the rules of session 17 (docs/CLASSIFICATION.md) as a loop no rule was tuned on:
torchvision ResNet-50, bf16 autocast, channels-last, SGD with momentum (foreach), batch 64 from
a DataLoader of 12 workers (the seed's FakeData and CPU transforms, pinned, non_blocking). After
every EVERY-th iteration the model is evaluated on VAL_BATCHES batches of 64 validation images
(FakeData 3x144x144, centre-cropped to 128, normalized): eval mode, no_grad, the top-5
hits counted on the GPU and read once per validation pass (the accuracy a trainer logs),
then back to train mode. The loop's iteration is the training step; the validation passes sit
between some of them. Causes:

  v  the validation DataLoader in the main thread (num_workers=0, as a val loader built
     without the train loader's arguments): the host decodes and transforms each validation
     batch while the GPU waits; without it 4 worker processes, persistent, pinned
  s  each validation batch's class probabilities read to the host as lists and the top-5
     accuracy counted in Python (the metric computed on the CPU: a sync per validation batch,
     then host work); without it the top-5 hits are counted on the GPU

Forms: vs, v, s, fixed, and graph: fixed with its training step (forward, backward and SGD's
step on a batch) captured once as a CUDA graph (scenario_common.capture_step) and replayed each
iteration, the batch copied into a static buffer, the validation pass eager as in fixed (the
usual fix of launch overhead; written in session 38: the verdict on `s` in GPU runs 71 and 72 is
launch overhead beside the metric's sync, and no form measured what a graph saves). Truth rows
(ROWS): step(form) - step(form without the cause), untraced, in the traced process's own rounds
(run with BENCH_REUSE=1 and STEPS a multiple of EVERY: each round's timed iterations hold the
same number of validation passes); the launch overhead a graph saves, step(fixed) -
step(graph). A step's time here is the training iteration's with the validation passes shared
out: the loop's time over its iterations.
"""
import time

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader
from torchvision import transforms

from holdout_loader import shared  # ResNet-50, channels-last, SGD with momentum
from resnet_seed import dataset  # the seed's FakeData and CPU transforms
from scenario_common import Runner, capture_step, main

B, EVERY, VAL_BATCHES = 64, 5, 3
FORMS = ["vs", "v", "s", "fixed", "graph"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("data_starvation", ["data_starvation"], "v", "fixed", "data_starvation"),
    ("data_starvation", ["data_starvation"], "vs", "s", "data_starvation"),
    ("serialization", ["serialization"], "s", "fixed", "serialization"),
    ("serialization", ["serialization"], "vs", "v", "serialization"),
    ("launch_overhead", ["launch_overhead"], "fixed", "graph", "launch_overhead"),
]
_GRAPH = {}


def graphed(model, crit):
    """fixed's training step captured once per process: the shared model, an SGD of its own
    (momentum buffers made by the capture's warm-up steps), static input buffers, the static
    loss"""
    if not _GRAPH:
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=True)
        x = torch.zeros(B, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
        y = torch.zeros(B, dtype=torch.int64, device="cuda")
        out = {}

        def body():
            with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
                loss = crit(model(x), y)
            loss.backward()
            opt.step()
            out["loss"] = loss.detach()

        model.train()
        _GRAPH.update(graph=capture_step(opt, body, mode="thread_local"), x=x, y=y, out=out)
    return _GRAPH


def val_dataset():
    tf = transforms.Compose([
        transforms.CenterCrop(128),
        transforms.ToTensor(),
        transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
    ])
    return torchvision.datasets.FakeData(size=10**6, image_size=(3, 144, 144), num_classes=1000,
                                         transform=tf, random_offset=10**7)


class Run(Runner):
    def __init__(self, form):
        causes = "" if form in ("fixed", "graph") else form
        self.graph = form == "graph"
        self.host_metric = "s" in causes
        self.model, self.opt = shared()
        self.model.train()
        self.crit = nn.CrossEntropyLoss()
        self.dl = DataLoader(dataset(), batch_size=B, shuffle=False, pin_memory=True,
                             num_workers=12, persistent_workers=True, prefetch_factor=4,
                             multiprocessing_context="fork")
        self.it = iter(self.dl)
        vkw = dict(batch_size=B, shuffle=False)
        if "v" not in causes:
            vkw.update(num_workers=4, pin_memory=True, persistent_workers=True, prefetch_factor=2,
                       multiprocessing_context="fork")
        self.vdl = DataLoader(val_dataset(), **vkw)
        self.vit = iter(self.vdl)
        time.sleep(1.5)  # let the workers start and fill their queues (not timed)
        self.n, self.losses, self.acc = 0, [], []

    def validate(self):
        self.model.eval()
        correct = torch.zeros((), dtype=torch.int64, device="cuda")
        host_correct = 0
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            for _ in range(VAL_BATCHES):
                x, y = next(self.vit)
                x = x.cuda(non_blocking=True).to(memory_format=torch.channels_last)
                y = y.cuda(non_blocking=True)
                probs = self.model(x).float().softmax(1)
                if self.host_metric:
                    rows, t = probs.tolist(), y.tolist()  # a sync, then top-5 in Python
                    for row, b in zip(rows, t):
                        top5 = sorted(range(len(row)), key=row.__getitem__, reverse=True)[:5]
                        host_correct += b in top5
                else:
                    correct += (probs.topk(5, 1).indices == y[:, None]).any(1).sum()
        self.acc.append(correct.item() + host_correct)  # once per pass: the accuracy logged
        self.model.train()

    def step(self):
        x, y = next(self.it)
        if self.graph:  # fixed's iteration with the training step replayed from its graph
            g = graphed(self.model, self.crit)
            g["x"].copy_(x, non_blocking=True)
            g["y"].copy_(y, non_blocking=True)
            g["graph"].replay()
            self.losses.append(g["out"]["loss"].clone())
        else:
            x = x.cuda(non_blocking=True).to(memory_format=torch.channels_last)
            y = y.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = self.crit(self.model(x), y)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            self.losses.append(loss.detach())
        del self.losses[:-400]
        self.n += 1
        if self.n % EVERY == 0:
            self.validate()

    def close(self):
        if self.losses:
            torch.stack(self.losses).cpu()
        del self.it, self.dl, self.vit, self.vdl


if __name__ == "__main__":
    main("holdout_periodic", FORMS, Run, steps=10, warmup=2)
