"""Holdout workload `holdout_streams` (scripts/gpu-holdout.sh): a side-stream prefetcher.

torchvision ResNet-18 trained in bf16 autocast, channels-last, batch 96 of 128x128 images, SGD
with momentum. Each step's batch comes from the host (8 batches made once, uint8 images as a
data loader hands them over) and is copied to the GPU by a prefetcher on its own CUDA stream one
step ahead, the pattern of NVIDIA's data prefetchers, then normalized on the GPU. Written after
the classifier's rules and never tuned on. The forms differ in how the prefetch is joined:

  devsync   the prefetcher waits for its copy with torch.cuda.synchronize() (a common way to be
            "sure" the batch has arrived): the host waits for the whole device, the compute
            stream included, then launches the next step while the GPU waits for it
  pageable  the host batches are not pinned: the copies on the side stream go through a pageable
            staging buffer, and the host stages each one before it can go on
  fixed     pinned host batches, non_blocking copies on the side stream, the compute stream
            waits for the copy by an event (wait_stream), no host wait
  graph     fixed with its training step (normalize, forward, backward, SGD's step on a static
            batch the prefetched one is copied into) captured once as a CUDA graph and replayed:
            what launch overhead costs fixed (session 40: slack's verdict on `pageable` in GPU
            run 59 was launch overhead, and no form measured a graph's saving)

Truth rows (ROWS): step(form) - step(fixed), untraced, in the traced process's own rounds; the
launch overhead a graph saves, step(fixed) - step(graph).
"""
import torch
import torch.nn.functional as F
import torchvision

from scenario_common import Runner, capture_step, main

B, R, C, NB = 96, 128, 100, 8
FORMS = ["devsync", "pageable", "fixed", "graph"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "devsync", "fixed", "serialization"),
    ("copy + copy_stall", ["copy", "copy_stall"], "pageable", "fixed", "copy_and_copy_stall"),
    ("launch_overhead", ["launch_overhead"], "fixed", "graph", "launch_overhead"),
]
_SHARED = []


def shared():
    if not _SHARED:
        m = torchvision.models.resnet18(num_classes=C)
        m = m.cuda().to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
        g = torch.Generator().manual_seed(5)
        xs = [torch.randint(0, 256, (B, 3, R, R), dtype=torch.uint8, generator=g)
              for _ in range(NB)]
        ys = [torch.randint(0, C, (B,), generator=g) for _ in range(NB)]
        pinned = [(x.pin_memory(), y.pin_memory()) for x, y in zip(xs, ys)]
        mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255
        std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255
        _SHARED.extend([m, opt, list(zip(xs, ys)), pinned, mean, std, torch.cuda.Stream()])
    return _SHARED


_GRAPH = {}


def graphed(model, mean, std):
    """fixed's training step captured once per process (the graph forms of this workload and of
    holdout_staging): the shared model, an SGD of its own (momentum buffers made by the capture's
    warm-up steps), static batch buffers on the GPU; captured with the error mode thread_local"""
    if not _GRAPH:
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=True)
        x = torch.zeros(B, 3, R, R, dtype=torch.uint8, device="cuda")
        y = torch.zeros(B, dtype=torch.int64, device="cuda")

        def body():
            xf = ((x.float() - mean) / std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
                loss = F.cross_entropy(model(xf), y)
            loss.backward()
            opt.step()

        _GRAPH.update(graph=capture_step(opt, body, mode="thread_local"), x=x, y=y)
    return _GRAPH


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model, self.opt, self.pageable, self.pinned, self.mean, self.std, self.side = shared()
        self.i = 0
        self.next = self.fetch()

    def fetch(self):
        x, y = (self.pageable if self.form == "pageable" else self.pinned)[self.i % NB]
        self.i += 1
        with torch.cuda.stream(self.side):
            xg = x.cuda(non_blocking=True)
            yg = y.cuda(non_blocking=True)
        if self.form == "devsync":
            torch.cuda.synchronize()
        return xg, yg

    def step(self):
        torch.cuda.current_stream().wait_stream(self.side)
        xg, yg = self.next
        xg.record_stream(torch.cuda.current_stream())
        yg.record_stream(torch.cuda.current_stream())
        self.next = self.fetch()
        if self.form == "graph":  # the batch into the graph's buffers, fixed's step replayed
            g = graphed(self.model, self.mean, self.std)
            g["x"].copy_(xg)
            g["y"].copy_(yg)
            g["graph"].replay()
            return
        x = ((xg.float() - self.mean) / self.std).contiguous(memory_format=torch.channels_last)
        self.opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(self.model(x), yg)
        loss.backward()
        self.opt.step()


if __name__ == "__main__":
    main("holdout_streams", FORMS, Run, steps=30, warmup=5)
