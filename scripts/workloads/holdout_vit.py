"""Holdout workload `holdout_vit` (scripts/gpu-holdout.sh): a vision transformer's training step.

Written after the verdict's "sync first" rule (docs/CLASSIFICATION.md) as a loop no rule was
tuned on: torchvision ViT-B/16 (224x224, 1000 classes), batch 96, bf16 autocast, AdamW; the
batches from a ring of two made before the loop (the loader is not a cause here). Causes, alone
and together:

  c  pageable memory and blocking copies (`x.cuda()` of a 58 MB batch from pageable memory);
     without it the usual fix: pinned memory, the next batch's copy issued with
     non_blocking=True on a side stream under this step's compute, the compute waiting for its
     event
  s  the loss read as a Python float after the optimizer step (`loss.item()`, for a log line)
  a  the batch's accuracy read as a Python float between the forward and the backward pass
     (`(logits.argmax(1) == y).float().mean().item()`): the host waits for the forward pass,
     then launches the backward pass while the GPU waits for it

Forms: c, s, a, cs, fixed. Truth rows (ROWS): step(form) - step(form without the cause),
untraced, in the traced process's own rounds.
"""
import torch
import torch.nn.functional as F
import torchvision

from scenario_common import Runner, main

B = 96
FORMS = ["c", "s", "a", "cs", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("copy + copy_stall", ["copy", "copy_stall"], "c", "fixed", "copy_and_copy_stall"),
    ("copy + copy_stall", ["copy", "copy_stall"], "cs", "s", "copy_and_copy_stall"),
    ("serialization", ["serialization"], "s", "fixed", "serialization"),
    ("serialization", ["serialization"], "cs", "c", "serialization"),
    ("serialization", ["serialization"], "a", "fixed", "serialization"),
]
_SHARED = []


def shared():
    if not _SHARED:
        m = torchvision.models.vit_b_16(num_classes=1000).cuda()
        opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
        g = torch.Generator().manual_seed(5)
        ring = [(torch.randn(B, 3, 224, 224, generator=g),
                 torch.randint(0, 1000, (B,), generator=g)) for _ in range(2)]
        _SHARED.extend([m, opt, ring])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        causes = "" if form == "fixed" else form
        self.pageable = "c" in causes
        self.read_loss = "s" in causes
        self.read_acc = "a" in causes
        self.model, self.opt, ring = shared()
        self.model.train()
        self.ring = ring if self.pageable else [(x.pin_memory(), y.pin_memory()) for x, y in ring]
        self.side = None if self.pageable else torch.cuda.Stream()
        self.next = None
        self.i = 0
        self.keep, self.seen = [], []

    def fetch(self, k):
        """batch k's copies on the side stream (pinned, non_blocking) and the event they end in"""
        x, y = self.ring[k % 2]
        with torch.cuda.stream(self.side):
            gx, gy = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            ev = torch.cuda.Event()
            ev.record()
        return gx, gy, ev

    def step(self):
        k = self.i
        self.i += 1
        if self.pageable:
            x, y = self.ring[k % 2]
            x, y = x.cuda(), y.cuda()
        else:
            if self.next is None:
                self.next = self.fetch(k)
            x, y, ev = self.next
            cur = torch.cuda.current_stream()
            cur.wait_event(ev)
            x.record_stream(cur)
            y.record_stream(cur)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = self.model(x)
            loss = F.cross_entropy(logits.float(), y)
        if self.read_acc:
            self.seen.append((logits.argmax(1) == y).float().mean().item())
        else:
            self.keep.append((logits.argmax(1) == y).float().mean().detach())
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        if self.read_loss:
            self.seen.append(loss.item())
        else:
            self.keep.append(loss.detach())
        if not self.pageable:  # the next batch's copies under this step's compute
            self.next = self.fetch(k + 1)
        del self.keep[:-200], self.seen[:-200]

    def close(self):
        if self.keep:
            torch.stack(self.keep).cpu()


if __name__ == "__main__":
    main("holdout_vit", FORMS, Run, steps=20, warmup=5)
