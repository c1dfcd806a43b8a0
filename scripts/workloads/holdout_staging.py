"""Holdout workload `holdout_staging` (scripts/gpu-holdout.sh): a batch staged through page-locked
memory that the loop allocates and frees itself.

Written in session 38 (with the hooks of cudaHostAlloc and cudaFreeHost, not yet run on the
H200): code that drives the runtime itself for its host buffers (a C++ extension's input
pipeline, a ctypes or CuPy loader) rather than through torch's pinned-memory cache.
torchvision ResNet-18 trained in bf16 autocast, channels-last, batch 96 of 128x128 images, SGD
with momentum (holdout_streams' model and batches: 8 uint8 batches made once). Each step stages
its batch in page-locked memory (cudaHostAlloc, taken from the global scope as a program linked
to the runtime finds it), copies it to the GPU with non_blocking=True, waits for that copy alone
(an event recorded after it: the buffer may be written again or freed), and trains (the labels
come pinned by torch, as in holdout_streams' fixed form). Forms:

  f      the staging buffer allocated at the start of each step and freed (cudaFreeHost) at its
         end, after the step's launches: the CUDA guide lists page-locked memory among the
         operations that synchronize the device, and the free then waits for the whole step
         before the host goes on to the next step's launches
  fixed  two staging buffers allocated once and used in turn (each one's copy waited for by its
         event before it is written again): no allocation or free in the loop
  graph  fixed with its training step (normalize, forward, backward, SGD's step on a static
         batch) captured once as a CUDA graph and replayed (holdout_streams.graphed): what
         launch overhead costs fixed (added in session 40 after GPU run 140, where slack's verdict
         on `f` was launch overhead and no form measured a graph's saving)

Truth rows (ROWS): step(f) - step(fixed), untraced, in the traced process's own rounds: the
free's wait and the allocation's pinning, serialization by slack's rules (a free that
synchronizes, and the allocation after it charged to it: docs/CLASSIFICATION.md rule 6); the
launch overhead a graph saves, step(fixed) - step(graph).
"""
import ctypes

import torch
import torch.nn.functional as F

from holdout_streams import B, R, graphed, shared
from scenario_common import Runner, main

FORMS = ["f", "fixed", "graph"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "f", "fixed", "serialization"),
    ("launch_overhead", ["launch_overhead"], "fixed", "graph", "launch_overhead"),
]
NBYTES = B * 3 * R * R  # a uint8 batch
_RT = []


def runtime():
    """cudaHostAlloc and cudaFreeHost from the global scope (libslack's wrappers where it is
    preloaded, else the runtime torch loaded with its global symbols)"""
    if not _RT:
        torch.zeros(1, device="cuda")
        g = ctypes.CDLL(None)
        if not hasattr(g, "cudaHostAlloc"):
            raise RuntimeError("cudaHostAlloc is not in the process's global scope")
        g.cudaHostAlloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t,
                                    ctypes.c_uint]
        g.cudaFreeHost.argtypes = [ctypes.c_void_p]
        _RT.append(g)
    return _RT[0]


class Pinned:
    """a page-locked buffer of NBYTES and a uint8 batch tensor over it"""

    def __init__(self):
        self.p = ctypes.c_void_p()
        rc = runtime().cudaHostAlloc(ctypes.byref(self.p), NBYTES, 0)
        if rc:
            raise RuntimeError(f"cudaHostAlloc: error {rc}")
        buf = (ctypes.c_uint8 * NBYTES).from_address(self.p.value)
        self.t = torch.frombuffer(buf, dtype=torch.uint8).view(B, 3, R, R)
        self.copied = torch.cuda.Event()

    def free(self):
        del self.t
        rc = runtime().cudaFreeHost(self.p)
        if rc:
            raise RuntimeError(f"cudaFreeHost: error {rc}")


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model, self.opt, self.pageable, self.pinned, self.mean, self.std, _ = shared()
        self.i = 0
        self.bufs = [] if form == "f" else [Pinned(), Pinned()]

    def step(self):
        x = self.pageable[self.i % len(self.pageable)][0]  # the images, made on the host
        y = self.pinned[self.i % len(self.pinned)][1]  # the labels, pinned by torch
        buf = Pinned() if self.form == "f" else self.bufs[self.i % 2]
        self.i += 1
        buf.copied.synchronize()  # its last copy (long done in fixed's turns)
        buf.t.copy_(x)
        if self.form == "graph":  # fixed's batch into the graph's buffers, its step replayed
            g = graphed(self.model, self.mean, self.std)
            g["x"].copy_(buf.t, non_blocking=True)
            buf.copied.record()
            g["y"].copy_(y, non_blocking=True)
            g["graph"].replay()
            return
        xg = buf.t.cuda(non_blocking=True)
        buf.copied.record()
        yg = y.cuda(non_blocking=True)
        xf = ((xg.float() - self.mean) / self.std).contiguous(memory_format=torch.channels_last)
        self.opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(self.model(xf), yg)
        loss.backward()
        self.opt.step()
        if self.form == "f":
            buf.copied.synchronize()  # the copy out of it, not the step: then the free
            buf.free()

    def close(self):
        torch.cuda.synchronize()
        for b in self.bufs:
            b.free()
        self.bufs = []


if __name__ == "__main__":
    main("holdout_staging", FORMS, Run, steps=30, warmup=5)
