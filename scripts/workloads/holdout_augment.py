"""Holdout workload `holdout_augment` (scripts/gpu-holdout.sh): augmentation on the GPU, one
sample at a time.

Written in session 40 as a loop no rule was tuned on: torchvision ResNet-18 (100 classes) trained
in bf16 autocast, channels-last, SGD with momentum, batch 64 of 112x112 crops of 128x128 uint8
images that sit on the GPU already (a dataset cached in device memory). Each step augments its
batch on the GPU as many research loops write it, a Python loop over the samples: a random crop
(a slice), a horizontal flip half the time, a brightness and contrast jitter, then normalizes
and trains. The crop offsets, flips and factors are drawn on the host (Python's random) in every
form, so only how the augmentation runs differs:

  p      the per-sample loop: about nine small kernels per sample (the crop's copy and scale, a
         flip, the mean, the jitter's arithmetic, a clamp, the copy out; GPU run 142's reports:
         970 GPU operations a step against fixed's 379), 64 samples a step, each launched while
         the GPU finishes the one before: the step's front is a storm of tiny kernels
  pi     the same loop with the flip decided on the GPU (`torch.rand(1, device="cuda").item() <
         0.5`, a coin tossed where the tensors are): a read per sample, each waiting for the
         kernels before it, then the host's Python and the next launches while the GPU waits
  fixed  the same augmentation on the whole batch at once: the draws copied in as one pinned
         tensor (non_blocking), the crops gathered by one index, the flips by one `torch.where`,
         the factors as tensors of the batch's size (a dozen kernels)
  graph  fixed with its training step (normalize, forward, backward, SGD's step on a static
         augmented batch) captured once as a CUDA graph and replayed: what launch overhead still
         costs fixed
  pgraph p's whole step, the per-sample loop and the training step, captured once as a CUDA
         graph (the crops, flips and factors of the capture's draw replayed each step: the same
         kernels, launched once): what launch overhead costs p, the fix slack's launch-overhead
         what-if models (written in session 41)

Truth rows (ROWS): p's launch overhead is step(p) - step(fixed) (the usual fix of a storm of
tiny kernels: fewer, larger ones); pi's serialization step(pi) - step(p), its launch overhead
with it step(pi) - step(fixed); fixed's launch overhead step(fixed) - step(graph); p's own
launch overhead step(p) - step(pgraph), the what-if's fix. Untraced, in the traced process's own
rounds (BENCH_REUSE=1).
"""
import random

import torch
import torch.nn.functional as F
import torchvision

from scenario_common import Runner, capture_step, main

B, S, R, C, N = 64, 128, 112, 100, 512
FORMS = ["p", "pi", "fixed", "graph", "pgraph"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("launch_overhead", ["launch_overhead"], "p", "fixed", "launch_overhead"),
    ("serialization", ["serialization"], "pi", "p", "serialization"),
    ("launch_overhead", ["launch_overhead"], "fixed", "graph", "launch_overhead"),
    ("launch_overhead", ["launch_overhead"], "p", "pgraph", "launch_overhead"),
]
# pi's storm is p's: the verdict's truth for its launch overhead is the batching fix's saving,
# step(pi) - step(fixed) (the reads' 0.43 ms in GPU run 142 are under the healthy bar alone)
VERDICT_ROWS = [("launch_overhead", "pi", "pi", "fixed")]
_SHARED = []
_GRAPH = {}
_PGRAPH = {}


def shared():
    """The model, its optimizer, the images (uint8, on the GPU) and labels, the normalization"""
    if not _SHARED:
        m = torchvision.models.resnet18(num_classes=C).cuda().to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
        g = torch.Generator(device="cuda").manual_seed(7)
        imgs = torch.randint(0, 256, (N, 3, S, S), dtype=torch.uint8, device="cuda", generator=g)
        labels = torch.randint(0, C, (N,), device="cuda", generator=g)
        mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1)
        std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1)
        _SHARED.extend([m, opt, imgs, labels, mean, std])
    return _SHARED


def train(model, opt, x, y, mean, std):
    """One step on an augmented batch x (float in [0, 1], NCHW) and its labels"""
    x = ((x - mean) / std).contiguous(memory_format=torch.channels_last)
    with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
        loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def graphed(model, mean, std):
    """fixed's training step captured once per process: the shared model, an SGD of its own
    (momentum buffers made by the capture's warm-up steps), a static batch on the GPU"""
    if not _GRAPH:
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=True)
        x = torch.zeros(B, 3, R, R, device="cuda")
        y = torch.zeros(B, dtype=torch.int64, device="cuda")
        out = {}

        def body():
            out["loss"] = train(model, opt, x, y, mean, std).detach()

        _GRAPH.update(graph=capture_step(opt, body, mode="thread_local"), x=x, y=y, out=out)
    return _GRAPH


def pgraphed(run):
    """p's whole step captured once per process: the per-sample loop on one draw and the
    training step, an SGD of its own"""
    if not _PGRAPH:
        opt = torch.optim.SGD(run.model.parameters(), lr=0.01, momentum=0.9, foreach=True)
        k0, offs, flips, jit = run.draw()
        y = run.labels[k0:k0 + B].clone()
        out = {}

        def body():
            x = run.per_sample(k0, offs, flips, jit, False)
            out["loss"] = train(run.model, opt, x, y, run.mean, run.std).detach()

        # (y kept with the graph: freed, its memory taken by another tensor, the replays read
        # garbage labels, an assert in the loss in GPU run 143)
        _PGRAPH.update(graph=capture_step(opt, body, mode="thread_local"), out=out, y=y)
    return _PGRAPH


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model, self.opt, self.imgs, self.labels, self.mean, self.std = shared()
        self.model.train()
        self.rnd = random.Random(3)
        self.i = 0
        self.losses = []
        self.rows = torch.arange(R, device="cuda")
        self.batch_ix = torch.arange(B, device="cuda")
        self.chan = torch.arange(3, device="cuda")[None, :, None, None]

    def draw(self):
        """The batch's samples and their augmentation, drawn on the host"""
        k0 = (self.i * B) % N
        self.i += 1
        offs = [(self.rnd.randrange(S - R + 1), self.rnd.randrange(S - R + 1)) for _ in range(B)]
        flips = [self.rnd.random() < 0.5 for _ in range(B)]
        jit = [(0.8 + 0.4 * self.rnd.random(), 0.8 + 0.4 * self.rnd.random()) for _ in range(B)]
        return k0, offs, flips, jit

    def per_sample(self, k0, offs, flips, jit, coin_on_gpu):
        out = torch.empty(B, 3, R, R, device="cuda")
        for b in range(B):
            oy, ox = offs[b]
            x = self.imgs[k0 + b, :, oy:oy + R, ox:ox + R].float().div_(255)
            flip = torch.rand(1, device="cuda").item() < 0.5 if coin_on_gpu else flips[b]
            if flip:
                x = x.flip(2)
            bright, contrast = jit[b]
            m = x.mean()
            x = ((x - m) * contrast + m * bright).clamp_(0, 1)
            out[b].copy_(x)
        return out

    def batched(self, k0, offs, flips, jit):
        # the draws as one pinned host tensor, copied without waiting (a pageable
        # torch.tensor(..., device="cuda") would wait for the GPU: holdout_tensors' cause)
        host = torch.tensor([v for o in offs for v in o] + [float(f) for f in flips] +
                            [v for j in jit for v in j], dtype=torch.float32).pin_memory()
        d = host.cuda(non_blocking=True)
        oy, ox = d[0:2 * B:2].long(), d[1:2 * B:2].long()
        f = d[2 * B:3 * B].bool()[:, None, None, None]
        bright, contrast = d[3 * B::2, None, None, None], d[3 * B + 1::2, None, None, None]
        rows = (oy[:, None] + self.rows)[:, None, :, None].expand(B, 3, R, R)
        cols = (ox[:, None] + self.rows)[:, None, None, :].expand(B, 3, R, R)
        x = self.imgs[self.batch_ix[:, None, None, None] + k0, self.chan, rows, cols]
        x = x.float().div_(255)
        x = torch.where(f, x.flip(3), x)
        m = x.mean((1, 2, 3), keepdim=True)
        return ((x - m) * contrast + m * bright).clamp_(0, 1)

    def step(self):
        if self.form == "pgraph":
            g = pgraphed(self)
            g["graph"].replay()
            self.losses.append(g["out"]["loss"].clone())
            del self.losses[:-400]
            return
        k0, offs, flips, jit = self.draw()
        y = self.labels[k0:k0 + B]
        if self.form in ("p", "pi"):
            x = self.per_sample(k0, offs, flips, jit, self.form == "pi")
        else:
            x = self.batched(k0, offs, flips, jit)
        if self.form == "graph":
            g = graphed(self.model, self.mean, self.std)
            g["x"].copy_(x)
            g["y"].copy_(y)
            g["graph"].replay()
            self.losses.append(g["out"]["loss"].clone())
        else:
            self.opt.zero_grad(set_to_none=True)
            self.losses.append(train(self.model, self.opt, x, y, self.mean, self.std).detach())
        del self.losses[:-400]

    def close(self):
        if self.losses:
            self.losses[-1].item()


if __name__ == "__main__":
    main("holdout_augment", FORMS, Run, steps=30, warmup=5)
