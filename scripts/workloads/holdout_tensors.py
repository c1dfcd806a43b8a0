"""Holdout workload `holdout_tensors` (scripts/gpu-holdout.sh): small tensors made on the device
from Python lists in the middle of the step.

Written after session 24's rules as a loop none was tuned on: the token-classification
transformer of holdout_hidden.py (its model, optimizer and batches), whose loss weighs each
sequence by a weight the host keeps in a Python list (a curriculum's or a sampler's), and whose
optimizer step takes a learning-rate scale per parameter group from another list (a
layer-wise decay), as many research loops write them:

  t      `torch.tensor(the_list, device="cuda")` where the values are needed: the weights after
         the forward pass, the scales before the optimizer's step. Each builds the tensor in
         pageable host memory and copies it with a blocking copy: the host waits for the GPU to
         finish what was launched before it (the forward pass; the backward pass), then
         launches the rest while the GPU waits for it
  fixed  the same values made into tensors on the host when the batch is chosen, pinned, and
         copied with `non_blocking=True` at the step's start, before the forward pass is
         launched: nothing waits

Truth rows (ROWS): step(t) - step(fixed), untraced, in the traced process's own rounds.
"""
import random

import torch
import torch.nn.functional as F

from holdout_hidden import B, V, shared
from scenario_common import Runner, main

FORMS = ["t", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("copy_stall", ["copy_stall"], "t", "fixed", "copy_stall"),
]


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model, self.opt, self.batches = shared()
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        rnd = random.Random(11)
        # per batch: a weight per sequence, and a scale per parameter (layer-wise decay)
        self.weights = [[0.5 + rnd.random() for _ in range(B)] for _ in range(4)]
        self.scales = [[0.9 ** (len(self.params) - k) for k in range(len(self.params))]
                       for _ in range(4)]
        self.pinned = [(torch.tensor(w).pin_memory(), torch.tensor(s).pin_memory())
                       for w, s in zip(self.weights, self.scales)]
        self.lr = self.opt.param_groups[0]["lr"]
        self.i = 0

    def step(self):
        k = self.i % 4
        idx, labels = self.batches[k]
        self.i += 1
        if self.form == "fixed":
            w = self.pinned[k][0].cuda(non_blocking=True)
            s = self.pinned[k][1].cuda(non_blocking=True)
        logits = self.model(idx)
        if self.form == "t":
            w = torch.tensor(self.weights[k], device="cuda")
        tok = F.cross_entropy(logits.view(-1, V), labels.view(-1), ignore_index=-100,
                              reduction="none").view(B, -1)
        loss = (tok.sum(1) * w).sum() / (labels != -100).sum().clamp(min=1)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        if self.form == "t":
            s = torch.tensor(self.scales[k], device="cuda")
        # the layer-wise scale applied to the gradients (one foreach multiply per parameter
        # group would be the same on the GPU in both forms)
        torch._foreach_mul_([p.grad for p in self.params], list(s.unbind(0)))
        self.opt.step()


if __name__ == "__main__":
    main("holdout_tensors", FORMS, Run, steps=30, warmup=5)
