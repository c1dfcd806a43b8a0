"""Holdout workload `holdout_metrics` (scripts/gpu-holdout.sh): per-class metrics read one by one.

Written in session 25, after the assumed host pace, as a loop no rule was tuned on: a small
encoder-decoder segmentation net (conv, batch norm, upsampling; 16 classes on 128x128 images,
batch 16) trained with cross entropy, and the per-class intersection over union that a training
script logs every step, computed the way it is often written:

  m      for each class, `((pred == c) & (y == c)).sum().item()` and the same for the union: 32
         reads of a GPU value a step, each after a few tiny kernels, with Python between them
  t      the same counts for all classes on the GPU (a bincount of the confusion matrix) and one
         `.tolist()` a step
  b      the bincount accumulated on the GPU, nothing read: but torch.bincount on CUDA reads its
         input's largest value to size its output, a sync of its own (GPU run 94: slack named
         the bincount's line in `t` and in what was then `fixed`, 0.41-0.60 ms a step)
  fixed  the confusion matrix counted into its C*C bins with scatter_add_ (no size to find),
         accumulated on the GPU, read once at close

Truth rows (ROWS): step(form) - step(fixed), untraced, in the traced process's own rounds.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from scenario_common import Runner, main

FORMS = ["m", "t", "b", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "m", "fixed", "serialization"),
    ("serialization", ["serialization"], "t", "fixed", "serialization"),
    ("serialization", ["serialization"], "b", "fixed", "serialization"),
]
C, B, H = 16, 16, 128


def block(i, o):
    return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(inplace=True),
                         nn.Conv2d(o, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(inplace=True))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.d1, self.d2, self.d3 = block(3, 32), block(32, 64), block(64, 128)
        self.u2, self.u1 = block(128 + 64, 64), block(64 + 32, 32)
        self.head = nn.Conv2d(32, C, 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(F.max_pool2d(a, 2))
        c = self.d3(F.max_pool2d(b, 2))
        u = self.u2(torch.cat([F.interpolate(c, scale_factor=2.0), b], 1))
        u = self.u1(torch.cat([F.interpolate(u, scale_factor=2.0), a], 1))
        return self.head(u)


class Run(Runner):
    def __init__(self, form):
        self.form = form
        torch.manual_seed(0)
        self.model = Net().cuda()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        g = torch.Generator(device="cuda").manual_seed(1)
        self.batches = [(torch.randn(B, 3, H, H, device="cuda", generator=g),
                         torch.randint(0, C, (B, H, H), device="cuda", generator=g))
                        for _ in range(4)]
        self.i = 0
        self.log = []
        self.conf = torch.zeros(C * C, dtype=torch.long, device="cuda")

    def step(self):
        x, y = self.batches[self.i % 4]
        self.i += 1
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        with torch.no_grad():
            pred = logits.argmax(1)
            if self.form == "m":
                iou = []
                for c in range(C):
                    inter = ((pred == c) & (y == c)).sum().item()
                    union = ((pred == c) | (y == c)).sum().item()
                    iou.append(inter / union if union else float("nan"))
                self.log.append(sum(iou) / C)
            elif self.form == "fixed":
                idx = y.flatten() * C + pred.flatten()
                self.conf.scatter_add_(0, idx, torch.ones_like(idx))
            else:
                conf = torch.bincount(y.flatten() * C + pred.flatten(), minlength=C * C)
                if self.form == "t":
                    self.log.append(conf.tolist()[0])
                else:
                    self.conf += conf
        del self.log[:-100]

    def close(self):
        self.conf.sum().item()


if __name__ == "__main__":
    main("holdout_metrics", FORMS, Run, steps=30, warmup=5)
