"""Holdout workload `holdout_logger` (scripts/gpu-holdout.sh): metrics read in a logging thread.

Written in session 30 as a loop no rule was tuned on: torchvision ResNet-18 trained with bf16
autocast on 4 batches of 128 images (3x160x160) kept on the GPU, SGD with momentum; every step the
loss and the batch's accuracy go to a log line. Forms:

  fg     the main thread reads both with `.item()` after the optimizer step and formats the line
         (the GPU waits while the host reads and then launches the next step)
  bg     the main thread puts the two tensors on a queue.Queue; a logging thread takes them,
         reads them with `.item()` and formats the line (a sync in another thread: torch lets
         the GIL go while it waits, so the main thread keeps launching)
  fixed  no reads: the tensors kept on the GPU, read once at close
  graph  fixed's step (forward, loss, backward, SGD's step, the accuracy) captured once as a
         CUDA graph and replayed on static copies of the batch: what launch overhead costs
         fixed, and so `fg`, which launches fixed's kernels (written in session 42: GPU run
         109's verdict for fg, launch overhead, could not be judged against a graph's saving)

Truth rows (ROWS): step(form) - step(fixed), untraced, in the traced process's own rounds;
the `bg` row's truth says what the logging thread costs (near nothing if it does not hold the
launching thread); fixed's launch overhead step(fixed) - step(graph).
"""
import queue
import threading

import torch
import torch.nn as nn
import torchvision

from scenario_common import Runner, capture_step, main

B, H = 128, 160
FORMS = ["fg", "bg", "fixed", "graph"]
ROWS = [
    ("serialization", ["serialization"], "fg", "fixed", "serialization"),
    ("serialization", ["serialization"], "bg", "fixed", "serialization"),
    ("launch_overhead", ["launch_overhead"], "fixed", "graph", "launch_overhead"),
]
_SHARED = []
_GRAPH = {}


def shared():
    if not _SHARED:
        m = torchvision.models.resnet18(num_classes=100).cuda().to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
        g = torch.Generator(device="cuda").manual_seed(3)
        batches = [(torch.randn(B, 3, H, H, device="cuda", generator=g).to(memory_format=torch.channels_last),
                    torch.randint(0, 100, (B,), device="cuda", generator=g)) for _ in range(4)]
        _SHARED.extend([m, opt, batches])
    return _SHARED


def graphed(model, crit):
    """fixed's step captured once per process: the shared model, an SGD of its own (momentum
    buffers made by the capture's warm-up steps), static batch buffers; the loss and the accuracy
    into static outputs"""
    if not _GRAPH:
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=True)
        x = torch.zeros(B, 3, H, H, device="cuda").to(memory_format=torch.channels_last)
        y = torch.zeros(B, dtype=torch.int64, device="cuda")
        out = {}

        def body():
            with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
                logits = model(x)
                loss = crit(logits, y)
            loss.backward()
            opt.step()
            with torch.no_grad():
                out["metrics"] = torch.stack([loss.detach().float(),
                                              (logits.argmax(1) == y).float().mean()])

        _GRAPH.update(graph=capture_step(opt, body), x=x, y=y, out=out)
    return _GRAPH


def line(step, loss, acc):
    return f"step {step:6d} | loss {loss:8.4f} | acc {100 * acc:6.2f}%"


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model, self.opt, self.batches = shared()
        self.model.train()
        self.crit = nn.CrossEntropyLoss()
        self.i = 0
        self.lines = []
        self.kept = []
        self.q = None
        if form == "bg":
            self.q = queue.Queue()
            self.t = threading.Thread(target=self.logger, name="metrics-logger", daemon=True)
            self.t.start()

    def logger(self):
        while True:
            item = self.q.get()
            if item is None:
                self.q.task_done()
                return
            step, loss, acc = item
            self.lines.append(line(step, loss.item(), acc.item()))
            del self.lines[:-100]
            self.q.task_done()

    def pause(self):
        # the rounds (BENCH_REUSE=1): the thread's backlog is read before the next form's round
        if self.q is not None:
            self.q.join()

    def step(self):
        x, y = self.batches[self.i % 4]
        self.i += 1
        if self.form == "graph":  # the batch into the graph's buffers, fixed's step replayed
            g = graphed(self.model, self.crit)
            g["x"].copy_(x)
            g["y"].copy_(y)
            g["graph"].replay()
            self.kept.append(g["out"]["metrics"].clone())
            del self.kept[:-100]
            return
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = self.model(x)
            loss = self.crit(out, y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        with torch.no_grad():
            acc = (out.argmax(1) == y).float().mean()
        loss = loss.detach()
        if self.form == "fg":
            self.lines.append(line(self.i, loss.item(), acc.item()))
            del self.lines[:-100]
        elif self.form == "bg":
            self.q.put((self.i, loss, acc))
        else:
            self.kept.append(torch.stack([loss.float(), acc]))
            del self.kept[:-100]

    def close(self):
        if self.q is not None:
            self.q.put(None)
            self.t.join()
        if self.kept:
            torch.stack(self.kept).cpu()


if __name__ == "__main__":
    main("holdout_logger", FORMS, Run, steps=30, warmup=5)
