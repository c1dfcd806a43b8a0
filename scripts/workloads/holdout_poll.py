"""Holdout workload `holdout_poll` (scripts/gpu-holdout.sh): a serving loop that waits for each
batch's results by asking the GPU whether it is done (`event.query()`), as a server does that
keeps its event loop free instead of blocking in a synchronize.

torchvision ResNet-18, bf16 autocast, channels-last, batch 256 of 224x224 images already on the
GPU (4 batches reused), no gradient. Each batch's top-5 classes and probabilities are copied to
pinned memory with non_blocking=True and an event recorded after them; the host post-processes
them in Python (a JSON record per image), as holdout_eval does.

  p      after each batch the host asks `ev.query()` until it is done, sleeping 0.2 ms between
         questions, then post-processes the batch before it launches the next: the GPU waits
         through the polling's lateness and the post-processing (serialization)
  s      the same with no sleep between questions (a spin: hundreds of thousands of questions a
         second, each a hooked call)
  q      as p, asking the stream (`torch.cuda.current_stream().query()`: cudaStreamQuery)
  fixed  the same questions one batch behind: the host launches batch i, then asks about batch
         i-1's event (done, or nearly) and post-processes it while the GPU runs batch i

Truth: step(p), step(s), step(q) each less step(fixed), untraced, in the same process's rounds.
"""
import time

import torch

from holdout_eval import postprocess, shared  # the same model, batches and host work
from scenario_common import Runner, main

FORMS = ["p", "s", "q", "fixed"]
ROWS = [("serialization", ["serialization"], "p", "fixed", "serialization"),
        ("serialization", ["serialization"], "s", "fixed", "serialization"),
        ("serialization", ["serialization"], "q", "fixed", "serialization")]


def wait_by_asking(ev, nap):
    """ev: an event, or a stream (asked whether all its work is done)"""
    while not ev.query():
        if nap:
            time.sleep(nap)


class Run(Runner):
    def __init__(self, form):
        self.behind = form == "fixed"
        self.nap = 0.0 if form == "s" else 0.0002
        self.ask_stream = form == "q"
        self.model, self.xs = shared()
        self.i = 0
        self.out = []
        self.pending = None

    def step(self):
        x = self.xs[self.i % 4]
        self.i += 1
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            top = self.model(x).float().softmax(1).topk(5)
        idx = torch.empty(top.indices.shape, dtype=top.indices.dtype, pin_memory=True)
        prob = torch.empty(top.values.shape, dtype=top.values.dtype, pin_memory=True)
        idx.copy_(top.indices, non_blocking=True)
        prob.copy_(top.values, non_blocking=True)
        ev = torch.cuda.Event()
        ev.record()
        if not self.behind:
            wait_by_asking(torch.cuda.current_stream() if self.ask_stream else ev, self.nap)
            postprocess(idx.tolist(), prob.tolist(), self.out)
            return
        if self.pending:
            pev, pidx, pprob = self.pending
            wait_by_asking(pev, self.nap)
            postprocess(pidx.tolist(), pprob.tolist(), self.out)
        self.pending = (ev, idx, prob)

    def close(self):
        if self.pending:
            pev, pidx, pprob = self.pending
            wait_by_asking(pev, self.nap)
            postprocess(pidx.tolist(), pprob.tolist(), self.out)
            self.pending = None


if __name__ == "__main__":
    main("holdout_poll", FORMS, Run, steps=30, warmup=5)
