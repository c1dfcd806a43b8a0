"""Holdout workload `holdout_infer` (scripts/gpu-holdout.sh): batch inference whose non_blocking
copies come from pageable memory.

Written in session 33 as a loop no rule was tuned on: torchvision ResNet-50 (no pretrained
weights) scoring batches of 128 images of 224 x 224 (float32, already decoded and normalized on
the host: 77 MB a batch) under torch.inference_mode, bf16 autocast and channels-last; each
batch's top-5 classes stay on the GPU (read once at the end). The host batches come from a pool
of 4 made at start, so no loader runs in the step. Forms:

  n      pageable host batches copied with .cuda(non_blocking=True): the flag asks for an
         asynchronous copy, but from pageable memory the driver stages it through its own pinned
         buffer and the host waits for the copy (behind the GPU's queue), the common mistake
  fixed  the same batches pinned once (tensor.pin_memory()) and copied with non_blocking=True:
         the host queues the copy and goes on

Truth row (ROWS): step(n) - step(fixed), untraced, in the traced process's own rounds
(BENCH_REUSE=1): the copies' time and the host's wait on them (copy + copy stall), which the fix
(pinned memory) removes but for the pinned copy's own time.
"""
import torch
import torchvision

from scenario_common import Runner, main

B, SIDE, POOL = 128, 224, 4
FORMS = ["n", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("copy + copy_stall", ["copy", "copy_stall"], "n", "fixed", "copy_and_copy_stall"),
]
_SHARED = []


def shared():
    """The model and the pageable pool, made once a process (every form reads the same pages)"""
    if not _SHARED:
        m = torchvision.models.resnet50(num_classes=1000).cuda().eval()
        m = m.to(memory_format=torch.channels_last)
        g = torch.Generator().manual_seed(3)
        pool = [torch.randn(B, 3, SIDE, SIDE, generator=g) for _ in range(POOL)]
        _SHARED.extend([m, pool])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        self.model, pool = shared()
        self.pool = [x.pin_memory() for x in pool] if form == "fixed" else pool
        self.k, self.top = 0, []

    def step(self):
        x = self.pool[self.k % POOL]
        self.k += 1
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
            xg = x.cuda(non_blocking=True).to(memory_format=torch.channels_last)
            self.top.append(self.model(xg).topk(5, dim=1).indices)
        del self.top[:-200]

    def close(self):
        if self.top:
            torch.cat(self.top).cpu()


if __name__ == "__main__":
    main("holdout_infer", FORMS, Run, steps=30, warmup=3)
