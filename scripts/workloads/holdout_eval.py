"""Holdout workload `holdout_eval` (scripts/gpu-holdout.sh): an inference loop that reads its
results on the host batch by batch.

torchvision ResNet-18, bf16 autocast, channels-last, batch 256 of 224x224 images already on the
GPU (4 batches reused), no gradient. Each batch's top-5 classes and their probabilities are
post-processed in Python (a record per image, JSON-formatted) as a serving or evaluation loop
would.

  post   after each batch the host reads its top-5 (`.cpu()`: blocking device-to-host reads that
         wait for the GPU), then post-processes them before it launches the next batch: the GPU
         waits through the post-processing (serialization)
  fixed  the same post-processing, one batch behind: the top-5 are copied to pinned memory with
         non_blocking=True and an event; the host launches batch i, then waits for batch i-1's
         event (long done) and post-processes it while the GPU runs batch i

Truth: step(post) - step(fixed), untraced, in the traced process's own rounds.
"""
import json

import torch
import torchvision

from scenario_common import Runner, main

B = 256
FORMS = ["post", "fixed"]
ROWS = [("serialization", ["serialization"], "post", "fixed", "serialization")]
_SHARED = []


def shared():
    if not _SHARED:
        m = torchvision.models.resnet18(num_classes=1000).cuda().eval()
        m = m.to(memory_format=torch.channels_last)
        xs = [torch.randn(B, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
              for _ in range(4)]
        _SHARED.extend([m, xs])
    return _SHARED


def postprocess(idx, prob, out):
    for k, (i5, p5) in enumerate(zip(idx, prob)):
        rec = {"image": k, "top": [{"class": int(c), "p": round(float(p), 5)}
                                   for c, p in zip(i5, p5)]}
        rec["confident"] = rec["top"][0]["p"] > 0.5
        out.append(json.dumps(rec))
    del out[:-B]


class Run(Runner):
    def __init__(self, form):
        self.pipelined = form == "fixed"
        self.model, self.xs = shared()
        self.i = 0
        self.out = []
        self.pending = None

    def step(self):
        x = self.xs[self.i % 4]
        self.i += 1
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            top = self.model(x).float().softmax(1).topk(5)
        if not self.pipelined:
            postprocess(top.indices.cpu().tolist(), top.values.cpu().tolist(), self.out)
            return
        idx = torch.empty(top.indices.shape, dtype=top.indices.dtype, pin_memory=True)
        prob = torch.empty(top.values.shape, dtype=top.values.dtype, pin_memory=True)
        idx.copy_(top.indices, non_blocking=True)
        prob.copy_(top.values, non_blocking=True)
        ev = torch.cuda.Event()
        ev.record()
        if self.pending:
            pev, pidx, pprob = self.pending
            pev.synchronize()
            postprocess(pidx.tolist(), pprob.tolist(), self.out)
        self.pending = (ev, idx, prob)

    def close(self):
        if self.pending:
            pev, pidx, pprob = self.pending
            pev.synchronize()
            postprocess(pidx.tolist(), pprob.tolist(), self.out)
            self.pending = None


if __name__ == "__main__":
    main("holdout_eval", FORMS, Run, steps=30, warmup=5)
