"""Holdout workload `holdout_clip` (scripts/gpu-holdout.sh): the gradient norm read for a log.

Written after the lost-lead rule (docs/CLASSIFICATION.md), as a loop it was not tuned on: the
token-classification transformer of holdout_hidden.py (its model, optimizer and batches), with
gradient clipping, as most training loops have it:

  item   `clip_grad_norm_` then the norm read as a Python float every step for a log line
         (`norm.item()`): the host waits for the whole backward pass between the backward and
         the optimizer step, then launches the optimizer and the next step's forward pass while
         the GPU waits for it
  every  the same read every 10th step only
  fixed  `clip_grad_norm_`, the norms kept on the GPU (summed into a tensor; read once at close)

Truth rows (ROWS): step(form) - step(fixed), untraced, in the traced process's own rounds.
"""
import torch
import torch.nn.functional as F

from holdout_hidden import V, shared
from scenario_common import Runner, main

FORMS = ["item", "every", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "item", "fixed", "serialization"),
    ("serialization", ["serialization"], "every", "fixed", "serialization"),
]


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model, self.opt, self.batches = shared()
        self.i = 0
        self.norms = []
        self.total = torch.zeros((), device="cuda")

    def step(self):
        idx, labels = self.batches[self.i % 4]
        self.i += 1
        logits = self.model(idx)
        loss = F.cross_entropy(logits.view(-1, V), labels.view(-1), ignore_index=-100)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        if self.form == "item" or (self.form == "every" and self.i % 10 == 0):
            self.norms.append(norm.item())
        else:
            self.total += norm
        self.opt.step()
        del self.norms[:-100]

    def close(self):
        self.total.item()


if __name__ == "__main__":
    main("holdout_clip", FORMS, Run, steps=30, warmup=5)
