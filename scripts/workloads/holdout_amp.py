"""Holdout workload `holdout_amp` (scripts/gpu-holdout.sh): mixed precision's hidden syncs.

A MobileNetV3-Small (torchvision, 100 classes) trained on 128x128 images, batch 64, channels-last,
fp16 autocast, AdamW (foreach, the default), synthetic batches already on the GPU. Written after
the classifier's rules and never tuned on. Each broken form hides a host-device synchronization
that mixed-precision training code commonly carries:

  scaler    torch.amp.GradScaler: scaler.step() reads found_inf with .item() before it runs the
            optimizer (an optimizer without built-in AMP support), so every step the host waits
            for the whole backward pass, then launches the optimizer and the next forward while
            the GPU waits for it
  nancheck  a static loss scale and a guard that skips the step on a non-finite loss
            (`if not torch.isfinite(loss): ...`): the Python branch on a GPU tensor waits for the
            forward pass in the middle of the step
  fixed     the same static loss scale, no guard, the gradients unscaled on the GPU (one foreach
            multiply, as the scaler's unscale is one multi-tensor kernel): no sync
  graph     the fixed step captured whole as a CUDA graph (torch.cuda.graph, AdamW with
            capturable=True, static input buffers the batch is copied into): the usual fix of
            launch overhead, one launch per step
  compiled  the fixed step with the model under torch.compile (default mode: Inductor's fused
            Triton kernels, launched one by one): the other usual fix, fusion

Truth rows (ROWS): step(form) - step(fixed), untraced, in the traced process's own rounds; and
the fixed form's launch overhead, step(fixed) - step(graph).
"""
import torch
import torch.nn.functional as F
import torchvision

from scenario_common import Runner, capture_step, main

B, R, C, S = 64, 128, 100, 1024.0
FORMS = ["scaler", "nancheck", "fixed", "graph", "compiled"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "scaler", "fixed", "serialization"),
    ("serialization", ["serialization"], "nancheck", "fixed", "serialization"),
    ("launch_overhead", ["launch_overhead"], "fixed", "graph", "launch_overhead"),
]
# the compute hint's kernel storm (fusion) against torch.compile: step(fixed) - step(compiled)
HINT_ROWS = [("kernel_storm", "fixed", "compiled")]
_SHARED = []
_GRAPH = {}
_COMPILED = {}


def shared():
    if not _SHARED:
        m = torchvision.models.mobilenet_v3_small(num_classes=C)
        m = m.cuda().to(memory_format=torch.channels_last)
        opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
        g = torch.Generator().manual_seed(11)
        batches = []
        for _ in range(4):
            x = torch.randn(B, 3, R, R, generator=g).cuda().to(memory_format=torch.channels_last)
            y = torch.randint(0, C, (B,), generator=g).cuda()
            batches.append((x, y))
        scaler = torch.amp.GradScaler("cuda", init_scale=S)
        _SHARED.extend([m, opt, batches, scaler])
    return _SHARED


def graphed():
    """The fixed step captured once per process (scenario_common.capture_step), its batch copied
    into static input buffers."""
    if not _GRAPH:
        m, _, batches, _ = shared()
        params = [p for p in m.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=1e-4, capturable=True)
        sx, sy = batches[0][0].clone(), batches[0][1].clone()

        def body():
            with torch.autocast("cuda", dtype=torch.float16, cache_enabled=False):
                loss = F.cross_entropy(m(sx), sy)
            (loss * S).backward()
            torch._foreach_mul_([p.grad for p in params if p.grad is not None], 1.0 / S)
            opt.step()

        _GRAPH.update(graph=capture_step(opt, body), x=sx, y=sy)
    return _GRAPH


def compiled():
    if "model" not in _COMPILED:
        _COMPILED["model"] = torch.compile(shared()[0])
    return _COMPILED["model"]


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model, self.opt, self.batches, self.scaler = shared()
        if form == "compiled":
            self.model = compiled()
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.i = 0
        self.skipped = 0

    def step(self):
        x, y = self.batches[self.i % 4]
        self.i += 1
        if self.form == "graph":
            g = graphed()
            g["x"].copy_(x, non_blocking=True)
            g["y"].copy_(y, non_blocking=True)
            g["graph"].replay()
            return
        self.opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(self.model(x), y)
        if self.form == "scaler":
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
            return
        if self.form == "nancheck" and not torch.isfinite(loss):
            self.skipped += 1
            return
        (loss * S).backward()
        torch._foreach_mul_([p.grad for p in self.params if p.grad is not None], 1.0 / S)
        self.opt.step()


if __name__ == "__main__":
    main("holdout_amp", FORMS, Run, steps=30, warmup=5)
